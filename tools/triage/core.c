// SPDX-License-Identifier: GPL-2.0
/*
 * triage core: one console line at a time.  Strips the printk prefixes
 * (time stamps, [ T123] caller ids, levels), hands markers to markers.c and
 * other lines to the header search (headers.c), follows each report's trace
 * to the function its row blames (frames.c, skip.c), and counts the titles.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "triage.h"

#define REPORT_BYTES	(64u << 10)	/* lines kept per report */
#define REPORT_LINES	800

struct options opt;
int keep_text;

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
	long pid;		/* from its "CPU: N PID: P" line, -1 before */
	int irq_depth;		/* inside <IRQ>/<NMI>/<SOFTIRQ> */
	int task_open;		/* <TASK> seen, </TASK> not yet */
	int phase_lines;	/* lines in the current phase */
	int has_hw, has_mod;
	int body_wants;		/* the row's body hook may still find something */
	int stamped;		/* its header line had a printk or syslog stamp */
	int cut;		/* CUT_*: the line cut_line was cut short by another program */
	uint64_t cut_line;
	uint64_t splice_from, splice_to;	/* the last run of spliced lines */
	char cut_head[FN_LEN];	/* its frame or "at: " function up to the cut */
	char *buf;		/* the report's own lines */
	size_t len;
	unsigned nlines;
	int truncated;
} cur;

#define R (cur.r)

enum { CUT_NONE, CUT_FRAME, CUT_AT };

static char last_hw[CTX_LEN], last_mod[CTX_LEN];
static int line_stamped;		/* the line at hand had a stamp (strip_prefix()) */
static uint64_t line_no;		/* and its number */
static unsigned long reports_seen;	/* since the last boot */

struct injection_ent injections[MAX_INJECTIONS];
unsigned ninjections;
unsigned long injection_overflow;

/*
 * The last injected failure since the boot: an allocation failure warning
 * of the same task right after it is its consequence (fail_page_alloc makes
 * vmemmap_alloc_block, allocate_slab or vmalloc fail, and they warn).  The
 * warning names its task when it prints a stack; SLUB's does not, and then
 * only a few lines may lie between them.
 */
#define SAME_TASK_LINES	2000
#define NEXT_LINES	200
static struct {
	int valid;
	uint64_t lineno;
	long pid;
} last_injection;

struct title_ent *titles;
unsigned ntitles;
unsigned long overflow_count;
static unsigned *title_hash;		/* index + 1, 0 = empty */
#define TITLE_HASH (MAX_TITLES * 2)

/* ---- titles -------------------------------------------------------------- */

/*
 * A title's hash, eight bytes at a time: every report closed hashes its
 * title, and a byte at a time (one multiply each, in a chain) cost 5% of
 * the run on a log full of reports.  t has n bytes and a NUL after them.
 */
static unsigned hash_title(const char *t, size_t n)
{
	uint64_t h = n, w;
	size_t i;

	for (i = 0; i + 8 <= n; i += 8) {
		memcpy(&w, t + i, 8);
		h = (h ^ w) * UINT64_C(0x9e3779b97f4a7c15);
		h ^= h >> 29;
	}
	w = 0;
	memcpy(&w, t + i, n - i);
	h = (h ^ w) * UINT64_C(0x9e3779b97f4a7c15);
	return (unsigned)(h >> 32);
}

/* Expand the row's template: %h header text, %a access, %f function; its length. */
static size_t build_title(char *t, size_t cap)
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
	return n;
}

