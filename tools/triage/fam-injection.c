// SPDX-License-Identifier: GPL-2.0
/*
 * triage family: failures the rig provokes on purpose.  warn_alloc()'s
 * "page allocation failure" and "vmalloc error" (mm/page_alloc.c,
 * mm/vmalloc.c), the vmemmap "vmemmap alloc failure" (mm/sparse-vmemmap.c)
 * and SLUB's "Unable to allocate memory" (mm/slub.c, slab_out_of_memory):
 * explained while an injector is armed or right after an injected failure
 * of the same task, bugs otherwise.  Fault injection's verbose
 * "FAULT_INJECTION: forcing a failure" (lib/fault-inject.c, fail_dump) is
 * no report at all: its stack names where the failure was injected, which
 * the output lists apart.  Also the rig's own "rig: FAIL <what>: ..." (a
 * load lost data).
 */
#include <string.h>

#include "triage.h"

/* "rig: FAIL <what>: <details>" -> "rig: <what>" */
static int parse_rig(struct header *h)
{
	struct str w = skip_n(h->at, 10);
	const char *c = memchr(w.p, ':', w.n);

	copy_clean(h->text, sizeof(h->text) - 8, w.p, c ? (size_t)(c - w.p) : w.n);
	return 1;
}

/* fail_dump: "name failslab, interval 1, probability 0, space 0, times 1" */
static int injection_body(struct report *r, struct str m)
{
	size_t i = 0;

	if (r->fault[0] || !has_prefix(m, "name "))
		return !r->fault[0];
	m = skip_n(m, 5);
	while (i < m.n && m.p[i] != ',' && m.p[i] != ' ')
		i++;
	/* no debugfs dentry yet: the stack names it (fault_from_frame()) */
	if (i == 6 && !memcmp(m.p, "(null)", 6))
		return 1;
	copy_clean(r->fault, sizeof(r->fault), m.p, i);
	return !r->fault[0];
}

static const char *const injection_starts[] = { "name ", NULL };

#define ALLOC(a, t) { .anchor = a, .title = t, .from = FROM_STACK, \
	.flags = F_NEEDS_FUNC | F_EXCUSABLE | F_PAGES_END, .skip = SK_BASE, \
	.hdr_max = 12, .tail = 40 }

const struct row fam_injection[] = {
	ALLOC("page allocation failure: order:", "page allocation failure in %f"),
	ALLOC("vmemmap alloc failure: order:", "vmemmap alloc failure in %f"),
	ALLOC("vmalloc error: size", "vmalloc error in %f"),
	/* printed without a stack trace: slab_out_of_memory() */
	{ .anchor = "SLUB: Unable to allocate memory on node",
	  .title = "SLUB: Unable to allocate memory", .flags = F_EXCUSABLE | F_NO_TRACE },
	{ .anchor = "FAULT_INJECTION: forcing a failure",
	  .title = "FAULT_INJECTION: forcing a failure in %f", .from = FROM_STACK,
	  .flags = F_INJECTION, .skip = SK_BASE, .body = injection_body,
	  .body_starts = injection_starts, .hdr_max = 6 },
	{ .anchor = "rig: FAIL ", .title = "rig: %h", .parse = parse_rig, .flags = F_NO_TRACE },
	{ NULL },
};
