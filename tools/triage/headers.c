// SPDX-License-Identifier: GPL-2.0
/*
 * triage core: finding report headers.  The rows of every family
 * (families.c) are indexed once; each console message is then searched for
 * their anchors wherever they start, since console lines are often glued to
 * other output.
 */
#include <stdlib.h>
#include <string.h>

#include "triage.h"

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
	uint64_t head, head_mask;	/* its first 8 bytes (fewer: masked), compared at once */
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

/*
 * A long chain ("G:" holds every "BUG: " and "WARNING: " anchor) is also
 * kept split by the byte SPLIT_AT after the start of its key pair ("BUG: k",
 * "WARNING: C"): one list per byte value, in the chain's order, each with
 * the anchors too short to reach that byte.  A line then compares a few
 * anchors, not forty.
 */
#define SPLIT_MIN	8
#define MAX_SPLITS	8
#define SPLIT_AT	3
static unsigned char pair_split[65536];		/* 1 + index of its split, 0: none */
static unsigned short split_list[MAX_SPLITS][256];	/* where each byte's list starts in split_pool */
static unsigned char split_pool[1 << 14];	/* lists of 1 + anchor index, each ending in 0 */
static unsigned nsplits, split_used;

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

/* Where the best key pair of the l bytes at s starts; -1: they hold no rare byte. */
static int key_pair_at(const char *s, size_t l)
{
	size_t i;
	int best = -1, best_score = 0;

	for (i = 0; i + 1 < l; i++) {
		int sc = pair_score((unsigned char)s[i], (unsigned char)s[i + 1]);

		if (sc > best_score) {
			best_score = sc;
			best = (int)i;
		}
	}
	return best;
}

/* Is anchor a in the list of byte b (b < 0: the bytes no anchor of its chain has there)? */
static int in_split(const struct anchor_ref *a, int b)
{
	if (a->key_off + SPLIT_AT >= a->len)
		return 1;
	return b >= 0 && (unsigned char)a->row->anchor[a->key_off + SPLIT_AT] == b;
}

/* Add the list of anchors of the chain at key that byte b lets through. */
static unsigned short split_add(unsigned key, int b)
{
	unsigned short at = (unsigned short)split_used;
	unsigned j;

	for (j = pair_first[key]; j; j = anchor_next[j - 1])
		if (in_split(&anchor_refs[j - 1], b))
			split_pool[split_used++] = (unsigned char)j;
	split_pool[split_used++] = 0;
	return at;
}

static void split_chain(unsigned key)
{
	unsigned char used[256] = { 0 };
	unsigned j, n = 0, wild = 0, nused = 0, b;
	unsigned short others;

	for (j = pair_first[key]; j; j = anchor_next[j - 1]) {
		const struct anchor_ref *a = &anchor_refs[j - 1];

		n++;
		if (a->key_off + SPLIT_AT >= a->len) {
			wild++;
		} else if (!used[(unsigned char)a->row->anchor[a->key_off + SPLIT_AT]]) {
			used[(unsigned char)a->row->anchor[a->key_off + SPLIT_AT]] = 1;
			nused++;
		}
	}
	/* each list holds the short anchors and a 0; the others are in one list each */
	if (n < SPLIT_MIN || nsplits == MAX_SPLITS ||
	    split_used + (wild + 1) * (nused + 1) + (n - wild) > sizeof(split_pool))
		return;
	others = split_add(key, -1);
	for (b = 0; b < 256; b++)
		split_list[nsplits][b] = used[b] ? split_add(key, (int)b) : others;
	pair_split[key] = (unsigned char)++nsplits;
}

void headers_init(void)
{
	const struct family *f;
	const struct row *r;
	unsigned key, j;

	for (f = families; f->name; f++) {
		for (r = f->rows; r->anchor; r++) {
			size_t l = strlen(r->anchor);
			int best = key_pair_at(r->anchor, l);
			unsigned char ones[8];

			if (l < 2 || l > 255 || nanchors >= MAX_ANCHORS)
				die_io("bad header table at '%s'", r->anchor);
			anchor_refs[nanchors] = (struct anchor_ref){ r, 0, 0, (unsigned short)l,
								   (unsigned char)(best < 0 ? 0 : best) };
			memset(ones, 0xff, sizeof(ones));
			memset(ones + (l < 8 ? l : 8), 0, 8 - (l < 8 ? l : 8));
			memcpy(&anchor_refs[nanchors].head_mask, ones, 8);
			memcpy(&anchor_refs[nanchors].head, r->anchor, l < 8 ? l : 8);
			if (best < 0) {
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
	for (j = 0; j < nanchors; j++) {
		const struct anchor_ref *a = &anchor_refs[j];

		key = (unsigned char)a->row->anchor[a->key_off] |
		      (unsigned)(unsigned char)a->row->anchor[a->key_off + 1] << 8;
		if ((pair_bits[key >> 6] >> (key & 63) & 1) && !pair_split[key])
			split_chain(key);
	}
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

/*
 * Is anchor a at m.p + s (which has room for it)?  Most anchors that share a
 * key pair ("BUG: ", "WARNING: ") differ in their first 8 bytes: one load and
 * a mask tell them apart, with no call to memcmp().  Reads up to 7 bytes
 * past the message (see match_header()).
 */
static inline int anchor_at(const struct anchor_ref *a, struct str m, size_t s)
{
	uint64_t w;

	memcpy(&w, m.p + s, 8);
	return (w & a->head_mask) == a->head &&
	       (a->len <= 8 || memcmp(m.p + s + 8, a->row->anchor + 8, a->len - 8u) == 0);
}

/* Anchor j (1-based) with its key pair at m.p + i: a candidate if it is there. */
static inline void try_keyed(unsigned j, struct str m, size_t i, struct candidate *c,
			     unsigned *nc)
{
	const struct anchor_ref *a = &anchor_refs[j - 1];
	size_t s = i - a->key_off;

	if (i < a->key_off || a->len > m.n - s || !anchor_at(a, m, s) || *nc == 16)
		return;
	c[(*nc)++] = (struct candidate){ s, a };
}

static void try_pair(struct str m, size_t i, struct candidate *c, unsigned *nc)
{
	unsigned key = (unsigned char)m.p[i] | (unsigned)(unsigned char)m.p[i + 1] << 8;
	unsigned j;

	if (pair_split[key] && i + SPLIT_AT < m.n) {
		const unsigned char *l = split_pool +
			split_list[pair_split[key] - 1][(unsigned char)m.p[i + SPLIT_AT]];

		for (; *l; l++)
			try_keyed(*l, m, i, c, nc);
		return;
	}
	for (j = pair_first[key]; j; j = anchor_next[j - 1])
		try_keyed(j, m, i, c, nc);
}

static void try_start(struct str m, size_t s, struct candidate *c, unsigned *nc)
{
	unsigned j;

	if (s >= m.n)
		return;
	for (j = start_first[(unsigned char)m.p[s]]; j && *nc < 16; j = anchor_next[j - 1]) {
		const struct anchor_ref *a = &anchor_refs[j - 1];

		if (a->len <= m.n - s && anchor_at(a, m, s))
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
const struct row *match_header(struct str m, struct header *h)
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
	if (start_first[(unsigned char)m.p[0]])
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

