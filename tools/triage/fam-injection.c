// SPDX-License-Identifier: GPL-2.0
/*
 * triage family: failures the rig provokes on purpose.  warn_alloc()'s
 * "page allocation failure" and "vmalloc error" (mm/page_alloc.c,
 * mm/vmalloc.c), the vmemmap "vmemmap alloc failure" (mm/sparse-vmemmap.c),
 * and fault injection's verbose "FAULT_INJECTION: forcing a failure"
 * (lib/fault-inject.c): explained while an injector is armed, bugs
 * otherwise.  Also the rig's own "rig: FAIL <what>: ..." (a load lost data).
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

#define ALLOC(a, t) { .anchor = a, .title = t, .from = FROM_STACK, \
	.flags = F_NEEDS_FUNC | F_EXCUSABLE | F_PAGES_END, .skip = SK_BASE, \
	.hdr_max = 12, .tail = 40 }

const struct row fam_injection[] = {
	ALLOC("page allocation failure: order:", "page allocation failure in %f"),
	ALLOC("vmemmap alloc failure: order:", "vmemmap alloc failure in %f"),
	ALLOC("vmalloc error: size", "vmalloc error in %f"),
	{ .anchor = "FAULT_INJECTION: forcing a failure",
	  .title = "FAULT_INJECTION: forcing a failure in %f", .from = FROM_STACK,
	  .flags = F_EXCUSABLE, .skip = SK_BASE, .hdr_max = 6 },
	{ .anchor = "rig: FAIL ", .title = "rig: %h", .parse = parse_rig, .flags = F_NO_TRACE },
	{ NULL },
};
