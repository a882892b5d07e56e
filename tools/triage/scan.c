// SPDX-License-Identifier: GPL-2.0
/*
 * triage core: the patterns of the lines that matter.  A console line that
 * holds none of them changes nothing outside a report, and inside one only
 * counts towards its line limit (core_pass()), so the input passes over it
 * without splitting off its prefixes or searching it for headers.
 *
 * The patterns: every header anchor (families.c), the rig's markers, the
 * kernel command line, the journal's " kernel: " and "-- " lines, the
 * lines a new boot starts with; inside a report also what starts or ends
 * its trace ("Call Trace:", the PC line), its "CPU: N PID: P" line, its
 * end ("---[ end ", a "=====" rule) and the lines the body hooks of the
 * rows look at (row.body_starts).  A pattern with a rare byte (as in
 * headers.c) is found anywhere in the message by the three bytes that end
 * at its rare byte, "de:" of "invalid opcode: ": a pair such as "e:" would
 * send every register dump's "Code:" line to ten patterns.  One without is
 * found by its first two bytes where the message starts or after a rare
 * byte and a space, the only places the core looks for it; in a report's
 * message that starts blank, only the first two bytes after the blanks of
 * every pattern a report has are looked for (scan_blank()).
 */
#include <string.h>

#include "triage.h"

struct spat {
	const char *s;
	uint64_t head, head_mask;	/* its first 8 bytes (fewer: masked) */
	unsigned short len;
	unsigned char key;	/* where its key starts */
	unsigned char report;	/* matters only inside a report */
};

#define MAX_SPATS 192
static struct spat spats[MAX_SPATS];
static unsigned char spat_next[MAX_SPATS];	/* 1 + next with the same key */
static unsigned nspats;
static unsigned char key_first[65536];		/* 1 + first with this key, 0: none */
static uint64_t key_bits[65536 / 64];
static uint64_t key_ends[65536 / 64];		/* the last two bytes of the keys */
static uint64_t start_bits[2][65536 / 64];	/* [in a report]: first two bytes */
static uint64_t blank_bits[65536 / 64];	/* of the patterns only a report has */
static int any_front;			/* a key starts at a rare byte */

static const char *const idle_extra[] = {
	"rig: ", "Command line: ", "Kernel command line: ", " kernel: ", "-- ", NULL
};

static const char *const report_extra[] = {
	"RIP: ", "EIP: ", "pc : ", "epc : ", "IP: ", "NIP ", "NIP:", "PC is at ", "CPU: ",
	"---[ end ", "====================", NULL
};

static inline unsigned pair16(const char *p)
{
	return (unsigned char)p[0] | (unsigned)(unsigned char)p[1] << 8;
}

static inline int bit(const uint64_t *bits, unsigned k)
{
	return (bits[k >> 6] >> (k & 63)) & 1;
}

/* The key of the three bytes at p: a 16-bit hash. */
static inline unsigned key3(const char *p)
{
	uint32_t v = (unsigned char)p[0] | (uint32_t)(unsigned char)p[1] << 8 |
		     (uint32_t)(unsigned char)p[2] << 16;

	return (v * 0x9e3779b1u) >> 16;
}

/* Three bytes with a capital or '_' and no blank are the seldom seen. */
static int key_score(const char *p)
{
	int sc = 3, i;

	for (i = 0; i < 3; i++) {
		if ((p[i] >= 'A' && p[i] <= 'Z') || p[i] == '_')
			sc |= 4;
		if (p[i] == ' ')
			sc &= ~2;
	}
	return sc;
}

/*
 * Where the key of the l bytes at s starts: the best three bytes that end
 * at a rare byte; if its only rare bytes are its first two, the three that
 * start at one (*front set).  -1: no rare byte.
 */
static int key_at(const char *s, size_t l, int *front)
{
	int best = -1, best_score = 0;
	size_t k;

	*front = 0;
	for (k = 2; k < l; k++) {
		if (is_rare((unsigned char)s[k]) && key_score(s + k - 2) > best_score) {
			best_score = key_score(s + k - 2);
			best = (int)k - 2;
		}
	}
	for (k = 0; best < 0 && k < 2 && k + 3 <= l; k++) {
		if (is_rare((unsigned char)s[k])) {
			best = (int)k;
			*front = 1;
		}
	}
	return best;
}

static void add(const char *s, int report)
{
	size_t l = strlen(s);
	int front, key = key_at(s, l, &front);
	unsigned k;

	if (l < 2 || l > 255 || nspats >= MAX_SPATS)
		die_io("bad scan pattern '%s'", s);
	if (key < 0) {
		k = pair16(s);
		start_bits[1][k >> 6] |= UINT64_C(1) << (k & 63);
		if (!report)
			start_bits[0][k >> 6] |= UINT64_C(1) << (k & 63);
		return;
	}
	spats[nspats] = (struct spat){ s, 0, 0, (unsigned short)l, (unsigned char)key,
				       (unsigned char)report };
	memcpy(&spats[nspats].head, s, l < 8 ? l : 8);
	memset(&spats[nspats].head_mask, 0xff, l < 8 ? l : 8);
	any_front |= front;
	k = pair16(s + key + 1);
	key_ends[k >> 6] |= UINT64_C(1) << (k & 63);
	k = key3(s + key);
	spat_next[nspats] = key_first[k];
	key_first[k] = (unsigned char)++nspats;
	key_bits[k >> 6] |= UINT64_C(1) << (k & 63);
}

