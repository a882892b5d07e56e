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

static inline void one_line(const char *p, size_t l, uint64_t off, uint64_t *lineno)
{
	if (l > LINE_MAX_LEN)
		l = LINE_MAX_LEN;
	process_line(p, l, off, ++*lineno);
}

struct splitter {
	uint64_t lineno;
	int after_cr;		/* the last line ended with \r: a \n next is its */
};

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
			/*
			 * The commonest line, "[   12.345678]  frame+0x1/0x2",
			 * needs no parsing outside a report or in a trace whose
			 * culprit is known (see process_line()).
			 */
			if (!keep_text && eol - pos > 17 && q[15] == ' ' && q[16] != ' ' &&
			    q[16] != '<' && q[13] == ']' && q[6] == '.' && q[0] == '[' &&
			    q[14] == ' ' && fast_skip_ok()) {
				sp->lineno++;
				pos = eol + 1;
				continue;
			}
			one_line(buf + pos, eol - pos, base + pos, &sp->lineno);
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
	struct splitter sp = { 0, 0 };
	int eof = 0;

	buf = xmalloc(READ_CHUNK + 64);
	memset(buf, 0, READ_CHUNK + 64);
	while (!eof || start < end) {
		start = split_lines(buf, start, end, base, &sp);
		if (end - start >= LINE_MAX_LEN || (eof && start < end)) {
			/* an overlong line (its rest comes as lines of its own) or the last one */
			one_line(buf + start, end - start, base + start, &sp.lineno);
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
	core_finish();
	free(buf);
}
