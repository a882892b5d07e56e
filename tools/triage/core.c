// SPDX-License-Identifier: GPL-2.0
/*
 * triage core: one console line at a time.  Strips the printk prefixes,
 * follows the rig's markers, finds report headers with the family table
 * (families.c), follows each report's trace to the function its row blames,
 * and counts the titles.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "triage.h"

#define REPORT_BYTES	(64u << 10)	/* lines kept per report */
#define REPORT_LINES	800

struct options opt;
int keep_text;

/* ---- small helpers ------------------------------------------------------- */

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

struct str skip_n(struct str s, size_t k)
{
	if (k > s.n)
		k = s.n;
	s.p += k;
	s.n -= k;
	return s;
}

struct str skip_ws(struct str s)
{
	while (s.n && (*s.p == ' ' || *s.p == '\t'))
		s = skip_n(s, 1);
	return s;
}

const char *find_lit(struct str s, const char *lit)
{
	return memmem(s.p, s.n, lit, strlen(lit));
}

int is_ident(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '$';
}

int is_hex(int c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
	       (c >= 'A' && c <= 'F');
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

/*
 * Free text from a header as a stable title fragment: stop at the first
 * word that carries data (addresses, numbers, key:value, a path after "at",
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
		    word.p[0] == '#' || has_prefix(word, "CPU#"))
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

static long num_after(struct str s, const char *lit)
{
	const char *p = find_lit(s, lit);
	long v = 0;

	if (!p)
		return -1;
	p += strlen(lit);
	if (p >= s.p + s.n || *p < '0' || *p > '9')
		return -1;
	while (p < s.p + s.n && *p >= '0' && *p <= '9' && v < 100000000)
		v = v * 10 + (*p++ - '0');
	return v;
}

/* ---- the header table, indexed for matching ------------------------------ */

/*
 * Each anchor is found by two of its bytes, one of them rare in console text
 * (':', '!', '>' or '#'): a SIMD pass finds the rare bytes of a line, and only
 * there a bitmap of the key pairs is read, so ordinary text costs a few
 * instructions per 16 bytes.  The anchors with no rare byte ("kernel BUG
 * at", "general protection fault", "list_add corruption", ...) are looked
 * for where a message starts and after a rare byte and a space ("Oops: ",
 * "kmemleak: ", a shell prompt's "# ").
 */
struct anchor_ref {
	const struct row *row;
	unsigned short len;	/* of the anchor */
	unsigned char key_off;	/* where its key pair is */
};

#define MAX_ANCHORS 256
static struct anchor_ref anchor_refs[MAX_ANCHORS];
static unsigned char pair_first[65536];		/* 1 + index of a list head, 0: none */
static uint64_t pair_bits[65536 / 64];
static unsigned char anchor_next[MAX_ANCHORS];	/* 1 + next with the same key pair */
static unsigned nanchors;
static unsigned char start_first[256];		/* anchors with no rare byte, by first byte */

static int is_rare(unsigned char c)
{
	return c == ':' || c == '!' || c == '>' || c == '#';
}

/* A key pair must hold a rare byte; one with a capital or '_' is seldom seen. */
static int pair_score(unsigned char a, unsigned char b)
{
	int sc = 0;

	if (!is_rare(a) && !is_rare(b))
		return 0;
	if ((a >= 'A' && a <= 'Z') || (b >= 'A' && b <= 'Z') || a == '_' || b == '_')
		sc += 4;
	if (a != ' ' && b != ' ')
		sc += 2;
	return sc + 1;
}

static void index_rows(void)
{
	const struct family *f;
	const struct row *r;

	for (f = families; f->name; f++) {
		for (r = f->rows; r->anchor; r++) {
			size_t l = strlen(r->anchor), i, best = 0;
			int best_score = 0;
			unsigned key;

			if (l < 2 || l > 255 || nanchors >= MAX_ANCHORS)
				die_io("bad header table at '%s'", r->anchor);
			for (i = 0; i + 1 < l; i++) {
				int sc = pair_score((unsigned char)r->anchor[i],
						    (unsigned char)r->anchor[i + 1]);

				if (sc > best_score) {
					best_score = sc;
					best = i;
				}
			}
			anchor_refs[nanchors] = (struct anchor_ref){ r, (unsigned short)l,
								   (unsigned char)best };
			if (!best_score) {
				unsigned char c0 = (unsigned char)r->anchor[0];

				anchor_next[nanchors] = start_first[c0];
				start_first[c0] = (unsigned char)(nanchors + 1);
			} else {
				key = (unsigned char)r->anchor[best] |
				      (unsigned)(unsigned char)r->anchor[best + 1] << 8;
				anchor_next[nanchors] = pair_first[key];
				pair_first[key] = (unsigned char)(nanchors + 1);
				pair_bits[key >> 6] |= UINT64_C(1) << (key & 63);
			}
			nanchors++;
		}
	}
}

/* Bit i set when p[i] is a rare byte, for the n <= 16 bytes at p. */
static inline unsigned rare_mask(const char *p, size_t n)
{
	unsigned m = 0;
#ifdef __SSE2__
	__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
	__m128i e = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(':')),
					      _mm_cmpeq_epi8(v, _mm_set1_epi8('!'))),
				 _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('>')),
					      _mm_cmpeq_epi8(v, _mm_set1_epi8('#'))));

	m = (unsigned)_mm_movemask_epi8(e);
