// SPDX-License-Identifier: GPL-2.0
/*
 * triage core: reading the console and splitting it into lines.  A line
 * ends at "\n", "\r\n" or a lone "\r" (serial consoles and some capture
 * tools write only CRs).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "triage.h"

#define READ_CHUNK	(1u << 17)	/* input buffer: stays in the cache (1 MiB costs 2-4% more here) */
#define LINE_MAX_LEN	8192		/* longer lines are cut */

#ifdef __SSE2__
static inline uint64_t eol16(const char *p)
{
	__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
	__m128i e = _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\n')),
				 _mm_cmpeq_epi8(v, _mm_set1_epi8('\r')));

	return (uint16_t)_mm_movemask_epi8(e);
}
#endif

/*
 * Bit i set when p[i] ends a line (\n or \r), for the n <= 64 bytes at p
 * (the buffer has 64 readable bytes past its end).  Finding every line end
 * of a block at once is what keeps triage near grep's speed: a memchr() call
 * per line costs as much as the rest of the work on a 60-byte console line.
 */
static uint64_t eol_mask(const char *p, size_t n)
{
	uint64_t m = 0;
#ifdef __SSE2__
	/* written out: gcc -O2 keeps a loop here, with a shift by a variable count */
	m = eol16(p) | eol16(p + 16) << 16 | eol16(p + 32) << 32 | eol16(p + 48) << 48;
#else
	for (size_t i = 0; i < 64; i++)
		m |= (uint64_t)(p[i] == '\n' || p[i] == '\r') << i;
#endif
	return n < 64 ? m & ((UINT64_C(1) << n) - 1) : m;
}

struct splitter {
	uint64_t lineno;
	int after_cr;		/* the last line ended with \r: a \n next is its */
	struct pass pass;	/* what the core lets pass, as of the last line it had */
	unsigned passed;	/* lines passed in PASS_COUNT and not yet told */
	uint64_t frames;	/* plain frame lines passed */
};

/*
 * "[   12.345678]  frame+0x1/0x2", the commonest line: process_line() lets
 * it by outside a report and in a trace whose culprit is known (not
 * counting it as a line the journal probe sees).
 */
static inline int plain_frame_line(const char *q, size_t l)
{
	return l > 17 && q[15] == ' ' && q[16] != ' ' && q[16] != '<' && q[13] == ']' &&
	       q[6] == '.' && q[0] == '[' && q[14] == ' ';
}

/* "[   12.345678] msg": strip_prefix() takes the stamp and nothing else (see scan.c). */
static inline int stamped(const char *q, size_t l)
{
	return l > 14 && q[0] == '[' && q[6] == '.' && q[13] == ']' && q[14] == ' ' &&
	       q[12] >= '0' && q[12] <= '9';
}

/*
 * May the core go without this line (core_pass())?  A line without a stamp
 * is always handed in: only the core knows where its message starts.
 */
static int may_pass(struct splitter *sp, const char *q, size_t l)
{
	struct pass *p = &sp->pass;

	if ((p->mode == PASS_FRAMES || p->mode == PASS_IDLE) && plain_frame_line(q, l)) {
		sp->frames++;
		return 1;
	}
	switch (p->mode) {
	case PASS_FRAMES:
		/* "RAX: ...", "Code: ...": user space's registers at the end of a trace */
		return stamped(q, l) && l <= LINE_MAX_LEN &&
		       trace_reg_line((struct str){ q + 15, l - 15 });
	case PASS_IDLE:
		if (!stamped(q, l) || l > LINE_MAX_LEN)
			return 0;
		/* a message that starts blank is a frame or a register line */
		return l == 15 || q[15] == ' ' || q[15] == '\t' ||
		       (!scan_start(q + 15, l - 15, 0) && !scan_rare(q + 15, l - 15, 0));
	case PASS_COUNT:
		if (!p->budget || !stamped(q, l) || l > LINE_MAX_LEN ||
		    (p->pages_end && l > 30 && memcmp(q + l - 15, " pages reserved", 15) == 0))
			return 0;
		if (l > 15 && (q[15] == ' ' || q[15] == '\t') ? scan_blank(q + 15, l - 15) :
		    scan_start(q + 15, l - 15, 1) || scan_rare(q + 15, l - 15, 1))
			return 0;
		p->budget--;
		sp->passed++;
		return 1;
	default:
		return 0;
	}
}

/* A line the core must have: first the lines it let pass, then this one. */
static void hand_in(struct splitter *sp, const char *p, size_t l, uint64_t off)
{
	if (sp->passed) {
		core_passed(sp->passed);
		sp->passed = 0;
	}
	if (l > LINE_MAX_LEN)
		l = LINE_MAX_LEN;
	process_line(p, l, off, ++sp->lineno, sp->frames);
	core_pass(&sp->pass);
}

/*
 * Hand every complete line of buf[pos, end) to the core; buf[0] is at file
 * offset base, and 64 bytes past end are readable.  Returns where the first
 * incomplete line starts.
 */
static size_t split_lines(const char *buf, size_t pos, size_t end, uint64_t base,
			  struct splitter *sp)
{
	size_t blk;

	for (blk = pos & ~(size_t)63; blk < end; blk += 64) {
		uint64_t mask = eol_mask(buf + blk, end - blk < 64 ? end - blk : 64);

		if (pos > blk)
			mask &= ~UINT64_C(0) << (pos - blk);
		while (mask) {
			size_t eol = blk + (size_t)__builtin_ctzll(mask);
			const char *q = buf + pos;

			mask &= mask - 1;
			if (eol == pos && sp->after_cr && buf[eol] == '\n') {
				/* the \n of a \r\n */
				sp->after_cr = 0;
				pos = eol + 1;
				continue;
			}
			sp->after_cr = buf[eol] == '\r';
			if (may_pass(sp, q, eol - pos))
				sp->lineno++;
			else
				hand_in(sp, q, eol - pos, base + pos);
			pos = eol + 1;
		}
	}
	return pos;
}

/*
 * The log is read(2) in chunks into one buffer that stays in the cache, a
 * regular file as well as a pipe.  Mapping a file instead (what triage did
 * before) saves the kernel's copy, but then every 4 KiB page of the log is
 * a TLB miss of its own; on these (virtual) hosts scanning a mapped 100 MB
 * took three times as long as reading it (57 against 18 ms of CPU).
 */
static size_t fill(int fd, char *dst, size_t n)
{
	for (;;) {
		ssize_t r = read(fd, dst, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			die_io("read: %s", strerror(errno));
		return (size_t)r;
	}
}

void scan(int fd)
{
	char *buf;
	size_t start = 0, end = 0, n;
	uint64_t base = 0;		/* file offset of buf[0] */
	struct splitter sp = { 0 };
	int eof = 0;

	core_pass(&sp.pass);
	buf = xmalloc(READ_CHUNK + 64);
	memset(buf, 0, READ_CHUNK + 64);
	while (!eof || start < end) {
		start = split_lines(buf, start, end, base, &sp);
		if (end - start >= LINE_MAX_LEN || (eof && start < end)) {
			/* an overlong line (its rest comes as lines of its own) or the last one */
			hand_in(&sp, buf + start, end - start, base + start);
			sp.after_cr = 0;
			start = end;
		}
		if (eof)
			break;
		memmove(buf, buf + start, end - start);
		base += start;
		end -= start;
		start = 0;
		n = fill(fd, buf + end, READ_CHUNK - end);
		if (n == 0)
			eof = 1;
		end += n;
	}
	if (sp.passed)
		core_passed(sp.passed);
	core_finish();
	free(buf);
}
