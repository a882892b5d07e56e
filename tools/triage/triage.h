/* SPDX-License-Identifier: GPL-2.0 */
/*
 * triage: what the core (input.c, core.c, headers.c, frames.c, skip.c,
 * markers.c, text.c) and the report families (fam-*.c, listed in families.c) share.
 * A family is a table of header rows; the core finds headers, follows each
 * report and names it from its row.
 */
#ifndef TRIAGE_H
#define TRIAGE_H

#include <stddef.h>
#include <stdint.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define FN_LEN		96		/* function name */
#define PREFIX_LEN	192		/* title text before " in FUNC" */
#define TITLE_LEN	(PREFIX_LEN + FN_LEN + 16)
#define CTX_LEN		512		/* saved context lines */
#define MAX_ARMED	16
#define ARMED_NAME	32

/* ---- strings ----------------------------------------------------------- */

struct str {
	const char *p;
	size_t n;
};

/*
 * Inline, so that a literal's length and comparison fold into a few
 * instructions.  A prefix from a table (its length not known when compiled)
 * is compared a byte at a time: it nearly always differs at its first byte,
 * and strlen() and memcmp() calls cost more than that.
 */
static inline int has_prefix(struct str s, const char *lit)
{
	size_t l;

	if (!__builtin_constant_p(__builtin_strlen(lit))) {
		for (l = 0; lit[l]; l++)
			if (l == s.n || s.p[l] != lit[l])
				return 0;
		return 1;
	}
	l = __builtin_strlen(lit);
	return s.n >= l && __builtin_memcmp(s.p, lit, l) == 0;
}

static inline struct str skip_n(struct str s, size_t k)
{
	if (k > s.n)
		k = s.n;
	s.p += k;
	s.n -= k;
	return s;
}

static inline struct str skip_ws(struct str s)
{
	while (s.n && (*s.p == ' ' || *s.p == '\t')) {
		s.p++;
		s.n--;
	}
	return s;
}

/*
 * [a-zA-Z0-9_.$], by a table: symbol names are scanned a byte at a time on
 * every frame, and range tests branch differently on each class of byte.
 * The table holds 2 for '.', which starts a compiler suffix (sym_span()).
 */
extern const unsigned char ident_bytes[256];

static inline int is_ident(int c)
{
	return ident_bytes[(unsigned char)c];
}

static inline int is_hex(int c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
	       (c >= 'A' && c <= 'F');
}

/*
 * The first place the l bytes at lit occur in s, or NULL.  Inline, with
 * memchr() for the first byte: console lines and function names are short,
 * and libc's memmem() spends longer setting up than searching them.
 */
static inline const char *find_n(struct str s, const char *lit, size_t l)
{
	const char *p = s.p, *last;

	if (!l)
		return s.p;
	if (s.n < l)
		return NULL;
	last = s.p + (s.n - l);
	while ((p = __builtin_memchr(p, lit[0], (size_t)(last - p) + 1)) != NULL) {
		size_t i = 1;

		/* not memcmp(): a call costs more than the few bytes compared */
		while (i < l && p[i] == lit[i])
			i++;
		if (i == l)
			return p;
		if (p++ == last)
			break;
	}
	return NULL;
}

static inline const char *find_lit(struct str s, const char *lit)
{
	return find_n(s, lit, __builtin_strlen(lit));
}

/*
 * The bytes that key the patterns of headers (headers.c) and of the lines
 * that matter (scan.c): every header but a few holds one, and they are
 * seldom seen in console text.
 */
static inline int is_rare(unsigned char c)
{
	return c == ':' || c == '!' || c == '>' || c == '#';
}

/*
 * Bit i set when p[i] is a rare byte, for the n <= 16 bytes at p (16
 * readable).  The four pair up by one bit: '!' 0x21 and '#' 0x23 differ
 * only in 0x02, ':' 0x3a and '>' 0x3e only in 0x04, so two compares do.
 */
static inline unsigned rare_mask(const char *p, size_t n)
{
	unsigned m = 0;
#ifdef __SSE2__
	__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
	__m128i e = _mm_or_si128(_mm_cmpeq_epi8(_mm_or_si128(v, _mm_set1_epi8(0x02)),
						_mm_set1_epi8('#')),
				 _mm_cmpeq_epi8(_mm_or_si128(v, _mm_set1_epi8(0x04)),
						_mm_set1_epi8('>')));

	m = (unsigned)_mm_movemask_epi8(e);
#else
	for (size_t i = 0; i < 16; i++)
		m |= (unsigned)is_rare((unsigned char)p[i]) << i;
#endif
	return n < 16 ? m & ((1u << n) - 1) : m;
}