/* The patterns before they are indexed: all of them, in order. */
static struct {
	const char *s;
	int report;
} cands[MAX_SPATS];
static unsigned ncands;

static void collect(const char *const *list, int report)
{
	for (; *list; list++) {
		if (ncands == MAX_SPATS)
			die_io("too many scan patterns at '%s'", *list);
		cands[ncands].s = *list;
		cands[ncands++].report = report;
	}
}

/*
 * Another pattern, wanted wherever this one is, inside it: then a line
 * with this one holds that one too ("BUG: " is in every "BUG: ..." anchor),
 * and a key leads to a few patterns, not forty.  One found only where a
 * message starts covers only the patterns found there that it starts.
 */
static int covered(unsigned i)
{
	const char *s = cands[i].s, *in;
	unsigned j;
	int front, keyed = key_at(s, strlen(s), &front) >= 0;

	for (j = 0; j < ncands; j++) {
		if (j == i || cands[j].report > cands[i].report ||
		    !(in = strstr(s, cands[j].s)) ||
		    (strlen(cands[j].s) == strlen(s) && j > i))
			continue;
		if (key_at(cands[j].s, strlen(cands[j].s), &front) >= 0 || (in == s && !keyed))
			return 1;
	}
	return 0;
}

void scan_init(void)
{
	const struct family *f;
	const struct row *r;
	unsigned i;

	for (f = families; f->name; f++)
		for (r = f->rows; r->anchor; r++)
			collect((const char *const[]){ r->anchor, NULL }, 0);
	for (f = families; f->name; f++)
		for (r = f->rows; r->anchor; r++)
			if (r->body_starts)
				collect(r->body_starts, 1);
	collect(idle_extra, 0);
	collect(boot_starts, 0);
	collect(trace_starts, 1);
	collect(report_extra, 1);
	for (i = 0; i < ncands; i++) {
		unsigned k = pair16(cands[i].s);

		/* where a covering pattern starts is not where this one does */
		if (cands[i].report)
			blank_bits[k >> 6] |= UINT64_C(1) << (k & 63);
		if (!covered(i))
			add(cands[i].s, cands[i].report);
	}
}

/*
 * The patterns (SCAN_IDLE: one that matters outside a report too) whose key
 * is at buf + k; buf holds n bytes.  The first 8 bytes are compared in one
 * load (reading up to 7 bytes past them).
 */
static __attribute__((noinline)) unsigned keyed_at(const char *buf, size_t k, size_t n)
{
	unsigned j, found = 0;

	for (j = key_first[key3(buf + k)]; j; j = spat_next[j - 1]) {
		const struct spat *p = &spats[j - 1];
		const char *s = buf + k - p->key;
		uint64_t w;

		if (k < p->key || k - p->key + p->len > n)
			continue;
		memcpy(&w, s, 8);
		if ((w & p->head_mask) == p->head &&
		    (p->len <= 8 || memcmp(s + 8, p->s + 8, p->len - 8u) == 0))
			found |= p->report ? SCAN_REPORT : SCAN_IDLE | SCAN_REPORT;
	}
	return found;
}

/*
 * The patterns at the rare byte buf[k] (buf holds n bytes, and 16 more are
 * readable): those with a key there, and those without a rare byte that
 * start after it and a space.  The pair a key ends with rules most out.
 */
static inline unsigned rare_at(const char *buf, size_t k, size_t n)
{
	unsigned found = 0, start;

	if (k >= 2 && bit(key_ends, pair16(buf + k - 1)) && bit(key_bits, key3(buf + k - 2)))
		found |= keyed_at(buf, k - 2, n);
	if (any_front && bit(key_bits, key3(buf + k)))
		found |= keyed_at(buf, k, n);
	if (buf[k + 1] == ' ' && k + 3 < n && bit(start_bits[1], start = pair16(buf + k + 2)))
		found |= bit(start_bits[0], start) ? SCAN_IDLE | SCAN_REPORT : SCAN_REPORT;
	return found;
}

/*
 * Is a pattern in the message of n bytes at msg (in_report: also one that
 * matters only inside a report)?  Up to 16 bytes past it are read.
 */
int scan_rare(const char *msg, size_t n, int in_report)
{
	unsigned want = in_report ? SCAN_REPORT : SCAN_IDLE;
	size_t blk;

	for (blk = 0; blk < n; blk += 16) {
		unsigned mask = rare_mask(msg + blk, n - blk);

		while (mask) {
			size_t j = blk + (size_t)__builtin_ctz(mask);

			mask &= mask - 1;
			if (rare_at(msg, j, n) & want)
				return 1;
		}
	}
	return 0;
}

/*
 * Does the message of n bytes at msg start with a pattern without a rare
 * byte?  Two more bytes are readable.
 */
int scan_start(const char *msg, size_t n, int in_report)
{
	return n > 1 && bit(start_bits[in_report], pair16(msg));
}

/*
 * A message that starts blank goes to the report's own checks, never to
 * the header search (process_line()), and those look only where it starts
 * after its blanks ("  Call Trace:", "  last function: ", the PC line): may
 * a pattern that only a report has start there?
 */
int scan_blank(const char *msg, size_t n)
{
	size_t i = 0;

	while (i < n && (msg[i] == ' ' || msg[i] == '\t'))
		i++;
	return i + 1 < n && bit(blank_bits, pair16(msg + i));
}
