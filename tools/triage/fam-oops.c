// SPDX-License-Identifier: GPL-2.0
/*
 * triage family: the kernel's own faults.  Page faults and NULL
 * dereferences (x86 "BUG: ...", arm/arm64 "Unable to handle kernel ..."),
 * general protection faults (also the newer "Oops: general protection
 * fault"), BUG() ("kernel BUG at"), die() lines ("Oops:", "invalid opcode:",
 * arm64 "Internal error:"), and any other "BUG:".  Formats: arch/x86/mm/fault.c
 * (show_fault_oops), arch/x86/kernel/traps.c and dumpstack.c (die),
 * arch/arm64/mm/fault.c (die_kernel_fault), arch/arm64/kernel/traps.c.
 * 32-bit arm's "Unhandled fault:" (arch/arm/mm/fault.c, do_DataAbort) and
 * "Alignment trap: not handling instruction" (arch/arm/mm/alignment.c) are
 * printed for user tasks too, which only get a signal: they name a report
 * only once die()'s "Internal error:" follows.
 */
#include <string.h>

#include "triage.h"

/* After a die() string: " XXXX [#N]" (x86 prints 4 hex digits, arm64 16, arm %x). */
static int die_code(struct str s)
{
	size_t i = 0;

	if (!s.n || s.p[0] != ' ')
		return 0;
	s = skip_n(s, 1);
	while (i < s.n && is_hex((unsigned char)s.p[i]))
		i++;
	return i >= 1 && has_prefix(skip_n(s, i), " [#");
}

/* "Oops: 0002 [#1]", "invalid opcode: 0000 [#1]", ...: the code follows the anchor */
static int parse_die(struct header *h)
{
	const char *c = memchr(h->at.p, ':', h->at.n);

	return c && die_code(skip_n(h->at, (size_t)(c - h->at.p) + 1));
}

/* arm64: "Internal error: Oops: 0000000096000005 [#1] PREEMPT SMP" */
static int parse_internal(struct header *h)
{
	struct str s = skip_n(h->at, 16);
	const char *sq = find_lit(s, " [#");

	if (!sq)
		return 0;
	s.n = (size_t)(sq - s.p) + 3;
	for (const char *c = s.p; c < sq; c++)
		if (*c == ':' && die_code(skip_n(s, (size_t)(c - s.p) + 1)))
			return 1;
	return 0;
}

/*
 * "general protection fault: 0000 [#1]", "general protection fault, probably
 * for non-canonical address 0x...: 0000 [#1]"; user space's "traps: sh[1]
 * general protection fault ip:... error:0 in libc.so" is not one.
 */
static int parse_gpf(struct header *h)
{
	struct str s = skip_n(h->at, 24);

	if (has_prefix(s, " ip:") || (find_lit(s, " error:") && find_lit(s, " in ")))
		return 0;
	return has_prefix(s, ":") || has_prefix(s, ", ");
}

/* "kernel BUG at lib/list_debug.c:62!" */
static int parse_kbug(struct header *h)
{
	struct str file = skip_n(h->at, 14);

	if (has_prefix(file, "lib/list_debug.c")) {
		h->title = "BUG: corrupted list in %f";
	} else if (has_prefix(file, "mm/usercopy.c")) {
		static const char *const usercopy[] = { "usercopy", "__check", NULL };

		h->title = "BUG: bad usercopy in %f";
		h->skip_also = usercopy;
	}
	return 1;
}

/* Any other "BUG: <what>": the words before the first number or address. */
static int parse_bug(struct header *h)
{
	header_words(h->text, sizeof(h->text), skip_n(h->at, 5));
	return h->text[0] != 0;
}

static const char *const skb_helpers[] = { "^skb_", NULL };

#define FAULT(a, t) { .anchor = a, .title = t, .from = FROM_STACK, \
	.flags = F_NEEDS_FUNC | F_END_MARK, .skip = SK_BASE, .group = G_FAULT, \
	.hdr_max = 60, .tail = 30 }
