// SPDX-License-Identifier: GPL-2.0
/*
 * triage family: the sanitizers.  KASAN (mm/kasan/report.c: "BUG: KASAN:
 * %s in %pS", then "Read of size"; before 4.11 "... in %pS at addr %p" and
 * "... on address %p"), KFENCE (mm/kfence/report.c), KMSAN
 * (mm/kmsan/report.c), KCSAN (kernel/kcsan/report.c: "BUG: KCSAN: %s in %ps
 * / %ps"), UBSAN (lib/ubsan.c: "UBSAN: %s in %s:%d:%d").
 */
#include <string.h>

#include "triage.h"

static const char *const kasan_skip[] = {
	"kernel_fault", "tag_check", "mem_abort", "^el1_", "^el1h_", NULL
};
static const char *const free_skip[] = { "slab_", "kfree", "vunmap", "vfree", NULL };
static const char *const kmsan_skip[] = {
	"alloc_skb", "netlink_ack", "netlink_rcv_skb", "_encrypt$", "^crypto_", "^cipher_",
	"^drbg_", "^rng_", NULL
};
static const char *const ubsan_skip[] = { "ubsan", "overflow", NULL };

/* "<kind> in <func+0x1/0x2>": the kind as %h, the function as the hint */
static int kind_in_func(struct header *h, size_t skip)
{
	struct str s = skip_n(h->at, skip);
	const char *in = find_lit(s, " in ");
	size_t n = in ? (size_t)(in - s.p) : s.n;

	if (!in) {
		const char *on = find_lit(s, " on ");

		if (on)
			n = (size_t)(on - s.p);
	}
	if (!n)
		return 0;
	copy_clean(h->text, sizeof(h->text), s.p, n);
	if (in)
		parse_sym(skip_n(s, (size_t)(in - s.p) + 4), h->hint);
	return 1;
}

static int parse_kasan(struct header *h)
{
	if (!kind_in_func(h, 12))
		return 0;
	/*
	 * Before 4.11 an access with no shadow (null-ptr-deref, user-memory-
	 * or wild-memory-access) was "BUG: KASAN: %s on address %p", with a
	 * bare dump_stack(); syzkaller's title for it names no function.
	 */
	if (!h->hint[0] && find_lit(skip_n(h->at, 12), " on address ")) {
		h->title = "KASAN: %h %a";
		return 1;
	}
	if (strcmp(h->text, "double-free or invalid-free") == 0 ||
	    strcmp(h->text, "double-free") == 0 || strcmp(h->text, "invalid-free") == 0) {
		h->title = "KASAN: invalid-free in %f";
		h->skip_also = free_skip;
	}
	return 1;
}

static int parse_kfence(struct header *h)
{
	return kind_in_func(h, 13);
}

static int parse_kmsan(struct header *h)
{
	return kind_in_func(h, 12);
}

/* KCSAN names both racing functions in its header: "data-race in f / g" */
static int parse_kcsan(struct header *h)
{
	sanitize_reason(h->text, sizeof(h->text), skip_n(h->at, 12));
	return h->text[0] != 0;
}

static int parse_ubsan(struct header *h)
{
	if (!kind_in_func(h, 7))
		return 0;
	if (strcmp(h->text, "Undefined behaviour") == 0)
		strcpy(h->text, "undefined-behaviour");
	h->hint[0] = 0;		/* " in " names a file here */
	return 1;
}

/* KASAN's access: "Read of size 8 at addr ...", "Write at addr ..." (tag-based) */
static int kasan_body(struct report *r, struct str m)
{
	if (r->access[0] || !m.n || (m.p[0] != 'R' && m.p[0] != 'W'))
		return !r->access[0];
	if (has_prefix(m, "Read of size") || has_prefix(m, "Read at addr"))
		strcpy(r->access, "Read");
	else if (has_prefix(m, "Write of size") || has_prefix(m, "Write at addr"))
		strcpy(r->access, "Write");
	return !r->access[0];
}

static const char *const kasan_starts[] = { "Read ", "Write ", NULL };

const struct row fam_sanitizers[] = {
	{ .anchor = "BUG: KASAN: ", .title = "KASAN: %h %a in %f", .from = FROM_STACK,
	  .parse = parse_kasan, .body = kasan_body, .body_starts = kasan_starts,
	  .flags = F_NEEDS_FUNC | F_RULE_END,
	  .skip = SK_BASE, .skip_also = kasan_skip, .hdr_max = 30, .tail = 120 },
	{ .anchor = "BUG: KFENCE: ", .title = "KFENCE: %h in %f", .from = FROM_STACK,
	  .parse = parse_kfence, .flags = F_NEEDS_FUNC | F_RULE_END | F_BARE_TRACE,
	  .skip = SK_BASE, .hdr_max = 30, .tail = 60 },
	{ .anchor = "BUG: KMSAN: ", .title = "KMSAN: %h in %f", .from = FROM_STACK,
	  .parse = parse_kmsan, .flags = F_NEEDS_FUNC | F_RULE_END | F_BARE_TRACE,
	  .skip = SK_BASE, .skip_also = kmsan_skip, .hdr_max = 30, .tail = 60 },
	{ .anchor = "BUG: KCSAN: ", .title = "KCSAN: %h", .from = FROM_HEADER,
	  .parse = parse_kcsan, .flags = F_RULE_END | F_BARE_TRACE, .hdr_max = 30,
	  .tail = 40 },
	{ .anchor = "UBSAN: ", .title = "UBSAN: %h in %f", .from = FROM_STACK,
	  .parse = parse_ubsan, .flags = F_NEEDS_FUNC | F_RULE_END, .skip = SK_BASE,
	  .skip_also = ubsan_skip, .hdr_max = 30, .tail = 10 },
	{ NULL },
};
