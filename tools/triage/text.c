// SPDX-License-Identifier: GPL-2.0
/*
 * triage core: text helpers shared by the core and the families (length-
 * aware strings, cleaning, the title words of a free-text header).
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "triage.h"

const unsigned char ident_bytes[256] = {
	['a' ... 'z'] = 1, ['A' ... 'Z'] = 1, ['0' ... '9'] = 1, ['_'] = 1, ['.'] = 2, ['$'] = 1,
};

void die_io(const char *fmt, ...)
{
	va_list ap;

	fputs("triage: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n);

	if (!p)
		die_io("out of memory");
	return p;
}

/* Copy at most cap-1 bytes, replacing anything unprintable. */
void copy_clean(char *dst, size_t cap, const char *src, size_t n)
{
	size_t i;

	if (n >= cap)
		n = cap - 1;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)src[i];

		dst[i] = (c < 0x20 || c >= 0x7f) ? '?' : (char)c;
	}
	dst[n] = 0;
}

/* An address or a hash: six or more hex digits and nothing else. */
static int hex_word(struct str w)
{
	size_t i, n = w.n;

	while (n && (w.p[n - 1] == ',' || w.p[n - 1] == ':' || w.p[n - 1] == '.'))
		n--;
	if (n < 6)
		return 0;
	for (i = 0; i < n; i++)
		if (!is_hex((unsigned char)w.p[i]))
			return 0;
	return 1;
}

/*
 * Free text from a header as a stable title fragment: stop at the first
 * word that carries data (addresses, numbers, key:value, key=value, a path after "at",
 * "in process", "on CPU#"), drop bracketed words.
 */
void header_words(char *dst, size_t cap, struct str s)
{
	size_t n = 0;

	dst[0] = 0;
	while (s.n) {
		size_t w = 0, keep;
		int stop_after = 0;

		s = skip_ws(s);
		if (!s.n)
			break;
		while (w < s.n && s.p[w] != ' ' && s.p[w] != '\t')
			w++;
		struct str word = { s.p, w };

		if (word.p[0] == '[' || word.p[0] == '(') {
			s = skip_n(s, w);
			continue;
		}
		if ((word.p[0] >= '0' && word.p[0] <= '9') || word.p[0] == '-' ||
		    word.p[0] == '#' || has_prefix(word, "CPU#") || memchr(word.p, '=', w) ||
		    hex_word(word))
			break;
		if ((w == 2 && memcmp(word.p, "at", 2) == 0) ||
		    (w == 2 && memcmp(word.p, "on", 2) == 0 && s.n > 3 &&
		     has_prefix(skip_ws(skip_n(s, 2)), "CPU")))
			break;
		if (w == 2 && memcmp(word.p, "in", 2) == 0 &&
		    has_prefix(skip_ws(skip_n(s, 2)), "process"))
			break;
		keep = w;
		const char *colon = memchr(word.p, ':', w);

		if (colon && colon != word.p + w - 1)
			break;
		if (colon) {
			keep = w - 1;
			stop_after = 1;
		}
		while (keep && (word.p[keep - 1] == ',' || word.p[keep - 1] == '!' ||
				word.p[keep - 1] == '.' || word.p[keep - 1] == ';')) {
			keep--;
			stop_after = 1;
		}
		if (keep && n + keep + 2 < cap) {
			if (n)
				dst[n++] = ' ';
			copy_clean(dst + n, cap - n, word.p, keep);
			n += keep;
		}
		s = skip_n(s, w);
		if (stop_after)
			break;
	}
}

/* Free text (panic reasons): drop offsets, addresses and exit codes. */
void sanitize_reason(char *dst, size_t cap, struct str s)
{
	size_t n = 0, i = 0;
	const char *ec = find_lit(s, " exitcode=");

	if (ec)
		s.n = (size_t)(ec - s.p);
	while (s.n && (s.p[s.n - 1] == ' ' || s.p[s.n - 1] == '\t'))
		s.n--;
	while (i < s.n && n + 2 < cap) {
		char c = s.p[i];

		if (c == '+' && i + 2 < s.n && s.p[i + 1] == '0' && s.p[i + 2] == 'x') {
			i++;
			while (i < s.n && (is_hex((unsigned char)s.p[i]) || s.p[i] == 'x' ||
					   s.p[i] == '/'))
				i++;
			continue;
		}
		if (c == '0' && i + 1 < s.n && s.p[i + 1] == 'x') {
			i += 2;
			while (i < s.n && is_hex((unsigned char)s.p[i]))
				i++;
			dst[n++] = 'X';
			continue;
		}
		if (is_hex((unsigned char)c) && (i == 0 || !is_ident((unsigned char)s.p[i - 1]))) {
			size_t j = i;

			while (j < s.n && is_hex((unsigned char)s.p[j]))
				j++;
			if (j - i >= 8 && (j == s.n || !is_ident((unsigned char)s.p[j]))) {
				dst[n++] = 'X';
				i = j;
				continue;
			}
		}
		dst[n++] = ((unsigned char)c < 0x20 || (unsigned char)c >= 0x7f) ? '?' : c;
		i++;
	}
	dst[n] = 0;
}