void copy_clean(char *dst, size_t cap, const char *src, size_t n);
void header_words(char *dst, size_t cap, struct str s);
void sanitize_reason(char *dst, size_t cap, struct str s);
void die_io(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
void *xmalloc(size_t n);

/* ---- frames (frames.c) and the frames never blamed (skip.c) ------------ */

/* Classes of helper frames that never get the blame; a row masks them. */
enum {
	SK_COMMON = 1 << 0,	/* reporting, traps, exception entry, printk */
	SK_SCHED = 1 << 1,	/* scheduler, sleeping, waiting */
	SK_ALLOC = 1 << 2,	/* page, slab and vmalloc allocators */
	SK_FAULT = 1 << 3,	/* fault injection */
	SK_LIST = 1 << 4,	/* list debugging */
	SK_SAN = 1 << 5,	/* KASAN/KMSAN/KFENCE/UBSAN internals, mem and str helpers */
	SK_LOCK = 1 << 6,	/* lockdep and lock primitives */
	SK_FREE = 1 << 7,	/* page and slab freeing */
	SK_STALL = 1 << 8,	/* timer interrupt and stall printers */
	SK_ENTRY = 1 << 9,	/* syscall entry, thunks, atomics, refcounts */
	SK_ANCHOR = 1 << 10,	/* not skipped: where a stalled request entered */
	SK_HELPER = 1 << 11,	/* driver core, work and timers, I/O accessors, ... */
};
#define SK_BASE (SK_COMMON | SK_ENTRY | SK_SAN | SK_ALLOC | SK_LOCK | SK_LIST | SK_FAULT | \
		 SK_HELPER)

int sym_span(struct str s, struct str *name);
int parse_sym(struct str s, char *out);
int parse_frame(struct str s, struct str *fn, int *unreliable);
int parse_pc_line(struct str s, struct str *fn);
unsigned frame_classes(struct str name);
int name_matches(const char *const *pats, struct str name);
int stall_anchor(struct str name);
void frames_init(void);

/* ---- report families ---------------------------------------------------- */

/* Where the function of a title comes from. */
enum blame_from {
	FROM_NONE,	/* the title names no function */
	FROM_STACK,	/* the header's own function, the PC line, the call trace */
	FROM_STALL,	/* the interrupted task's stack, the frame above an anchor */
	FROM_HUNG,	/* the blocked task's stack, past the waiting frames */
	FROM_AT,	/* "at: func" after the row's marker line, then the stack */
	FROM_HEADER,	/* the header line says it all (KCSAN's "f / g") */
};

enum {
	F_NEEDS_FUNC = 1 << 0,	/* no function found: the report is corrupted */
	F_EXCUSABLE = 1 << 1,	/* an armed injector explains it */
	F_END_MARK = 1 << 2,	/* closes at "---[ end trace" */
	F_NO_TRACE = 1 << 3,	/* a one-line report */
	F_RULE_END = 1 << 4,	/* closes at a "=====" line after its trace */
	F_PENDING = 1 << 5,	/* "cut here": waits for the WARNING or BUG line (no report without) */
	F_CONT = 1 << 6,	/* continues an open report of a kind in .follows */
	F_BARE_TRACE = 1 << 7,	/* frames follow the header without "Call Trace:" */
	F_AFTERMATH = 1 << 8,	/* a consequence of an earlier report: not counted then */
	F_PAGES_END = 1 << 9,	/* warn_alloc: closes at "N pages reserved" */
	F_NO_PC = 1 << 10,	/* the PC line is not the culprit (stall printers) */
	F_GENERIC = 1 << 11,	/* a catch-all: any other header on the line wins */
	F_INJECTION = 1 << 12,	/* a failure injected on purpose: not a report, its site is listed */
};

/* Groups a continuation header may follow (row.group, row.follows). */
enum {
	G_CUT = 1 << 0, G_WARN = 1 << 1, G_KBUG = 1 << 2, G_FAULT = 1 << 3,
	G_DIE = 1 << 4, G_LIST = 1 << 5, G_GPF = 1 << 6, G_DENTRY = 1 << 7,
};

struct report;

/*
 * What a header parser sees and fills: the message (prefixes stripped), the
 * anchor's place in it, and the title pieces.
 */
struct header {
	struct str msg;
	struct str at;		/* from the anchor to the end of the message */
	char text[PREFIX_LEN];	/* %h of the title template */
	char hint[FN_LEN];	/* a function the header itself names */
	const char *title;	/* template; NULL: the row's */
	const char *const *skip_also;	/* NULL: the row's */
	long cpu, pid;
	int corrupted;
};

/*
 * One row: a header to detect, the title it gets, and where the function
 * comes from.  The anchor is plain text found anywhere in a console line;
 * parse (optional) checks the rest and fills the title pieces, or says 0:
 * not a kernel report after all.
 *
 * Title templates: %h the header's text (from parse), %a the access ("Read",
 * "Write", from the report body), %f the blamed function; " in %f" is dropped
 * when no function is found.
 */