#define DIE(a, t) { .anchor = a, .title = t, .from = FROM_STACK, .parse = parse_die, \
	.flags = F_NEEDS_FUNC | F_END_MARK, .skip = SK_BASE, .group = G_DIE, \
	.follows = G_FAULT | G_KBUG | G_LIST | G_GPF, .hdr_max = 60, .tail = 30 }

const struct row fam_oops[] = {
	FAULT("BUG: kernel NULL pointer dereference",
	      "BUG: unable to handle kernel NULL pointer dereference in %f"),
	FAULT("BUG: unable to handle kernel NULL pointer dereference",
	      "BUG: unable to handle kernel NULL pointer dereference in %f"),
	FAULT("BUG: Kernel NULL pointer dereference",
	      "BUG: unable to handle kernel NULL pointer dereference in %f"),
	FAULT("Unable to handle kernel NULL pointer dereference",
	      "BUG: unable to handle kernel NULL pointer dereference in %f"),
	FAULT("BUG: unable to handle page fault for address",
	      "BUG: unable to handle kernel paging request in %f"),
	FAULT("BUG: unable to handle kernel paging request",
	      "BUG: unable to handle kernel paging request in %f"),
	FAULT("BUG: Unable to handle kernel data access",
	      "BUG: unable to handle kernel paging request in %f"),
	FAULT("Unable to handle kernel paging request",
	      "BUG: unable to handle kernel paging request in %f"),
	FAULT("Unable to handle kernel access to user memory",
	      "BUG: unable to handle kernel access to user memory in %f"),
	{ .anchor = "general protection fault", .title = "general protection fault in %f",
	  .from = FROM_STACK, .parse = parse_gpf, .flags = F_NEEDS_FUNC | F_END_MARK,
	  .skip = SK_BASE, .group = G_GPF, .hdr_max = 60, .tail = 30 },
	{ .anchor = "kernel BUG at ", .title = "kernel BUG in %f", .from = FROM_STACK,
	  .parse = parse_kbug, .flags = F_NEEDS_FUNC | F_END_MARK, .skip = SK_BASE,
	  .skip_also = skb_helpers, .group = G_KBUG, .follows = G_LIST,
	  .hdr_max = 60, .tail = 30 },
	DIE("Oops: ", "Oops in %f"),
	DIE("invalid opcode: ", "invalid opcode in %f"),
	DIE("divide error: ", "divide error in %f"),
	DIE("divide_error: ", "divide error in %f"),
	DIE("stack segment: ", "stack segment fault in %f"),
	DIE("int3: ", "int3 in %f"),
	{ .anchor = "Internal error: ", .title = "Internal error in %f", .from = FROM_STACK,
	  .parse = parse_internal, .flags = F_NEEDS_FUNC | F_END_MARK, .skip = SK_BASE,
	  .group = G_DIE, .follows = G_FAULT | G_KBUG | G_LIST, .hdr_max = 60, .tail = 30 },
	/* titled pending rows: the "Internal error:" that confirms them brings the stack */
	{ .anchor = "Unhandled fault: ", .title = "Unhandled fault in %f", .flags = F_PENDING,
	  .group = G_FAULT, .hdr_max = 8 },
	{ .anchor = "Alignment trap: not handling instruction", .title = "Alignment trap in %f",
	  .flags = F_PENDING, .group = G_FAULT, .hdr_max = 12 },
	{ .anchor = "BUG: stack guard page was hit at",
	  .title = "BUG: stack guard page was hit in %f", .from = FROM_STALL,
	  .flags = F_NEEDS_FUNC | F_END_MARK, .skip = SK_BASE, .hdr_max = 60, .tail = 30 },
	{ .anchor = "BUG: ", .title = "BUG: %h in %f", .from = FROM_STACK, .parse = parse_bug,
	  .flags = F_GENERIC, .skip = SK_BASE, .hdr_max = 60, .tail = 20 },
	{ NULL },
};