#else
	for (size_t i = 0; i < 16; i++)
		m |= (unsigned)is_rare((unsigned char)p[i]) << i;
#endif
	return n < 16 ? m & ((1u << n) - 1) : m;
}

struct candidate {
	size_t start;
	const struct anchor_ref *a;
};

static inline int key_pair(struct str m, size_t i)
{
	unsigned key = (unsigned char)m.p[i] | (unsigned)(unsigned char)m.p[i + 1] << 8;

	return (pair_bits[key >> 6] >> (key & 63)) & 1;
}

static void try_pair(struct str m, size_t i, struct candidate *c, unsigned *nc)
{
	unsigned key = (unsigned char)m.p[i] | (unsigned)(unsigned char)m.p[i + 1] << 8;
	unsigned j;

	for (j = pair_first[key]; j; j = anchor_next[j - 1]) {
		const struct anchor_ref *a = &anchor_refs[j - 1];
		size_t s = i - a->key_off;

		if (i < a->key_off || a->len > m.n - s || m.p[s] != a->row->anchor[0] ||
		    memcmp(m.p + s, a->row->anchor, a->len) != 0 || *nc == 16)
			continue;
		c[(*nc)++] = (struct candidate){ s, a };
	}
}

static void try_start(struct str m, size_t s, struct candidate *c, unsigned *nc)
{
	unsigned j;

	if (s >= m.n)
		return;
	for (j = start_first[(unsigned char)m.p[s]]; j && *nc < 16; j = anchor_next[j - 1]) {
		const struct anchor_ref *a = &anchor_refs[j - 1];

		if (a->len <= m.n - s && memcmp(m.p + s, a->row->anchor, a->len) == 0)
			c[(*nc)++] = (struct candidate){ s, a };
	}
}

static int cmp_candidate(const void *x, const void *y)
{
	const struct candidate *a = x, *b = y;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return (int)b->a->len - (int)a->a->len;
}

/*
 * The first header in the message, wherever it starts (console lines are
 * often glued to other output): the leftmost anchor, the longest there; a
 * row's parser may still say no, and a catch-all row gives way to any other
 * header on the line.  The message may be read up to 15 bytes past its end
 * (the input buffer has room).
 */
static const struct row *match_header(struct str m, struct header *h)
{
	struct candidate c[16];
	unsigned nc = 0, k;
	const struct row *fallback = NULL;
	struct header fh;
	size_t blk;

	if (m.n < 2)
		return NULL;
	for (blk = 0; blk < m.n; blk += 16) {
		unsigned mask = rare_mask(m.p + blk, m.n - blk);

		while (mask) {
			size_t i = blk + (size_t)__builtin_ctz(mask);

			mask &= mask - 1;
			if (i > 0 && key_pair(m, i - 1) && !is_rare((unsigned char)m.p[i - 1]))
				try_pair(m, i - 1, c, &nc);
			if (i + 1 < m.n && key_pair(m, i))
				try_pair(m, i, c, &nc);
			if (i + 2 < m.n && m.p[i + 1] == ' ' && start_first[(unsigned char)m.p[i + 2]])
				try_start(m, i + 2, c, &nc);
		}
	}
	try_start(m, 0, c, &nc);
	if (!nc)
		return NULL;
	if (nc > 1)
		qsort(c, nc, sizeof(c[0]), cmp_candidate);
	for (k = 0; k < nc; k++) {
		const struct row *r = c[k].a->row;

		h->msg = m;
		h->at = skip_n(m, c[k].start);
		h->text[0] = 0;
		h->hint[0] = 0;
		h->title = NULL;
		h->skip_also = NULL;
		h->cpu = h->pid = -1;
		h->corrupted = 0;
		if (r->parse && !r->parse(h))
			continue;
		if (!(r->flags & F_GENERIC))
			return r;
		if (!fallback) {
			fallback = r;
			fh = *h;
		}
	}
	if (fallback)
		*h = fh;
	return fallback;
}

/* ---- state --------------------------------------------------------------- */

