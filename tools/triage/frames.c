// SPDX-License-Identifier: GPL-2.0
/*
 * triage core: stack frames.  Parses frame and PC lines of x86 (RIP:, the
 * old IP:), arm64 (pc :) and arm ("(f) from (g)") traces; skip.c says
 * which of them never get the blame.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "triage.h"

/*
 * "name+0xOFF[/0xSIZE]" at s; *name is the name without compiler suffixes
 * (.isra.0, .constprop.0, .part.0, .cold).  Returns 1 on success.
 */
int sym_span(struct str s, struct str *name)
{
	size_t i = 0, end = 0;

	if (!s.n || !is_ident((unsigned char)s.p[0]) ||
	    (s.p[0] >= '0' && s.p[0] <= '9') || s.p[0] == '.')
		return 0;
	/* up to the first '.', then the suffix: no test for '.' on every byte */
	while (i < s.n && ident_bytes[(unsigned char)s.p[i]] == 1)
		i++;
	if (i < s.n && s.p[i] == '.') {
		end = i;
		while (i < s.n && is_ident((unsigned char)s.p[i]))
			i++;
	}
	if (i + 3 > s.n || s.p[i] != '+' || s.p[i + 1] != '0' || s.p[i + 2] != 'x')
		return 0;
	if (!end)
		end = i;
	name->p = s.p;
	name->n = end < FN_LEN - 1 ? end : FN_LEN - 1;
	return 1;
}

int parse_sym(struct str s, char *out)
{
	struct str name;

	if (!sym_span(s, &name))
		return 0;
	copy_clean(out, FN_LEN, name.p, name.n);
	return 1;
}

/* arm: "[<c0101234>] (func) from [<c0105678>] (caller+0x10/0x14)" -> func */
static int arm_frame(struct str s, struct str *fn)
{
	size_t i = 1;

	if (!s.n || s.p[0] != '(')
		return 0;
	while (i < s.n && is_ident((unsigned char)s.p[i]))
		i++;
	if (i >= s.n || s.p[i] != ')' || i == 1 || !find_lit(skip_n(s, i), ") from "))
		return 0;
	fn->p = s.p + 1;
	fn->n = i - 1;
	for (size_t k = 0; k < fn->n; k++)
		if (fn->p[k] == '.') {
			fn->n = k;
			break;
		}
	return 1;
}

/*
 * Frames without an offset: arm's " func from caller+0x1/0x2" and a
 * symbolizer's inlined " func path/file.c:12 [inline]".
 */
static int plain_frame(struct str s, struct str *fn)
{
	size_t i = 0;

	while (i < s.n && is_ident((unsigned char)s.p[i]) && s.p[i] != '.')
		i++;
	if (!i || i >= s.n || s.p[i] != ' ' || (s.p[0] >= '0' && s.p[0] <= '9'))
		return 0;
	if (!has_prefix(skip_n(s, i), " from ") &&
	    !(s.n > 9 && memcmp(s.p + s.n - 9, " [inline]", 9) == 0))
		return 0;
	fn->p = s.p;
	fn->n = i < FN_LEN - 1 ? i : FN_LEN - 1;
	return 1;
}

/*
 * A frame line: " ? func+0x1/0x2", "  [<ffffffff81000000>] func+0x1/0x2 [mod]",
 * arm's "(func) from" and "func from".  *unreliable for "? " frames and bare
 * addresses.
 */
int parse_frame(struct str s, struct str *fn, int *unreliable)
{
	s = skip_ws(s);
	*unreliable = 0;
	while (has_prefix(s, "[<")) {
		const char *e = find_lit(s, ">]");

		if (!e)
			return 0;
		s = skip_ws(skip_n(s, (size_t)(e - s.p) + 2));
	}
	if (has_prefix(s, "? ")) {
		*unreliable = 1;
		s = skip_n(s, 2);
	}
	if (has_prefix(s, "0x") && s.n > 2 && is_hex((unsigned char)s.p[2])) {
		/* no symbol (freed module init code): a frame nobody can blame */
		*unreliable = 1;
		fn->p = s.p;
		fn->n = 0;
		return 1;
	}
	return sym_span(s, fn) || arm_frame(s, fn) || plain_frame(s, fn);
}

/*
 * The faulting PC: x86 "RIP: 0010:func+0x1/0x2" and "RIP: 0010:[<ffff>] func",
 * the old "IP: [<ffff>] func+0x1/0x2" and "IP: func+0x1", i386 "EIP:", arm64
 * "pc : func+0x1", arm "PC is at func+0x1", riscv "epc : ", powerpc "NIP
 * [c000] func+0x1".  User PCs ("0033:0x4012") give 0.
 */
int parse_pc_line(struct str s, struct str *fn)
{
	const char *c;

	s = skip_ws(s);
	if (has_prefix(s, "RIP: ") || has_prefix(s, "EIP: ") || has_prefix(s, "pc : ") ||
	    has_prefix(s, "epc : "))
		s = skip_n(s, s.p[0] == 'e' ? 6 : 5);
	else if (has_prefix(s, "IP: "))
		s = skip_n(s, 4);
	else if (has_prefix(s, "NIP ") || has_prefix(s, "NIP:") || has_prefix(s, "PC is at "))
		s = skip_ws(skip_n(s, s.p[0] == 'N' ? 4 : 9));
	else
		return 0;
	s = skip_ws(s);
	c = memchr(s.p, ':', s.n < 8 ? s.n : 8);
	if (c && c > s.p && s.p[0] >= '0' && s.p[0] <= '9')
		s = skip_n(s, (size_t)(c - s.p) + 1);
	while (has_prefix(s, "[<") || (has_prefix(s, "[") && s.n > 2 && is_hex((unsigned char)s.p[1]))) {
		const char *e = memchr(s.p, ']', s.n);

		if (!e)
			return 0;
		s = skip_ws(skip_n(s, (size_t)(e - s.p) + 1));
	}
	return sym_span(s, fn);
}