struct row {
	const char *anchor;
	const char *title;
	enum blame_from from;
	unsigned flags;
	unsigned skip;			/* SK_* classes never blamed */
	const char *const *skip_also;	/* and these names (see name_matches) */
	const char *at_after;		/* FROM_AT: the line after which "at:" counts */
	int (*parse)(struct header *h);
	/* every body line not in its trace; 0: nothing more to find in any line */
	int (*body)(struct report *r, struct str m);
	const char *const *body_starts;	/* the only lines body looks at start so (after blanks) */
	unsigned char group, follows;
	short hdr_max;			/* lines before a trace, then give up */
	short tail;			/* lines kept after the trace */
};

struct family {
	const char *name;
	const struct row *rows;		/* ends with a row whose anchor is NULL */
};

extern const struct family families[];

/* The report being read, as far as a family's body hook needs it. */
struct report {
	const struct row *row;
	char prefix[PREFIX_LEN];	/* %h */
	char access[8];			/* %a */
	char blame[FN_LEN];
	const char *title;
	const char *const *skip_also;
	int corrupted;
	int trace;			/* TR_* */
	int at_armed;			/* FROM_AT: the marker line was seen */
	int pending_merged;		/* a titled F_PENDING row took in another one */
	char fault[ARMED_NAME];		/* F_INJECTION: the injector's name */
};

enum { TR_NONE, TR_IN, TR_DONE };

/* Offer a function for the title; the first one not skipped wins. */
void blame_offer(struct str fn);

/* ---- header search (headers.c) ------------------------------------------ */

void headers_init(void);
const struct row *match_header(struct str m, struct header *h);

/* ---- the patterns of the lines that matter (scan.c) ------------------- */

enum { SCAN_IDLE = 1, SCAN_REPORT = 2 };	/* where a pattern found matters */

void scan_init(void);
int scan_rare(const char *msg, size_t n, int in_report);
int scan_start(const char *msg, size_t n, int in_report);
int scan_blank(const char *msg, size_t n);

/* ---- markers (markers.c) ------------------------------------------------ */

void parse_marker(struct str m, const char *line, size_t len);
void parse_cmdline(struct str m);
int marker_step(void);
const char *marker_step_line(void);
int markers_armed(void);
void markers_armed_names(char *out, size_t cap);

/* ---- core (core.c) and input (input.c) --------------------------------- */

struct options {
	const char *reports_dir;
	const char *json_file;
	uint64_t from;
};
extern struct options opt;
extern int keep_text;

/* Which lines the input may pass over without handing them in (core_pass()). */
enum pass_mode {
	PASS_NONE,	/* none: every line goes to process_line() */
	PASS_IDLE,	/* no report open: lines that hold no pattern (scan.c) */
	PASS_FRAMES,	/* a trace whose culprit is known: its plain frame lines */
	PASS_COUNT,	/* a report's lines that hold no pattern, up to budget of them */
};

struct pass {
	enum pass_mode mode;
	unsigned budget;	/* PASS_COUNT: lines that may be passed */
	int pages_end;		/* PASS_COUNT: a line ending " pages reserved" is handed in */
};

void core_init(void);
void process_line(const char *line, size_t len, uint64_t off, uint64_t lineno, uint64_t frames);
void core_pass(struct pass *p);
void core_passed(unsigned n);
int trace_reg_line(struct str m);
void core_finish(void);
void scan(int fd);

/* Titles counted so far (core.c), for the output (main.c). */
struct title_ent {
	char *title;
	unsigned long count;
	unsigned long seq;	/* order of first appearance */
	int first_step;
	int injected;		/* some occurrence had an injector armed */
	int unexplained;	/* some occurrence was not excused */
	int all_corrupted;
	char *text;		/* example: the first clean occurrence, else the first */
	size_t text_len;
	int ex_corrupted;
	int ex_step;
	int ex_armed;
	char *ex_armed_names;
	char *ex_step_line;
	uint64_t ex_off;
	uint64_t ex_lineno;
	int ex_has_hw, ex_has_mod;
	char ex_hw[CTX_LEN], ex_mod[CTX_LEN];
};

#define MAX_TITLES	4096
extern struct title_ent *titles;
extern unsigned ntitles;
extern unsigned long overflow_count;

/* Injected failures (F_INJECTION rows) by site, in order of first appearance. */
struct injection_ent {
	char site[FN_LEN];	/* the function blamed, "" when the stack was not printed */
	char fault[ARMED_NAME];	/* failslab, fail_page_alloc, ... ("" unknown) */
	unsigned long count;
	int first_step;
};

#define MAX_INJECTIONS	256
extern struct injection_ent injections[MAX_INJECTIONS];
extern unsigned ninjections;
extern unsigned long injection_overflow;

/* The header regex for --headers (families.c). */
void print_headers_regex(void);
extern const char *const trace_starts[];
extern const char *const boot_starts[];

#endif