static struct {
	struct report r;	/* what family hooks see */
	uint64_t off;		/* byte offset of its first line */
	uint64_t lineno;
	int step;		/* -1: before the first step marker */
	int armed;		/* an injector was armed when it started */
	char armed_names[MAX_ARMED * (ARMED_NAME + 1)];
	char step_line[CTX_LEN];
	char candidate[FN_LEN];	/* FROM_STALL: the top frame; FROM_HUNG: the first not waiting */
	char prev[FN_LEN];	/* FROM_STALL: the frame below the last one seen */
	long warn_cpu, warn_pid;
	int irq_depth;		/* inside <IRQ>/<NMI>/<SOFTIRQ> */
	int task_open;		/* <TASK> seen, </TASK> not yet */
	int phase_lines;	/* lines in the current phase */
	int has_hw, has_mod;
	char *buf;		/* the report's own lines */
	size_t len;
	unsigned nlines;
	int truncated;
} cur;

#define R (cur.r)

static int cur_step = -1;
static char cur_step_line[CTX_LEN];
static char armed[MAX_ARMED][ARMED_NAME];
static int narmed;
static char last_hw[CTX_LEN], last_mod[CTX_LEN];
static unsigned long reports_seen;	/* since the last boot */

struct title_ent *titles;
unsigned ntitles;
unsigned long overflow_count;
static unsigned *title_hash;		/* index + 1, 0 = empty */
#define TITLE_HASH (MAX_TITLES * 2)

int fast_skip_ok(void)
{
	return !R.row || (R.trace == TR_IN && R.blame[0]);
}

/* ---- markers ------------------------------------------------------------- */

static void armed_names(char *out, size_t cap)
{
	size_t n = 0;
	int i;

	out[0] = 0;
	for (i = 0; i < narmed; i++) {
		int w = snprintf(out + n, cap - n, "%s%s", i ? "," : "", armed[i]);

		if (w < 0 || (size_t)w >= cap - n)
			break;
		n += (size_t)w;
	}
}

static void arm(const char *name)
{
	int k;

	for (k = 0; k < narmed; k++)
		if (strcmp(armed[k], name) == 0)
			return;
	if (narmed < MAX_ARMED)
		strcpy(armed[narmed++], name);
}

/* "rig: step N begin ...", "rig: step N end", "rig: inject (armed|disarmed) NAME" */
static void parse_marker(struct str m, const char *line, size_t len)
{
	char name[ARMED_NAME];
	size_t i = 0;
	int k;

	m = skip_n(m, 5);
	if (has_prefix(m, "step ")) {
		long v = 0;

		m = skip_n(m, 5);
		if (!m.n || m.p[0] < '0' || m.p[0] > '9')
			return;
		while (m.n && m.p[0] >= '0' && m.p[0] <= '9' && v < 100000000) {
			v = v * 10 + (m.p[0] - '0');
			m = skip_n(m, 1);
		}
		if (has_prefix(m, " begin")) {
			cur_step = (int)v;
			copy_clean(cur_step_line, sizeof(cur_step_line), line, len);
		}
		return;
	}
	if (!has_prefix(m, "inject "))
		return;
	m = skip_n(m, 7);
	int on = has_prefix(m, "armed ");

	if (!on && !has_prefix(m, "disarmed "))
		return;
	m = skip_n(m, on ? 6 : 9);
	while (i < m.n && i < sizeof(name) - 1 && m.p[i] != ' ' && m.p[i] != '\t')
		i++;
	if (!i)
		return;
	copy_clean(name, sizeof(name), m.p, i);
	if (on) {
		arm(name);
		return;
	}
	if (strcmp(name, "all") == 0) {
		narmed = 0;
		return;
	}
	for (k = 0; k < narmed; k++)
		if (strcmp(armed[k], name) == 0) {
			memmove(armed[k], armed[k + 1], (size_t)(narmed - k - 1) * ARMED_NAME);
			narmed--;
			return;
		}
}

/*
 * Injectors armed from boot by their kernel parameters ("failslab=",
 * "fail_page_alloc=", "fail_vmemmap=", ...): armed for the whole log, as
 * "boot:NAME".
 */
static void parse_cmdline(struct str m)
{
	static const char *const params[] = {
		"failslab=", "fail_page_alloc=", "fail_vmemmap=", "fail_futex=",
		"fail_make_request=", "fail_usercopy=",
	};
	char name[ARMED_NAME];
	size_t i;

	for (i = 0; i < sizeof(params) / sizeof(params[0]); i++) {
		const char *at = find_lit(m, params[i]);

		if (!at || (at > m.p && at[-1] != ' '))
			continue;
		snprintf(name, sizeof(name), "boot:%.*s", (int)(strlen(params[i]) - 1), params[i]);
		arm(name);
	}
}