static struct title_ent *find_title(const char *t, size_t n)
{
	unsigned h = hash_title(t, n) % TITLE_HASH;

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

/* An injected failure: its site is listed, and it may explain what follows. */
static void note_injection(void)
{
	unsigned i;

	last_injection.valid = 1;
	last_injection.lineno = cur.lineno;
	last_injection.pid = cur.pid;
	if (cur.off < opt.from)
		return;
	for (i = 0; i < ninjections; i++)
		if (strcmp(injections[i].site, R.blame) == 0 &&
		    strcmp(injections[i].fault, R.fault) == 0)
			break;
	if (i == ninjections) {
		if (ninjections == MAX_INJECTIONS) {
			injection_overflow++;
			return;
		}
		strcpy(injections[i].site, R.blame);
		strcpy(injections[i].fault, R.fault);
		injections[i].first_step = cur.step;
		ninjections++;
	}
	injections[i].count++;
}

/* Does the last injected failure explain the allocation failure now closing? */
static int injection_explains(void)
{
	uint64_t d;

	if (!last_injection.valid || cur.lineno < last_injection.lineno)
		return 0;
	d = cur.lineno - last_injection.lineno;
	if (cur.pid >= 0 && last_injection.pid >= 0)
		return cur.pid == last_injection.pid && d <= SAME_TASK_LINES;
	return d <= NEXT_LINES;
}

static void close_report(void)
{
	const struct row *row = R.row;
	char t[TITLE_LEN];
	struct title_ent *e;
	int excused;

	if (!row)
		return;
	if (row->flags & F_PENDING)
		goto out;
	if (!R.blame[0] && cur.candidate[0])
		strcpy(R.blame, cur.candidate);
	if (row->flags & F_INJECTION) {
		note_injection();
		goto out;
	}
	if ((row->flags & F_NEEDS_FUNC) && !R.blame[0])
		R.corrupted = 1;
	/*
	 * "Fatal exception" and the like follow the report they end; alone,
	 * that report was lost (cut off, or printed before the log began).
	 */
	if ((row->flags & F_AFTERMATH) && reports_seen)
		goto out;
	if (row->flags & F_AFTERMATH)
		R.corrupted = 1;
	reports_seen++;
	if (cur.off < opt.from)
		goto out;
	e = find_title(t, build_title(t, sizeof(t)));
	if (!e) {
		overflow_count++;
		goto out;
	}
	if (!e->count)
		e->first_step = cur.step;
	e->count++;
	excused = (row->flags & F_EXCUSABLE) && (cur.armed || injection_explains());
	if (cur.armed || excused)
		e->injected = 1;
	if (!excused)
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
			if (find_lit(fn, "smp_call_function"))
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
		if (find_lit(fn, "rtnl_lock")) {
			strcpy(R.blame, "rtnl_lock");
			return;
		}
		if (find_lit(fn, "synchronize_rcu") ||
		    find_lit(fn, "synchronize_srcu") ||
		    find_lit(fn, "synchronize_net") ||
		    find_lit(fn, "synchronize_sched")) {
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

/*
 * An injector armed before its debugfs folder exists (an early parameter
 * such as fail_vmemmap=) prints "name (null)": name it after the
 * should_fail*() frame that asked (should_fail_vmemmap -> fail_vmemmap).
 */
static void fault_from_frame(struct str fn)
{
	static const char pre[] = "should_fail";

	if (!R.row || !(R.row->flags & F_INJECTION) || R.fault[0])
		return;
	if (fn.n <= sizeof(pre) || memcmp(fn.p, pre, sizeof(pre) - 1))
		return;
	if (fn.n == 14 && !memcmp(fn.p, "should_fail_ex", 14))
		return;
	if (fn.n == 22 && !memcmp(fn.p, "should_fail_alloc_page", 22))
		strcpy(R.fault, "fail_page_alloc");
	else
		copy_clean(R.fault, sizeof(R.fault), fn.p + 7, fn.n - 7);
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
	R.pending_merged = 0;
	cur.off = off;
	cur.lineno = lineno;
	cur.step = marker_step();
	cur.armed = markers_armed() > 0;
	if (keep_text) {
		markers_armed_names(cur.armed_names, sizeof(cur.armed_names));
		strcpy(cur.step_line, marker_step_line());
	}
	cur.candidate[0] = 0;
	cur.prev[0] = 0;
	cur.warn_cpu = h->cpu;
	cur.warn_pid = h->pid;
	cur.pid = -1;
	R.fault[0] = 0;
	cur.irq_depth = 0;
	cur.task_open = 0;
	cur.phase_lines = 0;
	cur.has_hw = cur.has_mod = 0;
	cur.body_wants = row->body != NULL;
	cur.stamped = line_stamped;
	cur.cut = CUT_NONE;
	cur.splice_from = cur.splice_to = 0;
	cur.len = 0;
	cur.nlines = 0;
	cur.truncated = 0;
	offer_name(h->hint);
}

/*
 * Does this header continue the open report?  "WARNING:" after "cut here",
 * "Oops:" after "BUG:".  A pending header with a title of its own (arm's
 * "Unhandled fault:") is confirmed by a header that follows its group
 * (die()'s "Internal error:"), and keeps its place before another pending
 * one; any other header leaves it unconfirmed.
 */
static int continues(const struct row *row)
{
	if (!(R.row->flags & F_PENDING))
		return (row->follows & R.row->group) != 0;
	if (!R.row->title)
		return !(row->flags & F_PENDING);
	if (row->flags & F_PENDING)	/* one other pending header, once: then a new fault */
		return row != R.row && !R.pending_merged;
	return (row->follows & R.row->group) != 0;
}

/* A continuation header: a titled pending one keeps its title, the confirmer brings the rest. */
static void merge_header(const struct row *row, const struct header *h)
{
	if ((R.row->flags & F_PENDING) && R.row->title && (row->flags & F_PENDING)) {
		R.pending_merged = 1;
		return;
	}
	if (R.row->flags & F_PENDING) {
		if (!R.row->title) {
			strcpy(R.prefix, h->text);
			R.title = h->title ? h->title : row->title;
		}
		R.row = row;
		cur.body_wants = row->body != NULL;
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

/*
 * A message that starts as a register line of x86 ("RAX: ...", "Code: ...")
 * and not as a header: a report's register lines take no header search.
 */
static int reg_start(struct str m)
{
	return m.n > 4 && m.p[0] >= 'A' && m.p[0] <= 'Z' && m.p[0] != 'B' && m.p[0] != 'I' &&
	       m.p[0] != 'W' && m.p[0] != 'K' && m.p[0] != 'P' && m.p[0] != 'U' &&
	       m.p[0] != 'V' && is_reg_line(m);
}

/* A register line that process_line() lets by in a trace: all but the "RIP: " one. */
int trace_reg_line(struct str m)
{
	return reg_start(m) && !has_prefix(m, "RIP: ");
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

/*
 * A serial console interleaves what other programs write (systemd's "[  OK
 * ] Started ...") with the kernel's lines, even inside one.  In a report
 * whose lines carry stamps, a line without one is not the kernel's: it ends
 * no trace.  What such text cut short goes on at the start of a later line
 * without a stamp: a frame or "at:" function ("  get_online_m[  OK  ]
 * Started ..." and "ems+0x55/0x60") is read joined, a stamp's rest is taken
 * as a stamp (strip_prefix()), a trace start's rest as a trace start.
 */
static int spliced(void)
{
	return cur.stamped && !line_stamped;
}

/*
 * Spliced text comes a line or two at a time; a longer run of lines
 * without stamps is the log changing form (an excerpt of another boot
 * glued on), and ends the trace as any other line would.
 */
#define SPLICED_MAX 4
static int spliced_run_ok(void)
{
	if (line_no != cur.splice_to + 1)
		cur.splice_from = line_no;
	cur.splice_to = line_no;
	return line_no - cur.splice_from < SPLICED_MAX;
}

/*
 * Is s cut short by spliced text: from name_at on, a function as far as it
 * got ("get_online_m", "__wait_rcu_gp+0", maybe nothing), then a "[" that
 * starts no address or a run of blanks?  Then s up to there is kept.
 */
static int note_cut(struct str s, size_t name_at, int kind)
{
	size_t i = name_at;

	while (i < s.n && (is_ident((unsigned char)s.p[i]) || s.p[i] == '+' || s.p[i] == '/'))
		i++;
	if (i + 1 >= s.n || i >= sizeof(cur.cut_head) ||
	    !((s.p[i] == '[' && s.p[i + 1] != '<') || (s.p[i] == ' ' && s.p[i + 1] == ' ')))
		return 0;
	memcpy(cur.cut_head, s.p, i);
	cur.cut_head[i] = 0;
	cur.cut = kind;
	cur.cut_line = line_no;
	return 1;
}

/*
 * A spliced line right after a cut one (or after spliced lines that
 * followed it): the kept head and this line joined, in buf.  The caller
 * ends the cut (cur.cut = CUT_NONE) once the joined line reads.
 */
static int join_cut(struct str m, int kind, char *buf, size_t cap, struct str *joined)
{
	size_t h = strlen(cur.cut_head);

	if (cur.cut != kind || line_no != cur.cut_line + 1)
		return 0;
	cur.cut_line = line_no;
	if (m.n > cap - h)
		m.n = cap - h;
	memcpy(buf, cur.cut_head, h);
	memcpy(buf + h, m.p, m.n);
	*joined = (struct str){ buf, h + m.n };
	return 1;
}

/*
 * In a report's header lines, a spliced line that is the rest of a trace
 * start spliced text cut ("  backt[  OK  ] Started ..." and then "race:"):
 * the head is a line with no pattern, which the input may have passed over.
 */
static int spliced_trace_start(struct str s)
{
	const char *const *t;

	if (!s.n)
		return 0;
	for (t = trace_starts; *t; t++) {
		size_t l = strlen(*t);

		if (s.n < l && memcmp(s.p, *t + l - s.n, s.n) == 0 && (*t)[l - 1] == ':')
			return 1;
	}
	return 0;
}

/* lockdep's "..., at: func+0x1/0x2" (or "at: [<ffff>] func+0x1/0x2"); 1 if it names one */
static int at_line(struct str m)
{
	const char *at = find_lit(m, "at: ");
	struct str s, fn;

	if (!at)
		return 0;
	s = skip_ws(skip_n(m, (size_t)(at - m.p) + 4));
	while (has_prefix(s, "[<")) {
		const char *e = find_lit(s, ">]");

		if (!e)
			return 0;
		s = skip_ws(skip_n(s, (size_t)(e - s.p) + 2));
	}
	if (sym_span(s, &fn)) {
		blame_offer(fn);
		return 1;
	}
	if (s.p == at + 4 && !spliced())
		note_cut(skip_n(m, (size_t)(at - m.p)), 4, CUT_AT);
	return 0;
}

/* A frame of the trace, joined or not. */
static inline void frame_seen(struct str fn, int unrel, int stall)
{
	fault_from_frame(fn);
	if (!unrel && !(stall && cur.irq_depth))
		blame_offer(fn);
}

/* Trace handling for a line of the open report; returns 1 if consumed. */
static int trace_line(struct str m)
{
	struct str s = skip_ws(m), fn;
	int unrel;
	int stall = R.row->from == FROM_STALL || (R.row->flags & F_NO_PC);

	if (R.trace == TR_NONE) {
		if (trace_start(s) || (spliced() && spliced_trace_start(s))) {
			R.trace = TR_IN;
			cur.phase_lines = 0;
			return 1;
		}
		if (s.n && (s.p[0] == 'R' || s.p[0] == 'I' || s.p[0] == 'p' || s.p[0] == 'P' ||
			    s.p[0] == 'N' || s.p[0] == 'E' || s.p[0] == 'e') && parse_pc_line(s, &fn)) {
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
	if (spliced() && spliced_run_ok()) {
		char buf[2 * FN_LEN];
		struct str j;

		if (join_cut(m, CUT_FRAME, buf, sizeof(buf), &j) && parse_frame(j, &fn, &unrel)) {
			cur.cut = CUT_NONE;
			frame_seen(fn, unrel, stall);
		}
		return 1;
	}
	if (s.n && s.p[0] == '<') {
		const char *gt = memchr(s.p + 1, '>', s.n - 1);

		if (has_prefix(s, "<<EOE>>"))
			gt = s.p + 6;
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
			   has_prefix(s, "</SOFTIRQ>") || has_prefix(s, "</#DF>") ||
			   has_prefix(s, "<EOI>") || has_prefix(s, "<<EOE>>")) {
			/* <EOI>, <<EOE>>: how kernels before 4.9 closed an IRQ or exception stack */
			if (cur.irq_depth)
				cur.irq_depth--;
		}
		/* before 4.9 the next frame shares the line: "<IRQ>  [<ffff>] func+0x1/0x2" */
		if (!gt)
			return 1;
		s = skip_ws(skip_n(s, (size_t)(gt - s.p) + 1));
		if (!s.n)
			return 1;
	}
	if (parse_frame(s, &fn, &unrel)) {
		frame_seen(fn, unrel, stall);
		return 1;
	}
	if (parse_pc_line(s, &fn)) {
		if (!(stall && cur.irq_depth))
			blame_offer(fn);
		return 1;
	}
	if (is_reg_line(s) || is_arm_reg_line(s) || !s.n)
		return 1;
	if (cur.stamped && (m.p[0] == ' ' || m.p[0] == '\t') &&
	    note_cut(s, has_prefix(s, "? ") ? 2 : 0, CUT_FRAME))
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
			struct str fn, j;
			int unrel;
			char buf[2 * FN_LEN];

			if (spliced()) {
				if (join_cut(m, CUT_AT, buf, sizeof(buf), &j) && at_line(j))
					cur.cut = CUT_NONE;
			} else if (find_lit(m, "at: ")) {
				at_line(m);
			} else if (m.n && (m.p[0] == ' ' || m.p[0] == '\t' || m.p[0] == '[') &&
				   parse_frame(m, &fn, &unrel) && !unrel) {
				blame_offer(fn);
			}
		}
	}
	if (trace_line(m))
		return;
	if (row->body)
		cur.body_wants = row->body(&R, m);
	if (R.trace == TR_NONE && m.n > 5 && m.p[0] == 'C' && has_prefix(m, "CPU: ")) {
		long c = num_after(m, "CPU: "), p = num_after(m, " PID: ");

		if (cur.pid < 0)
			cur.pid = p;
		if (cur.warn_pid >= 0 &&
		    ((cur.warn_cpu >= 0 && c != cur.warn_cpu) || p != cur.warn_pid))
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

const char *const boot_starts[] = {
	"Linux version ", "SeaBIOS (version", "Booting the kernel", "Decompressing Linux",
	"Booting Linux on physical CPU", NULL
};

/* A new boot: whatever report is open was cut off by the reboot. */
static int boot_line(struct str m)
{
	const char *const *b;

	for (b = boot_starts; *b; b++)
		if (has_prefix(m, *b))
			return 1;
	return 0;
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
 * The rest of a stamp that text spliced in cut ("[   35.15[  OK  ] Started
 * ..." and then "6192] Call Trace:"): its length with the blank, or 0.
 */
static size_t stamp_tail_len(struct str s)
{
	size_t i = 0, digits = 0;

	while (i < s.n && i < 6 && s.p[i] == ' ')
		i++;
	for (; i < s.n && i < 20 && ((s.p[i] >= '0' && s.p[i] <= '9') || s.p[i] == '.'); i++)
		digits += s.p[i] != '.';
	if (!digits || i + 1 >= s.n || s.p[i] != ']' || s.p[i + 1] != ' ')
		return 0;
	return i + 2;
}

/* From the first stamp after s.p[0] that a message follows, or s. */
static struct str later_stamp(struct str s)
{
	const char *b = memchr(s.p + 1, '[', s.n - 1);

	while (b) {
		struct str t = skip_n(s, (size_t)(b - s.p));
		size_t k = stamp_len(t);

		if (k && k < t.n && (t.p[k] == ' ' || t.p[k] == '['))
			return t;
		b = memchr(b + 1, '[', (size_t)(s.p + s.n - b - 1));
	}
	return s;
}

/*
 * A syslog or journal line's "Dec 05 12:00:01 host kernel: " (journalctl -k,
 * /var/log/kern.log) or "2026-12-05T12:00:01.123456+00:00 host kernel: "
 * (rsyslog's RFC 3339 stamps): its length, or 0.  Such logs keep no printk
 * stamp, so nothing else marks where the kernel's message starts.
 */
static size_t syslog_len(struct str m)
{
	const char *k;

	if (m.n < 24)
		return 0;
	if (!(m.p[0] >= 'A' && m.p[0] <= 'Z' && m.p[3] == ' ' && m.p[9] == ':' &&
	      m.p[12] == ':') &&
	    !(m.p[0] >= '0' && m.p[0] <= '9' && m.p[4] == '-' && m.p[7] == '-' &&
	      m.p[10] == 'T' && m.p[13] == ':'))
		return 0;
	k = find_lit((struct str){ m.p + 15, m.n < 96 ? m.n - 15 : 81 }, " kernel: ");
	return k ? (size_t)(k - m.p) + 9 : 0;
}

/*
 * `journalctl -k -o short-monotonic` puts the printk stamp where the date
 * was: "[   12.345678] host kernel: ...".  After the stamp: the length of
 * "host kernel: ", or 0.  Looking costs a tenth of the time a console line
 * takes, so it is done only where a journal can start: the first lines of
 * the log, after journalctl's own "-- ..." lines and after a line that had
 * the prefix.  Counted in lines other than the plain frame lines, which
 * the input passes over (every line that holds " kernel: " reaches the
 * core: see scan.c).
 */
#define JOURNAL_PROBE_LINES 100
static uint64_t journal_probe_end = JOURNAL_PROBE_LINES;
static uint64_t lines_seen;		/* of the line at hand */

static __attribute__((noinline)) size_t journal_host_probe(struct str m)
{
	size_t i = 0;

	while (i < m.n && i < 64 && (is_ident((unsigned char)m.p[i]) || m.p[i] == '-'))
		i++;
	if (!i || m.n - i < 9 || memcmp(m.p + i, " kernel: ", 9) != 0)
		return 0;
	journal_probe_end = lines_seen + JOURNAL_PROBE_LINES;
	return i + 9;
}

static inline size_t journal_host_len(struct str m)
{
	return lines_seen > journal_probe_end ? 0 : journal_host_probe(m);
}

/* The common "[%5lu.%06lu] " stamp. */
static inline int common_stamp(struct str m)
{
	return m.n > 14 && m.p[0] == '[' && m.p[6] == '.' && m.p[13] == ']' &&
	       m.p[14] == ' ' && m.p[12] >= '0' && m.p[12] <= '9';
}

/*
 * The message of a console line: without "<N>" levels, syslog prefixes,
 * "[   12.345678]" stamps (and the journal's "host kernel: " after them),
 * "[  T123]"/"[    C1]" caller ids, and whatever user space wrote before a
 * kernel line without ending its own ("offline rc=130[ 20.04] rig:", "[  OK
 * ] Started Journal Service.[ 20.04] rig:"), or the rest of a stamp such
 * text cut.  line_stamped says whether it took a stamp or a syslog prefix.
 */
static struct str strip_prefix(struct str m)
{
	size_t k;

	line_stamped = 1;
	if (common_stamp(m)) {
		m = skip_n(m, 15);
		return skip_n(m, journal_host_len(m));
	}
	line_stamped = 0;
	if (m.n >= 3 && m.p[0] == '<' && m.p[1] >= '0' && m.p[1] <= '9') {
		size_t i = 1;

		while (i < m.n && i < 5 && m.p[i] >= '0' && m.p[i] <= '9')
			i++;
		if (i < m.n && m.p[i] == '>')
			m = skip_n(m, i + 1);
	}
	if (m.n && m.p[0] != '[' && (k = syslog_len(m)) != 0) {
		m = skip_n(m, k);
		line_stamped = 1;
	}
	if (m.n && m.p[0] != '[')
		m = later_stamp(m);
	if (common_stamp(m)) {
		line_stamped = 1;
		m = skip_n(m, 15);
		return skip_n(m, journal_host_len(m));
	}
	if (m.n && m.p[0] != '[' && (k = stamp_tail_len(m)) != 0) {
		line_stamped = 1;
		return skip_n(m, k);
	}
	/* anything bracketed and numeric */
	for (int pass = 0; pass < 2 && m.n && m.p[0] == '['; pass++) {
		size_t i = 1;

		while (i < m.n && (m.p[i] == ' ' || m.p[i] == '.' ||
				   (m.p[i] >= '0' && m.p[i] <= '9') ||
				   (pass && i > 1 && (m.p[i - 1] == ' ' || m.p[i - 1] == '[') &&
				    (m.p[i] == 'T' || m.p[i] == 'C'))))
			i++;
		if (i >= m.n || m.p[i] != ']' || i < 2) {
			struct str t;

			/* "[  OK  ] Started ...[   20.04] msg": again from the stamp */
			if (pass || (t = later_stamp(m)).p == m.p)
				break;
			m = t;
			pass = -1;
			continue;
		}
		m = skip_n(m, i + 1);
		if (m.n && m.p[0] == ' ')
			m = skip_n(m, 1);
		if (!pass) {
			line_stamped = 1;
			m = skip_n(m, journal_host_len(m));
		}
	}
	return m;
}

static void other_line(struct str m, const char *line, size_t len, uint64_t off,
		       uint64_t lineno);

/*
 * Line number lineno, at byte off; frames: the plain frame lines passed
 * over before it (input.c), which the journal probe does not count.
 */
void process_line(const char *line, size_t len, uint64_t off, uint64_t lineno, uint64_t frames)
{
	struct str m;

	lines_seen = lineno - frames;
	line_no = lineno;
	m = strip_prefix((struct str){ line, len });

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
	if (R.row && reg_start(m)) {
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
	if (m.n > 3 && m.p[0] == '-' && m.p[1] == '-' && m.p[2] == ' ')
		journal_probe_end = lines_seen + JOURNAL_PROBE_LINES;	/* "-- Boot ...", "-- Journal begins ..." */
	if (m.n > 8 && boot_line(m)) {
		if (R.row) {
			if (open_report_unfinished() || R.trace != TR_DONE)
				R.corrupted = 1;
			close_report();
		}
		reports_seen = 0;
		last_injection.valid = 0;
		return;
	}
	note_context(m, R.row != NULL);
	/*
	 * "---[ end Kernel panic - not syncing: ... ]---" closes the report it
	 * repeats; the header inside it is not a new one.
	 */
	row = m.n > 9 && m.p[0] == '-' && has_prefix(m, "---[ end ") ? NULL : match_header(m, &h);
	if (!row) {
		if (R.row)
			report_line(m, line, len);
		return;
	}
	if (R.row && continues(row)) {
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

/*
 * Which lines the input may pass over without handing them in, now (see
 * input.c and scan.c).  Outside a report, any line that holds no pattern of
 * scan.c.  In a trace whose culprit is known, the frame lines that
 * process_line() would let by.  Before or after the trace of a report whose
 * title can no longer change but by a line with a pattern (its body hook
 * done or looking only at its body_starts, no "at:" or bare trace awaited),
 * lines without a pattern, as long as they do not reach the report's line
 * limit: each passed line only counts towards it.
 */
void core_pass(struct pass *p)
{
	const struct row *row = R.row;

	p->budget = 0;
	p->pages_end = 0;
	if (keep_text) {
		p->mode = PASS_NONE;
	} else if (!row) {
		p->mode = PASS_IDLE;
	} else if (R.trace == TR_IN) {
		p->mode = R.blame[0] ? PASS_FRAMES : PASS_NONE;
	} else if ((cur.body_wants && !row->body_starts) || (row->flags & F_PENDING) ||
		   (R.trace == TR_NONE && ((row->flags & F_BARE_TRACE) ||
					   (row->from == FROM_AT && !R.blame[0])))) {
		p->mode = PASS_NONE;
	} else {
		int limit = R.trace == TR_NONE ? row->hdr_max : row->tail;

		p->mode = cur.phase_lines < limit ? PASS_COUNT : PASS_NONE;
		p->budget = cur.phase_lines < limit ? (unsigned)(limit - cur.phase_lines) : 0;
		p->pages_end = R.trace == TR_DONE && (row->flags & F_PAGES_END);
	}
}

/* n lines were passed over in PASS_COUNT: they count as the report's. */
void core_passed(unsigned n)
{
	cur.phase_lines += (int)n;
}

void core_init(void)
{
	frames_init();
	headers_init();
	scan_init();
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