/* ---- titles -------------------------------------------------------------- */

static unsigned hash_str(const char *s)
{
	unsigned h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

/* Expand the row's template: %h header text, %a access, %f function. */
static void build_title(char *t, size_t cap)
{
	const char *p = R.title;
	size_t n = 0;

	for (; *p && n + 1 < cap; p++) {
		const char *v = NULL;

		if (p[0] != '%' || !p[1]) {
			t[n++] = *p;
			continue;
		}
		p++;
		if (*p == 'h')
			v = R.prefix;
		else if (*p == 'a')
			v = R.access;
		else if (*p == 'f')
			v = R.blame;
		if (!v || !*v) {
			/* drop the word joining an empty piece: " in %f", " %a" */
			while (n && t[n - 1] != ' ')
				n--;
			while (n && t[n - 1] == ' ')
				n--;
			if (*p == 'f' && n >= 3 && memcmp(t + n - 3, " in", 3) == 0)
				n -= 3;
			continue;
		}
		while (*v && n + 1 < cap)
			t[n++] = *v++;
	}
	t[n] = 0;
}

static struct title_ent *find_title(const char *t)
{
	unsigned h = hash_str(t) % TITLE_HASH;

	while (title_hash[h]) {
		struct title_ent *e = &titles[title_hash[h] - 1];

		if (strcmp(e->title, t) == 0)
			return e;
		h = (h + 1) % TITLE_HASH;
	}
	if (ntitles >= MAX_TITLES)
		return NULL;
	struct title_ent *e = &titles[ntitles];

	memset(e, 0, sizeof(*e));
	e->title = strdup(t);
	if (!e->title)
		die_io("out of memory");
	e->seq = ntitles;
	e->all_corrupted = 1;
	title_hash[h] = ++ntitles;
	return e;
}

#define MAX_EXAMPLES 512	/* distinct titles whose text is kept */

static void save_example(struct title_ent *e)
{
	free(e->text);
	free(e->ex_armed_names);
	free(e->ex_step_line);
	e->text = xmalloc(cur.len + 1);
	memcpy(e->text, cur.buf, cur.len);
	e->text[cur.len] = 0;
	e->text_len = cur.len;
	e->ex_corrupted = R.corrupted;
	e->ex_step = cur.step;
	e->ex_armed = cur.armed;
	e->ex_armed_names = strdup(cur.armed_names);
	e->ex_step_line = strdup(cur.step_line);
	e->ex_off = cur.off;
	e->ex_lineno = cur.lineno;
	e->ex_has_hw = cur.has_hw;
	e->ex_has_mod = cur.has_mod;
	strcpy(e->ex_hw, last_hw);
	strcpy(e->ex_mod, last_mod);
	if (!e->ex_armed_names || !e->ex_step_line)
		die_io("out of memory");
}

static void close_report(void)
{
	const struct row *row = R.row;
	char t[TITLE_LEN];
	struct title_ent *e;

	if (!row)
		return;
	if (row->flags & F_PENDING)
		goto out;
	if (!R.blame[0] && cur.candidate[0])
		strcpy(R.blame, cur.candidate);
	if ((row->flags & F_NEEDS_FUNC) && !R.blame[0])
		R.corrupted = 1;
	/* "Fatal exception" and the like follow the report they end */
	if ((row->flags & F_AFTERMATH) && reports_seen)
		goto out;
	reports_seen++;
	if (cur.off < opt.from)
		goto out;
	build_title(t, sizeof(t));
	e = find_title(t);
	if (!e) {
		overflow_count++;
		goto out;
	}
	if (!e->count)
		e->first_step = cur.step;
	e->count++;
	if (cur.armed)
		e->injected = 1;
	if (!(cur.armed && (row->flags & F_EXCUSABLE)))
		e->unexplained = 1;
	if (!R.corrupted)
		e->all_corrupted = 0;
	if (keep_text && e->seq < MAX_EXAMPLES &&
	    (!e->text || (e->ex_corrupted && !R.corrupted)))
		save_example(e);
out:
	R.row = NULL;
}

/* ---- blame --------------------------------------------------------------- */

static int skipped(struct str fn)
{
	return (frame_classes(fn) & R.row->skip) || name_matches(R.skip_also, fn);
}

void blame_offer(struct str fn)
{
	const struct row *row = R.row;

	if (R.blame[0] || !fn.n || !row)
		return;
	switch (row->from) {
	case FROM_NONE:
	case FROM_HEADER:
		return;
	case FROM_STALL:
		if (skipped(fn))
			return;
		if (stall_anchor(fn)) {
			if (memmem(fn.p, fn.n, "smp_call_function", 17))
				strcpy(R.blame, "smp_call_function");
			else if (cur.prev[0])
				strcpy(R.blame, cur.prev);
			else
				copy_clean(R.blame, sizeof(R.blame), fn.p, fn.n);
			return;
		}
		copy_clean(cur.prev, sizeof(cur.prev), fn.p, fn.n);
		if (!cur.candidate[0])
			strcpy(cur.candidate, cur.prev);
		return;
	case FROM_HUNG:
		if (memmem(fn.p, fn.n, "rtnl_lock", 9)) {
			strcpy(R.blame, "rtnl_lock");
			return;
		}
		if (memmem(fn.p, fn.n, "synchronize_rcu", 15) ||
		    memmem(fn.p, fn.n, "synchronize_srcu", 16) ||
		    memmem(fn.p, fn.n, "synchronize_net", 15) ||
		    memmem(fn.p, fn.n, "synchronize_sched", 17)) {
			strcpy(R.blame, "synchronize_rcu");
			return;
		}
		if (!cur.candidate[0] && !skipped(fn))
			copy_clean(cur.candidate, sizeof(cur.candidate), fn.p, fn.n);
		return;
	default:
		if (!skipped(fn))
			copy_clean(R.blame, sizeof(R.blame), fn.p, fn.n);
	}
}

static void offer_name(const char *fn)
{
	blame_offer((struct str){ fn, strlen(fn) });
}

/* ---- reports ------------------------------------------------------------- */

static void open_report(const struct row *row, const struct header *h, uint64_t off,
			uint64_t lineno)
{
	R.row = row;
	strcpy(R.prefix, h->text);
	R.access[0] = 0;
	R.blame[0] = 0;
	R.title = h->title ? h->title : row->title;
	R.skip_also = h->skip_also ? h->skip_also : row->skip_also;
	R.corrupted = h->corrupted;
	R.trace = TR_NONE;
	R.at_armed = !row->at_after;
	cur.off = off;
	cur.lineno = lineno;
	cur.step = cur_step;
	cur.armed = narmed > 0;
	if (keep_text) {
		armed_names(cur.armed_names, sizeof(cur.armed_names));
		strcpy(cur.step_line, cur_step_line);
	}
	cur.candidate[0] = 0;
	cur.prev[0] = 0;
	cur.warn_cpu = h->cpu;
	cur.warn_pid = h->pid;
	cur.irq_depth = 0;
	cur.task_open = 0;
	cur.phase_lines = 0;
	cur.has_hw = cur.has_mod = 0;
	cur.len = 0;
	cur.nlines = 0;
	cur.truncated = 0;
	offer_name(h->hint);
}

/* A continuation header: "WARNING:" after "cut here", "Oops:" after "BUG:". */
static void merge_header(const struct row *row, const struct header *h)
{
	if (R.row->flags & F_PENDING) {
		R.row = row;
		strcpy(R.prefix, h->text);
		R.title = h->title ? h->title : row->title;
		R.skip_also = h->skip_also ? h->skip_also : row->skip_also;
		R.at_armed = !row->at_after;
		cur.warn_cpu = h->cpu;
		cur.warn_pid = h->pid;
	} else if (row->group == G_WARN) {
		cur.warn_cpu = h->cpu;
		cur.warn_pid = h->pid;
	}
	cur.phase_lines = 0;
	offer_name(h->hint);
}

static void keep_line_slow(const char *line, size_t len)
{
	if (cur.nlines >= REPORT_LINES || cur.len + len + 1 > REPORT_BYTES) {
		cur.truncated = 1;
		return;
	}
	memcpy(cur.buf + cur.len, line, len);
	cur.len += len;
	cur.buf[cur.len++] = '\n';
	cur.nlines++;
}

static inline void keep_line(const char *line, size_t len)
{
	if (keep_text)
		keep_line_slow(line, len);
}

static int is_reg_line(struct str s)
{
	size_t i = 1;

	s = skip_ws(s);
	if (has_prefix(s, "Code: "))
		return 1;
	if (!s.n || s.p[0] < 'A' || s.p[0] > 'Z')
		return 0;
	while (i < s.n && i < 9 && ((s.p[i] >= 'A' && s.p[i] <= 'Z') ||
				   (s.p[i] >= '0' && s.p[i] <= '9') || s.p[i] == '_'))
		i++;
	return i >= 2 && i < s.n && s.p[i] == ':';
}

/* arm64 register lines: "x29: ffff80000a2b3c40 x28: ...", "sp : ffff..." */
static int is_arm_reg_line(struct str s)
{
	s = skip_ws(s);
	return (s.n > 5 && s.p[0] == 'x' && s.p[1] >= '0' && s.p[1] <= '9' &&
		(s.p[2] == ':' || s.p[3] == ':')) ||
	       has_prefix(s, "sp : ") || has_prefix(s, "lr : ") || has_prefix(s, "pstate: ");
}

const char *const trace_starts[] = {
	"Call Trace:", "Call trace:", "Backtrace:", "backtrace:", "backtrace (crc ",
	NULL
};

static int trace_start(struct str s)
{
	const char *const *t;

	if (!s.n || (s.p[0] != 'C' && s.p[0] != 'B' && s.p[0] != 'b'))
		return 0;
	for (t = trace_starts; *t; t++)
		if (has_prefix(s, *t))
			return 1;
	return 0;
}

/* lockdep's "..., at: func+0x1/0x2" (or "at: [<ffff>] func+0x1/0x2") */
static void at_line(struct str m)
{
	const char *at = find_lit(m, "at: ");
	struct str s, fn;

	if (!at)
		return;
	s = skip_ws(skip_n(m, (size_t)(at - m.p) + 4));
	while (has_prefix(s, "[<")) {
		const char *e = find_lit(s, ">]");

		if (!e)
			return;
		s = skip_ws(skip_n(s, (size_t)(e - s.p) + 2));
	}
	if (sym_span(s, &fn))
		blame_offer(fn);
}

/* Trace handling for a line of the open report; returns 1 if consumed. */
static int trace_line(struct str m)
{
	struct str s = skip_ws(m), fn;
	int unrel;
	int stall = R.row->from == FROM_STALL || (R.row->flags & F_NO_PC);

	if (R.trace == TR_NONE) {
		if (trace_start(s)) {
			R.trace = TR_IN;
			cur.phase_lines = 0;
			return 1;
		}
		if (s.n && (s.p[0] == 'R' || s.p[0] == 'I' || s.p[0] == 'p' || s.p[0] == 'P' ||
			    s.p[0] == 'N') && parse_pc_line(s, &fn)) {
			if (!(R.row->flags & F_NO_PC) || R.row->from == FROM_STALL)
				blame_offer(fn);
			return 1;
		}
		if ((R.row->flags & F_BARE_TRACE) && m.n && (m.p[0] == ' ' || m.p[0] == '\t') &&
		    parse_frame(s, &fn, &unrel)) {
			R.trace = TR_IN;
			cur.phase_lines = 0;
			if (!unrel)
				blame_offer(fn);
			return 1;
		}
		return 0;
	}
	if (R.trace != TR_IN)
		return 0;
	/* fast path: once blamed, an indented line other than <...> is a frame */
	if (R.blame[0] && m.n && m.p[0] == ' ' && s.n && s.p[0] != '<')
		return 1;
	if (s.n && s.p[0] == '<') {
		if (has_prefix(s, "<TASK>")) {
			cur.task_open = 1;
		} else if (has_prefix(s, "</TASK>")) {
			cur.task_open = 0;
			R.trace = TR_DONE;
			cur.phase_lines = 0;
		} else if (has_prefix(s, "<IRQ>") || has_prefix(s, "<NMI>") ||
			   has_prefix(s, "<SOFTIRQ>") || has_prefix(s, "<#DF>")) {
			cur.irq_depth++;
		} else if (has_prefix(s, "</IRQ>") || has_prefix(s, "</NMI>") ||
			   has_prefix(s, "</SOFTIRQ>") || has_prefix(s, "</#DF>")) {
			if (cur.irq_depth)
				cur.irq_depth--;
		}
		return 1;
	}
	if (parse_frame(s, &fn, &unrel)) {
		if (!unrel && !(stall && cur.irq_depth))
			blame_offer(fn);
		return 1;
	}
	if (parse_pc_line(s, &fn)) {
		if (!(stall && cur.irq_depth))
			blame_offer(fn);
		return 1;
	}
	if (is_reg_line(s) || is_arm_reg_line(s) || !s.n)
		return 1;
	/* anything else ends the trace */
	R.trace = TR_DONE;
	cur.phase_lines = 0;
	return 0;
}

/* Remember the lines a report file needs when its report lacks them. */
static void note_context(struct str m, int in_report)
{
	if (m.n && m.p[0] == 'H' && has_prefix(m, "Hardware name: ")) {
		copy_clean(last_hw, sizeof(last_hw), m.p, m.n);
		if (in_report)
			cur.has_hw = 1;
	} else if (m.n && m.p[0] == 'M' && has_prefix(m, "Modules linked in:")) {
		copy_clean(last_mod, sizeof(last_mod), m.p, m.n);
		if (in_report)
			cur.has_mod = 1;
	}
}

static int is_rule_line(struct str m, char c)
{
	size_t i;

	if (m.n < 20)
		return 0;
	for (i = 0; i < m.n; i++)
		if (m.p[i] != c)
			return 0;
	return 1;
}

/* A line of the open report that is not a new header. */
static void report_line(struct str m, const char *line, size_t len)
{
	const struct row *row = R.row;

	keep_line(line, len);
	if (row->from == FROM_AT && R.trace == TR_NONE && !R.blame[0]) {
		if (!R.at_armed) {
			if (find_lit(m, row->at_after))
				R.at_armed = 1;
		} else {
			struct str fn;
			int unrel;

			if (find_lit(m, "at: "))
				at_line(m);
			else if (m.n && (m.p[0] == ' ' || m.p[0] == '\t' || m.p[0] == '[') &&
				 parse_frame(m, &fn, &unrel) && !unrel)
				blame_offer(fn);
		}
	}
	if (trace_line(m))
		return;
	if (row->body)
		row->body(&R, m);
	if (cur.warn_pid >= 0 && R.trace == TR_NONE && has_prefix(m, "CPU: ")) {
		long c = num_after(m, "CPU: "), p = num_after(m, " PID: ");

		if ((cur.warn_cpu >= 0 && c != cur.warn_cpu) || p != cur.warn_pid)
			R.corrupted = 1;	/* another CPU's lines in between */
	}
	if (m.n > 4 && m.p[0] == '-' && has_prefix(m, "---[ end ")) {
		close_report();
		return;
	}
	if ((row->flags & F_RULE_END) && R.trace == TR_DONE && is_rule_line(m, '=')) {
		close_report();
		return;
	}
	cur.phase_lines++;
	if (R.trace == TR_NONE) {
		if (cur.phase_lines > row->hdr_max)
			close_report();
	} else if (R.trace == TR_DONE) {
		if (cur.phase_lines > row->tail ||
		    ((row->flags & F_PAGES_END) && m.n > 15 &&
		     memcmp(m.p + m.n - 15, " pages reserved", 15) == 0))
			close_report();
	}
}

/* Would a new header now mean two reports are mixed up? */
static int open_report_unfinished(void)
{
	if (!R.row || (R.row->flags & F_PENDING))
		return 0;
	if (R.trace == TR_IN)
		return cur.task_open || !R.blame[0];
	return R.trace == TR_NONE && (R.row->flags & F_NEEDS_FUNC);
}

/* A new boot: whatever report is open was cut off by the reboot. */
static int boot_line(struct str m)
{
	return has_prefix(m, "Linux version ") || has_prefix(m, "SeaBIOS (version") ||
	       has_prefix(m, "Booting the kernel") || has_prefix(m, "Decompressing Linux") ||
	       has_prefix(m, "Booting Linux on physical CPU");
}

/* Length of a "[   12.345678]" printk time stamp at s, or 0. */
static size_t stamp_len(struct str s)
{
	size_t i = 1, digits = 0;

	if (!s.n || s.p[0] != '[')
		return 0;
	while (i < s.n && s.p[i] == ' ')
		i++;
	while (i < s.n && s.p[i] >= '0' && s.p[i] <= '9')
		i++, digits++;
	if (!digits || i >= s.n || s.p[i] != '.')
		return 0;
	i++;
	digits = 0;
	while (i < s.n && s.p[i] >= '0' && s.p[i] <= '9')
		i++, digits++;
	if (!digits || i >= s.n || s.p[i] != ']')
		return 0;
	return i + 1;
}

/*
 * The message of a console line: without "<N>" levels, "[   12.345678]"
 * stamps, "[  T123]"/"[    C1]" caller ids, and whatever user space wrote
 * before a kernel line without ending its own ("offline rc=130[ 20.04] rig:").
 */
static struct str strip_prefix(struct str m)
{
	if (m.n >= 3 && m.p[0] == '<' && m.p[1] >= '0' && m.p[1] <= '9') {
		size_t i = 1;

		while (i < m.n && i < 5 && m.p[i] >= '0' && m.p[i] <= '9')
			i++;
		if (i < m.n && m.p[i] == '>')
			m = skip_n(m, i + 1);
	}
	if (m.n && m.p[0] != '[') {
		const char *b = memchr(m.p + 1, '[', m.n - 1);

		while (b) {
			struct str t = skip_n(m, (size_t)(b - m.p));
			size_t k = stamp_len(t);

			if (k && k < t.n && (t.p[k] == ' ' || t.p[k] == '[')) {
				m = t;
				break;
			}
			b = memchr(b + 1, '[', (size_t)(m.p + m.n - b - 1));
		}
	}
	/* the common "[%5lu.%06lu] " first, then anything bracketed and numeric */
	if (m.n > 14 && m.p[0] == '[' && m.p[6] == '.' && m.p[13] == ']' &&
	    m.p[14] == ' ' && m.p[12] >= '0' && m.p[12] <= '9')
		return skip_n(m, 15);
	for (int pass = 0; pass < 2 && m.n && m.p[0] == '['; pass++) {
		size_t i = 1;

		while (i < m.n && (m.p[i] == ' ' || m.p[i] == '.' ||
				   (m.p[i] >= '0' && m.p[i] <= '9') ||
				   (pass && i > 1 && (m.p[i - 1] == ' ' || m.p[i - 1] == '[') &&
				    (m.p[i] == 'T' || m.p[i] == 'C'))))
			i++;
		if (i >= m.n || m.p[i] != ']' || i < 2)
			break;
		m = skip_n(m, i + 1);
		if (m.n && m.p[0] == ' ')
			m = skip_n(m, 1);
	}
	return m;
}

static void other_line(struct str m, const char *line, size_t len, uint64_t off,
		       uint64_t lineno);

void process_line(const char *line, size_t len, uint64_t off, uint64_t lineno)
{
	struct str m = strip_prefix((struct str){ line, len });

	if (m.n >= 5 && m.p[0] == 'r' && memcmp(m.p, "rig: ", 5) == 0 &&
	    !has_prefix(m, "rig: FAIL ")) {
		parse_marker(m, line, len);
		if (R.row)
			keep_line(line, len);
		return;
	}
	/*
	 * No report header or marker starts with white space (frames) or a
	 * register name ("RAX: ...", "Code: ...").  Inside a call trace whose
	 * culprit is known, such lines matter only as "not the end yet".
	 */
	if (m.n && (m.p[0] == ' ' || m.p[0] == '\t')) {
		if (!R.row)
			return;
		if (R.trace == TR_IN && R.blame[0] && m.p[0] == ' ') {
			size_t k = 1;

			while (k < m.n && m.p[k] == ' ')
				k++;
			if (k == m.n || m.p[k] != '<') {
				keep_line(line, len);
				return;
			}
		}
		report_line(m, line, len);
		return;
	}
	if (m.n > 4 && m.p[0] >= 'A' && m.p[0] <= 'Z' && m.p[0] != 'B' && m.p[0] != 'I' &&
	    m.p[0] != 'W' && m.p[0] != 'K' && m.p[0] != 'P' && m.p[0] != 'U' &&
	    is_reg_line(m)) {
		if (!R.row)
			return;
		if (R.trace == TR_IN && !has_prefix(m, "RIP: ")) {
			keep_line(line, len);
			return;
		}
		report_line(m, line, len);
		return;
	}
	other_line(m, line, len, off, lineno);
}

/* Lines that may start a report: kept out of process_line, the hot path. */
static __attribute__((noinline)) void other_line(struct str m, const char *line, size_t len,
						 uint64_t off, uint64_t lineno)
{
	struct header h;
	const struct row *row;

	if (m.n > 8 && (m.p[0] == 'C' || m.p[0] == 'K') &&
	    (has_prefix(m, "Command line: ") || has_prefix(m, "Kernel command line: ")))
		parse_cmdline(m);
	if (m.n > 8 && boot_line(m)) {
		if (R.row) {
			if (open_report_unfinished() || R.trace != TR_DONE)
				R.corrupted = 1;
			close_report();
		}
		reports_seen = 0;
		return;
	}
	note_context(m, R.row != NULL);
	row = match_header(m, &h);
	if (!row) {
		if (R.row)
			report_line(m, line, len);
		return;
	}
	if (R.row && (R.row->flags & F_PENDING ? !(row->flags & F_PENDING) :
		      (row->follows & R.row->group) != 0)) {
		keep_line(line, len);
		merge_header(row, &h);
		return;
	}
	if (R.row) {
		/* a panic that only ends the open report does not mix with it */
		int mixed = !(row->flags & F_AFTERMATH) && open_report_unfinished();

		if (mixed)
			R.corrupted = 1;
		close_report();
		open_report(row, &h, off, lineno);
		R.corrupted |= mixed;
	} else {
		open_report(row, &h, off, lineno);
	}
	keep_line(line, len);
	if (row->flags & F_NO_TRACE)
		close_report();
}

void core_init(void)
{
	frames_init();
	index_rows();
	if (keep_text)
		cur.buf = xmalloc(REPORT_BYTES);
	titles = calloc(MAX_TITLES, sizeof(*titles));
	title_hash = calloc(TITLE_HASH, sizeof(*title_hash));
	if (!titles || !title_hash)
		die_io("out of memory");
}

void core_finish(void)
{
	if (R.row) {
		if (open_report_unfinished())
			R.corrupted = 1;	/* the log ends inside it */
		close_report();
	}
}
