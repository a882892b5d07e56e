// SPDX-License-Identifier: GPL-2.0
/*
 * triage: find every kernel report in a console log, give each a normalised
 * title (syzkaller style), tag it with the rig step and armed fault injectors,
 * and tell injected allocation failures from real bugs.  C11 and libc only.
 *
 * Usage: triage [-r REPORTS_DIR] [-j JSON_FILE] [-f FROM_BYTE] CONSOLE_LOG|-
 *   stdout  "COUNT<TAB>TITLE" per distinct title, most frequent first (ties:
 *           first seen first), nothing else
 *   -f N    count only reports whose first line starts at byte N or later
 *           (markers before N still set the step and the armed injectors)
 *   -r DIR  DIR/NNN-<title-slug>.txt per title (NNN = rank on stdout): a
 *           header, then the lines of the first clean occurrence (else the
 *           first one); DIR/summary.txt, one row per title
 *   -j FILE {"reports":[{"title":"..","count":N,"first_step":N|null,
 *           "injected":bool,"corrupted":bool,"unexplained":bool,
 *           "file":"NNN-...txt"|null}]}
 *   exit    0 every report explained by an armed injector (or none),
 *           1 a report is not, 2 usage or I/O error (one line on stderr)
 *
 * Rig markers, written to /dev/kmsg: "rig: step N begin ...", "rig: step N
 * end", "rig: inject armed NAME", "rig: inject disarmed NAME".  A report
 * belongs to the last step begun (null before the first) and is "injected"
 * when an injector was armed as it started.  Only allocation failures
 * (warn_alloc: page allocation failure, vmemmap alloc failure, vmalloc error)
 * and FAULT_INJECTION stacks are explained by that; anything else is a bug.
 * Injector parameters on the kernel command line (failslab=, fail_vmemmap=,
 * ...) count as armed from boot.  "rig: FAIL <what>: ..." is the rig's own
 * report (a load that lost data), titled "rig: <what>", never explained.
 * Per title: injected = some occurrence was, unexplained = some occurrence
 * was not explained, corrupted = every occurrence was cut off or mixed with
 * another CPU's lines.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define READ_CHUNK	(1u << 20)	/* input buffer */
#define LINE_MAX_LEN	8192		/* longer lines are cut */
#define FN_LEN		96		/* function name */
#define PREFIX_LEN	192		/* title before " in FUNC" */
#define TITLE_LEN	(PREFIX_LEN + FN_LEN + 16)
#define REPORT_BYTES	(64u << 10)	/* lines kept per report */
#define REPORT_LINES	800
#define CTX_LEN		512		/* saved context lines */
#define MAX_TITLES	4096		/* distinct titles tracked */
#define MAX_EXAMPLES	512		/* distinct titles whose text is kept */
#define MAX_ARMED	16
#define ARMED_NAME	32

static const char *prog = "triage";

static void die_io(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n);

	if (!p)
		die_io("out of memory");
	return p;
}

/* ---- small length-aware string helpers ---------------------------------- */

struct str {
	const char *p;
	size_t n;
};

static int has_prefix(struct str s, const char *lit)
{
	size_t l = strlen(lit);

	return s.n >= l && memcmp(s.p, lit, l) == 0;
}

static struct str skip_n(struct str s, size_t k)
{
	if (k > s.n)
		k = s.n;
	s.p += k;
	s.n -= k;
	return s;
}

static struct str skip_ws(struct str s)
{
	while (s.n && (*s.p == ' ' || *s.p == '\t'))
		s = skip_n(s, 1);
	return s;
}

static const char *find_lit(struct str s, const char *lit)
{
	return memmem(s.p, s.n, lit, strlen(lit));
}

static int is_ident(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '$';
}

static int is_hex(int c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
	       (c >= 'A' && c <= 'F');
}

/* Copy at most cap-1 bytes, replacing anything unprintable. */
static void copy_clean(char *dst, size_t cap, const char *src, size_t n)
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
 * Parse "name+0xOFF[/0xSIZE]" at s; *name is the name without compiler
 * suffixes (.isra.0, .constprop.0, .part.0, .cold).  Returns 1 on success.
 */
static int sym_span(struct str s, struct str *name)
{
	size_t i = 0, end;

	if (!s.n || !(is_ident((unsigned char)s.p[0])) ||
	    (s.p[0] >= '0' && s.p[0] <= '9') || s.p[0] == '.')
		return 0;
	end = 0;
	while (i < s.n && is_ident((unsigned char)s.p[i])) {
		if (s.p[i] == '.' && !end)
			end = i;
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

static int parse_sym(struct str s, char *out)
{
	struct str name;

	if (!sym_span(s, &name))
		return 0;
	copy_clean(out, FN_LEN, name.p, name.n);
	return 1;
}

/* ---- report kinds -------------------------------------------------------- */

enum {
	SK_COMMON = 1 << 0,	/* reporting, exception entry, dump_stack */
	SK_SCHED = 1 << 1,	/* scheduler, sleeping, waiting */
	SK_ALLOC = 1 << 2,	/* page and slab allocators */
	SK_FAULT = 1 << 3,	/* fault injection */
	SK_LIST = 1 << 4,	/* list debugging */
	SK_KASAN = 1 << 5,	/* sanitizers and mem* helpers */
	SK_LOCK = 1 << 6,	/* lockdep and lock primitives */
	SK_FREE = 1 << 7,	/* page and slab freeing */
	SK_STALL = 1 << 8,	/* timer interrupt and stall printers */
};

enum {
	F_NEEDS_FUNC = 1 << 0,	/* a title without a function is corrupted */
	F_EXCUSABLE = 1 << 1,	/* an armed injector explains it */
	F_STALL = 1 << 2,	/* blame the interrupted task, not the irq */
	F_END_MARK = 1 << 3,	/* closes at "---[ end trace" */
	F_NO_TRACE = 1 << 4,	/* a one-line report */
	F_KASAN_END = 1 << 5,	/* closes at a "=====" line */
	F_NO_BLAME = 1 << 6,	/* the title names no function */
};

enum kind {
	K_NONE,
	K_PENDING,	/* "cut here" seen, waiting for WARNING / kernel BUG */
	K_WARN,
	K_BUG,		/* generic "BUG: ..." */
	K_PF,		/* NULL dereference / page fault */
	K_DIE,		/* "Oops: 0000 [#1]", "invalid opcode: 0000 [#1]" */
	K_GPF,
	K_KBUG,		/* kernel BUG at */
	K_LIST,
	K_PANIC,
	K_KASAN,
	K_KFENCE,
	K_LEAK,
	K_DEADLOCK,
	K_LOCKDEP,	/* other lockdep / RCU lockdep and generic WARNING: */
	K_HUNG,
	K_SOFTLOCKUP,
	K_HARDLOCKUP,
	K_RCU,
	K_ALLOC,	/* page allocation failure, vmalloc error */
	K_VMEMMAP,
	K_FAULT,
	K_BADPAGE,
	K_RSS,
	K_RIG,		/* the rig's own "rig: FAIL ..." (e.g. data loss in a load) */
	K_INFO,
	NR_KINDS
};

struct kind_info {
	unsigned flags;
	unsigned skip;
	int hdr_max;	/* lines before a trace starts, then give up */
	int tail;	/* lines kept after the trace */
};

#define SK_BASE (SK_COMMON)
static const struct kind_info kinds[NR_KINDS] = {
	[K_PENDING]	= { 0, SK_BASE, 8, 0 },
	[K_WARN]	= { F_NEEDS_FUNC | F_END_MARK, SK_BASE, 60, 30 },
	[K_BUG]		= { 0, SK_BASE | SK_SCHED | SK_LOCK, 60, 20 },
	[K_PF]		= { F_NEEDS_FUNC | F_END_MARK, SK_BASE, 60, 30 },
	[K_DIE]		= { F_NEEDS_FUNC | F_END_MARK, SK_BASE, 60, 30 },
	[K_GPF]		= { F_NEEDS_FUNC | F_END_MARK, SK_BASE | SK_KASAN, 60, 30 },
	[K_KBUG]	= { F_NEEDS_FUNC | F_END_MARK, SK_BASE, 60, 30 },
	[K_LIST]	= { F_NEEDS_FUNC | F_END_MARK, SK_BASE | SK_LIST, 60, 30 },
	[K_PANIC]	= { F_END_MARK | F_NO_BLAME, SK_BASE, 30, 10 },
	[K_KASAN]	= { F_NEEDS_FUNC | F_KASAN_END, SK_BASE | SK_KASAN, 30, 120 },
	[K_KFENCE]	= { F_NEEDS_FUNC | F_KASAN_END, SK_BASE | SK_KASAN, 30, 60 },
	[K_LEAK]	= { F_NEEDS_FUNC, SK_BASE | SK_ALLOC, 12, 0 },
	[K_DEADLOCK]	= { F_NEEDS_FUNC, SK_BASE | SK_LOCK | SK_SCHED, 400, 0 },
	[K_LOCKDEP]	= { 0, SK_BASE | SK_LOCK, 200, 0 },
	[K_HUNG]	= { F_NEEDS_FUNC | F_STALL, SK_BASE | SK_SCHED | SK_LOCK, 12, 0 },
	[K_SOFTLOCKUP]	= { F_NEEDS_FUNC | F_STALL, SK_BASE | SK_STALL | SK_LOCK, 40, 0 },
	[K_HARDLOCKUP]	= { F_NEEDS_FUNC | F_STALL, SK_BASE | SK_STALL | SK_LOCK, 40, 0 },
	[K_RCU]		= { F_NEEDS_FUNC | F_STALL, SK_BASE | SK_STALL | SK_LOCK, 40, 60 },
	[K_ALLOC]	= { F_NEEDS_FUNC | F_EXCUSABLE, SK_BASE | SK_ALLOC, 12, 40 },
	[K_VMEMMAP]	= { F_NEEDS_FUNC | F_EXCUSABLE, SK_BASE | SK_ALLOC, 12, 40 },
	[K_FAULT]	= { F_EXCUSABLE, SK_BASE | SK_ALLOC | SK_FAULT, 6, 0 },
	[K_BADPAGE]	= { F_NEEDS_FUNC, SK_BASE | SK_FREE | SK_ALLOC, 30, 0 },
	[K_RSS]		= { F_NO_TRACE | F_NO_BLAME, 0, 0, 0 },
	[K_RIG]		= { F_NO_TRACE | F_NO_BLAME, 0, 0, 0 },
	[K_INFO]	= { 0, SK_BASE | SK_LOCK, 40, 0 },
};

/*
 * Frames that never get the blame.  A trailing '*' matches a prefix.  The
 * classes are masked per kind: a lock primitive is noise in a lockdep splat
 * but could be the culprit of a NULL dereference.
 */
static const struct skip_pat {
	const char *pat;
	unsigned cls;
} skip_pats[] = {
	/* reporting and exception entry */
	{ "dump_stack*", SK_COMMON }, { "show_stack*", SK_COMMON },
	{ "show_trace_log_lvl", SK_COMMON }, { "sched_show_task", SK_COMMON },
	{ "__warn*", SK_COMMON }, { "warn_slowpath*", SK_COMMON },
	{ "report_bug", SK_COMMON }, { "handle_bug", SK_COMMON },
	{ "exc_invalid_op", SK_COMMON }, { "asm_exc_invalid_op", SK_COMMON },
	{ "panic", SK_COMMON }, { "__panic", SK_COMMON },
	{ "check_panic_on_warn", SK_COMMON }, { "do_trap", SK_COMMON },
	{ "do_error_trap", SK_COMMON }, { "die", SK_COMMON },
	{ "__die*", SK_COMMON }, { "die_addr", SK_COMMON },
	{ "oops_*", SK_COMMON }, { "printk*", SK_COMMON },
	{ "_printk*", SK_COMMON }, { "vprintk*", SK_COMMON },
	{ "warn_alloc*", SK_COMMON }, { "page_fault_oops", SK_COMMON },
	{ "kernelmode_fixup_or_oops*", SK_COMMON }, { "__bad_area*", SK_COMMON },
	{ "bad_area*", SK_COMMON }, { "no_context", SK_COMMON },
	{ "exc_page_fault", SK_COMMON }, { "asm_exc_page_fault", SK_COMMON },
	{ "handle_page_fault", SK_COMMON }, { "do_user_addr_fault", SK_COMMON },
	{ "exc_general_protection", SK_COMMON },
	{ "asm_exc_general_protection", SK_COMMON },
	{ "fixup_exception", SK_COMMON }, { "ex_handler_*", SK_COMMON },
	{ "asm_sysvec_*", SK_COMMON }, { "sysvec_*", SK_COMMON },
	{ "__sysvec_*", SK_COMMON }, { "asm_common_interrupt", SK_COMMON },
	{ "common_interrupt", SK_COMMON }, { "entry_SYSCALL*", SK_COMMON },
	{ "nmi_cpu_backtrace*", SK_COMMON }, { "nmi_trigger_cpumask_backtrace", SK_COMMON },
	{ "arch_trigger_cpumask_backtrace", SK_COMMON },
	{ "trigger_single_cpu_backtrace", SK_COMMON },
	{ "dump_cpu_task", SK_COMMON }, { "bug_handler", SK_COMMON },
	/* scheduler and waiting */
	{ "__schedule*", SK_SCHED }, { "schedule", SK_SCHED },
	{ "schedule_*", SK_SCHED }, { "io_schedule*", SK_SCHED },
	{ "preempt_schedule*", SK_SCHED }, { "__cond_resched*", SK_SCHED },
	{ "_cond_resched", SK_SCHED }, { "do_nanosleep", SK_SCHED },
	{ "hrtimer_nanosleep", SK_SCHED }, { "msleep*", SK_SCHED },
	{ "usleep_range*", SK_SCHED }, { "wait_for_completion*", SK_SCHED },
	{ "__wait_for_common", SK_SCHED }, { "wait_for_common*", SK_SCHED },
	{ "do_wait_for_common", SK_SCHED }, { "__wait_event*", SK_SCHED },
	{ "__mutex_lock*", SK_SCHED | SK_LOCK }, { "mutex_lock*", SK_SCHED | SK_LOCK },
	{ "rwsem_down_*", SK_SCHED | SK_LOCK }, { "__rwsem_down*", SK_SCHED | SK_LOCK },
	{ "down_read*", SK_SCHED | SK_LOCK }, { "down_write*", SK_SCHED | SK_LOCK },
	{ "down", SK_SCHED | SK_LOCK }, { "__down*", SK_SCHED | SK_LOCK },
	{ "down_interruptible", SK_SCHED | SK_LOCK }, { "down_killable", SK_SCHED | SK_LOCK },
	{ "__schedule_bug", SK_SCHED }, { "schedule_debug*", SK_SCHED },
	{ "__might_sleep", SK_SCHED | SK_LOCK }, { "__might_resched", SK_SCHED | SK_LOCK },
	{ "___might_sleep", SK_SCHED | SK_LOCK }, { "__might_fault", SK_SCHED | SK_LOCK },
	{ "rt_mutex*", SK_SCHED | SK_LOCK }, { "__rt_mutex*", SK_SCHED | SK_LOCK },
	{ "folio_wait*", SK_SCHED }, { "__folio_lock*", SK_SCHED },
	{ "__lock_page*", SK_SCHED }, { "wait_on_page_bit*", SK_SCHED },
	{ "bit_wait*", SK_SCHED }, { "out_of_line_wait_on_bit*", SK_SCHED },
	{ "__wait_on_bit*", SK_SCHED }, { "synchronize_rcu*", SK_SCHED },
	{ "__synchronize_srcu", SK_SCHED }, { "__wait_rcu_gp", SK_SCHED },
	{ "percpu_down_write", SK_SCHED | SK_LOCK }, { "percpu_rwsem_wait", SK_SCHED | SK_LOCK },
	{ "kthread_park", SK_SCHED },
	/* allocators */
	{ "__alloc_pages*", SK_ALLOC }, { "alloc_pages*", SK_ALLOC },
	{ "alloc_page", SK_ALLOC }, { "alloc_page_*", SK_ALLOC },
	{ "__folio_alloc*", SK_ALLOC }, { "folio_alloc*", SK_ALLOC },
	{ "vma_alloc_folio", SK_ALLOC }, { "__get_free_pages", SK_ALLOC },
	{ "get_zeroed_page", SK_ALLOC }, { "prepare_alloc_pages", SK_ALLOC },
	{ "get_page_from_freelist", SK_ALLOC }, { "rmqueue*", SK_ALLOC },
	{ "kmalloc*", SK_ALLOC }, { "__kmalloc*", SK_ALLOC },
	{ "kzalloc*", SK_ALLOC }, { "kcalloc*", SK_ALLOC },
	{ "krealloc*", SK_ALLOC }, { "__krealloc", SK_ALLOC },
	{ "kmem_cache_alloc*", SK_ALLOC }, { "__kmem_cache_alloc*", SK_ALLOC },
	{ "kmem_cache_zalloc", SK_ALLOC }, { "slab_alloc*", SK_ALLOC },
	{ "__slab_alloc*", SK_ALLOC }, { "___slab_alloc", SK_ALLOC },
	{ "slab_pre_alloc_hook", SK_ALLOC }, { "slab_post_alloc_hook", SK_ALLOC },
	{ "new_slab", SK_ALLOC }, { "allocate_slab", SK_ALLOC },
	{ "alloc_slab_page", SK_ALLOC }, { "kvmalloc*", SK_ALLOC },
	{ "kvzalloc*", SK_ALLOC }, { "kvcalloc", SK_ALLOC },
	{ "kvrealloc", SK_ALLOC }, { "__vmalloc*", SK_ALLOC },
	{ "vmalloc*", SK_ALLOC }, { "vzalloc*", SK_ALLOC },
	{ "__vmalloc_area_node", SK_ALLOC }, { "kmemdup*", SK_ALLOC },
	{ "kstrdup*", SK_ALLOC }, { "kstrndup", SK_ALLOC },
	{ "kasprintf", SK_ALLOC }, { "kvasprintf*", SK_ALLOC },
	{ "memdup_user*", SK_ALLOC }, { "vmemdup_user", SK_ALLOC },
	{ "vmemmap_alloc_block*", SK_ALLOC }, { "__earlyonly_bootmem_alloc", SK_ALLOC },
	{ "memblock_alloc*", SK_ALLOC }, { "kmemleak_alloc*", SK_ALLOC },
	{ "alloc_pages_exact*", SK_ALLOC }, { "kmem_cache_alloc_bulk", SK_ALLOC },
	{ "alloc_slab_obj_exts", SK_ALLOC },
	/* fault injection */
	{ "should_fail*", SK_FAULT }, { "__should_fail*", SK_FAULT },
	{ "fail_dump", SK_FAULT }, { "should_failslab", SK_FAULT },
	{ "__should_failslab", SK_FAULT },
	/* fail_function fires from a kprobe's int3: the probed function is next */
	{ "fei_*", SK_FAULT }, { "aggr_pre_handler", SK_FAULT },
	{ "opt_pre_handler", SK_FAULT }, { "optimized_callback", SK_FAULT },
	{ "kprobe_*", SK_FAULT }, { "do_int3*", SK_FAULT },
	{ "exc_int3", SK_FAULT }, { "asm_exc_int3", SK_FAULT },
	{ "kprobe_ftrace_handler", SK_FAULT }, { "ftrace_*", SK_FAULT },
	/* list debugging */
	{ "__list_add_valid*", SK_LIST }, { "__list_del_entry_valid*", SK_LIST },
	{ "__list_add*", SK_LIST }, { "__list_del*", SK_LIST },
	{ "list_add*", SK_LIST }, { "list_del*", SK_LIST },
	{ "__list_valid_slowpath", SK_LIST },
	/* sanitizers */
	{ "kasan_*", SK_KASAN }, { "__kasan_*", SK_KASAN },
	{ "____kasan_*", SK_KASAN }, { "__asan_*", SK_KASAN },
	{ "check_memory_region*", SK_KASAN }, { "print_report", SK_KASAN },
	{ "print_address_description*", SK_KASAN }, { "kfence_*", SK_KASAN },
	{ "__kfence_*", SK_KASAN }, { "memcpy", SK_KASAN }, { "__memcpy", SK_KASAN },
	{ "memmove", SK_KASAN }, { "__memmove", SK_KASAN }, { "memset", SK_KASAN },
	{ "__memset", SK_KASAN }, { "memcmp", SK_KASAN }, { "strlen", SK_KASAN },
	{ "strnlen", SK_KASAN }, { "strcmp", SK_KASAN }, { "strncmp", SK_KASAN },
	{ "strcpy", SK_KASAN }, { "strncpy", SK_KASAN }, { "strscpy", SK_KASAN },
	{ "strlcpy", SK_KASAN }, { "kfree", SK_KASAN }, { "kmem_cache_free", SK_KASAN },
	{ "slab_free*", SK_KASAN }, { "do_slab_free", SK_KASAN },
	{ "__kmem_cache_free", SK_KASAN }, { "kvfree", SK_KASAN },
	/* lockdep and lock primitives */
	{ "lock_acquire*", SK_LOCK }, { "__lock_acquire*", SK_LOCK },
	{ "lock_release", SK_LOCK }, { "__lock_release", SK_LOCK },
	{ "lock_acquired", SK_LOCK }, { "lock_contended", SK_LOCK },
	{ "validate_chain", SK_LOCK }, { "check_prev_add", SK_LOCK },
	{ "check_prevs_add", SK_LOCK }, { "check_noncircular", SK_LOCK },
	{ "check_deadlock", SK_LOCK }, { "print_deadlock_bug", SK_LOCK },
	{ "print_circular_bug*", SK_LOCK }, { "print_usage_bug", SK_LOCK },
	{ "lockdep_*", SK_LOCK }, { "__lockdep_*", SK_LOCK },
	{ "lock_is_held*", SK_LOCK }, { "debug_check_no_locks*", SK_LOCK },
	{ "mark_lock*", SK_LOCK }, { "mark_usage", SK_LOCK },
	{ "_raw_spin_*", SK_LOCK }, { "_raw_read_*", SK_LOCK },
	{ "_raw_write_*", SK_LOCK }, { "do_raw_spin_*", SK_LOCK },
	{ "do_raw_read_*", SK_LOCK }, { "do_raw_write_*", SK_LOCK },
	{ "__raw_spin_*", SK_LOCK }, { "queued_spin_lock_slowpath", SK_LOCK },
	{ "native_queued_spin_lock_slowpath", SK_LOCK },
	{ "__pv_queued_spin_lock_slowpath", SK_LOCK }, { "spin_bug", SK_LOCK },
	{ "spin_dump", SK_LOCK }, { "mutex_unlock", SK_LOCK },
	{ "up_read", SK_LOCK }, { "up_write", SK_LOCK },
	{ "rcu_lock_acquire", SK_LOCK }, { "rcu_read_lock*", SK_LOCK },
	{ "rcu_read_unlock*", SK_LOCK }, { "debug_lockdep_rcu_enabled", SK_LOCK },
	/* page and slab freeing */
	{ "bad_page", SK_FREE }, { "free_page_is_bad*", SK_FREE },
	{ "free_pages_prepare*", SK_FREE }, { "free_pcp_prepare", SK_FREE },
	{ "__free_pages*", SK_FREE }, { "free_unref_page*", SK_FREE },
	{ "free_pages", SK_FREE }, { "__free_page", SK_FREE },
	{ "free_the_page", SK_FREE }, { "__put_page", SK_FREE },
	{ "put_page", SK_FREE }, { "__folio_put*", SK_FREE },
	{ "folio_put*", SK_FREE }, { "release_pages", SK_FREE },
	{ "check_new_page*", SK_FREE }, { "check_new_pages", SK_FREE },
	{ "free_pages_check*", SK_FREE }, { "__free_one_page", SK_FREE },
	{ "free_one_page", SK_FREE }, { "free_pcppages_bulk", SK_FREE },
	{ "destroy_large_folio", SK_FREE }, { "free_compound_page", SK_FREE },
	/* stall printers and the timer interrupt that runs them */
	{ "rcu_sched_clock_irq*", SK_STALL }, { "print_cpu_stall*", SK_STALL },
	{ "print_other_cpu_stall*", SK_STALL }, { "check_cpu_stall*", SK_STALL },
	{ "rcu_pending", SK_STALL }, { "rcu_dump_cpu_stacks", SK_STALL },
	{ "update_process_times", SK_STALL }, { "tick_*", SK_STALL },
	{ "hrtimer_interrupt", SK_STALL }, { "__hrtimer_run_queues", SK_STALL },
	{ "watchdog_timer_fn", SK_STALL }, { "irq_exit_rcu", SK_STALL },
	{ "__irq_exit_rcu", SK_STALL }, { "__do_softirq", SK_STALL },
	{ "do_softirq*", SK_STALL }, { "watchdog_overflow_callback", SK_STALL },
	{ "__perf_event_overflow", SK_STALL }, { "handle_pmi_common", SK_STALL },
	{ "perf_event_nmi_handler", SK_STALL }, { "nmi_handle", SK_STALL },
	{ "default_do_nmi", SK_STALL }, { "exc_nmi", SK_STALL },
	{ "asm_exc_nmi", SK_STALL }, { "end_repeat_nmi", SK_STALL },
};

static int pat_match(const char *pat, struct str name)
{
	size_t l = strlen(pat);

	if (l && pat[l - 1] == '*')
		return name.n >= l - 1 && memcmp(pat, name.p, l - 1) == 0;
	return name.n == l && memcmp(pat, name.p, l) == 0;
}

/* Memo of name -> skip classes: the same few hundred frames recur. */
#define MEMO_SIZE 8192
#define MEMO_NAME 64
static struct memo {
	char name[MEMO_NAME];
	unsigned char len;
	unsigned char used;
	unsigned cls;
} *memo;
static unsigned memo_used;

static unsigned hash_mem(const char *s, size_t n)
{
	unsigned h = 2166136261u;

	while (n--)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

static unsigned hash_str(const char *s)
{
	return hash_mem(s, strlen(s));
}

/* Cheap hash for function names: their length, head and tail. */
static unsigned hash_name(const char *s, size_t n)
{
	uint64_t a = 0, b = 0;

	memcpy(&a, s, n < 8 ? n : 8);
	if (n > 8)
		memcpy(&b, s + n - (n < 16 ? n - 8 : 8), n < 16 ? n - 8 : 8);
	a = (a ^ (b * 0x9e3779b97f4a7c15u) ^ n) * 0xff51afd7ed558ccdu;
	return (unsigned)(a >> 32);
}

static unsigned classes_of(struct str name)
{
	unsigned cls = 0, h = 0, i;
	size_t k;
	int memoize = name.n < MEMO_NAME;

	if (memoize) {
		h = hash_name(name.p, name.n) & (MEMO_SIZE - 1);
		for (i = 0; i < MEMO_SIZE && memo[h].used; i++) {
			if (memo[h].len == name.n && memcmp(memo[h].name, name.p, name.n) == 0)
				return memo[h].cls;
			h = (h + 1) & (MEMO_SIZE - 1);
		}
	}
	for (k = 0; k < sizeof(skip_pats) / sizeof(skip_pats[0]); k++)
		if (pat_match(skip_pats[k].pat, name))
			cls |= skip_pats[k].cls;
	if (memoize && memo_used < MEMO_SIZE * 3 / 4) {
		/* h is the free slot the lookup stopped at */
		memcpy(memo[h].name, name.p, name.n);
		memo[h].len = (unsigned char)name.n;
		memo[h].cls = cls;
		memo[h].used = 1;
		memo_used++;
	}
	return cls;
}

/* ---- state --------------------------------------------------------------- */

enum trace_state { TR_NONE, TR_IN, TR_DONE };

struct report {
	enum kind kind;
	uint64_t off;		/* byte offset of its first line */
	uint64_t lineno;
	int step;		/* -1: before the first step marker */
	int armed;		/* an injector was armed when it started */
	char armed_names[MAX_ARMED * (ARMED_NAME + 1)];
	char step_line[CTX_LEN];
	char prefix[PREFIX_LEN];
	char blame[FN_LEN];
	char held_at[FN_LEN];	/* lockdep "#0: ... at: func", if no trace */
	char access[8];		/* KASAN: Read / Write */
	long warn_cpu, warn_pid;
	enum trace_state trace;
	int irq_depth;		/* inside <IRQ>/<NMI>/<SOFTIRQ> */
	int task_open;		/* <TASK> seen, </TASK> not yet */
	int phase_lines;	/* lines in the current phase */
	int corrupted;
	int has_hw, has_mod;
	char *buf;		/* the report's own lines */
	size_t len;
	unsigned nlines;
	int truncated;
};

struct title_ent {
	char *title;
	unsigned long count;
	unsigned long seq;	/* order of first appearance */
	int first_step;
	int injected;		/* some occurrence had an injector armed */
	int unexplained;	/* some occurrence was not excused */
	int all_corrupted;
	/* example: the first clean occurrence, else the first one */
	char *text;
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

static struct {
	const char *reports_dir;
	const char *json_file;
	uint64_t from;
} opt;

static int keep_text;			/* -r given: keep report lines */
static struct report cur;
static int cur_step = -1;
static char cur_step_line[CTX_LEN];
static char armed[MAX_ARMED][ARMED_NAME];
static int narmed;
static char last_hw[CTX_LEN], last_mod[CTX_LEN];

static struct title_ent *titles;
static unsigned ntitles;
static unsigned long overflow_count;
static unsigned *title_hash;		/* index + 1, 0 = empty */
#define TITLE_HASH (MAX_TITLES * 2)

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

/* "rig: step N begin ...", "rig: step N end", "rig: inject (armed|disarmed) NAME" */
static void parse_marker(struct str m, const char *line, size_t len)
{
	char name[ARMED_NAME];
	size_t i = 0;
	int k, arm;

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
	if (has_prefix(m, "armed ")) {
		arm = 1;
		m = skip_n(m, 6);
	} else if (has_prefix(m, "disarmed ")) {
		arm = 0;
		m = skip_n(m, 9);
	} else {
		return;
	}
	while (i < m.n && i < sizeof(name) - 1 && m.p[i] != ' ' && m.p[i] != '\t')
		i++;
	if (!i)
		return;
	copy_clean(name, sizeof(name), m.p, i);
	for (k = 0; k < narmed; k++)
		if (strcmp(armed[k], name) == 0)
			break;
	if (arm && k == narmed && narmed < MAX_ARMED) {
		strcpy(armed[narmed++], name);
	} else if (!arm && k < narmed) {
		memmove(armed[k], armed[k + 1], (size_t)(narmed - k - 1) * ARMED_NAME);
		narmed--;
	} else if (!arm && strcmp(name, "all") == 0) {
		narmed = 0;
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
	size_t i, k;

	for (i = 0; i < sizeof(params) / sizeof(params[0]); i++) {
		const char *at = find_lit(m, params[i]);

		if (!at || (at > m.p && at[-1] != ' '))
			continue;
		snprintf(name, sizeof(name), "boot:%.*s", (int)(strlen(params[i]) - 1), params[i]);
		for (k = 0; k < (size_t)narmed; k++)
			if (strcmp(armed[k], name) == 0)
				break;
		if (k == (size_t)narmed && narmed < MAX_ARMED)
			strcpy(armed[narmed++], name);
	}
}

/* ---- titles -------------------------------------------------------------- */

/*
 * Turn free text from a report header into a stable title fragment: stop at
 * the first word that carries data (addresses, numbers, key:value, a path
 * after "at", "in process", "on CPU#"), drop bracketed numbers.
 */
static void header_words(char *dst, size_t cap, struct str s)
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
static void sanitize_reason(char *dst, size_t cap, struct str s)
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

static size_t append(char *t, size_t n, size_t cap, const char *s)
{
	size_t l = strlen(s);

	if (n + l >= cap)
		l = cap - 1 - n;
	memcpy(t + n, s, l);
	t[n + l] = 0;
	return n + l;
}

static void build_title(const struct report *r, char *t, size_t cap)
{
	size_t n = append(t, 0, cap, r->prefix);

	if (r->kind == K_KASAN && r->access[0]) {
		n = append(t, n, cap, " ");
		n = append(t, n, cap, r->access);
	}
	if (r->blame[0]) {
		n = append(t, n, cap, " in ");
		append(t, n, cap, r->blame);
	}
}

static struct title_ent *find_title(const char *t, int create)
{
	unsigned h = hash_str(t) % TITLE_HASH;

	while (title_hash[h]) {
		struct title_ent *e = &titles[title_hash[h] - 1];

		if (strcmp(e->title, t) == 0)
			return e;
		h = (h + 1) % TITLE_HASH;
	}
	if (!create || ntitles >= MAX_TITLES)
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

static void save_example(struct title_ent *e, const struct report *r)
{
	free(e->text);
	free(e->ex_armed_names);
	free(e->ex_step_line);
	e->text = xmalloc(r->len + 1);
	memcpy(e->text, r->buf, r->len);
	e->text[r->len] = 0;
	e->text_len = r->len;
	e->ex_corrupted = r->corrupted;
	e->ex_step = r->step;
	e->ex_armed = r->armed;
	e->ex_armed_names = strdup(r->armed_names);
	e->ex_step_line = strdup(r->step_line);
	e->ex_off = r->off;
	e->ex_lineno = r->lineno;
	e->ex_has_hw = r->has_hw;
	e->ex_has_mod = r->has_mod;
	strcpy(e->ex_hw, last_hw);
	strcpy(e->ex_mod, last_mod);
	if (!e->ex_armed_names || !e->ex_step_line)
		die_io("out of memory");
}

static void consider(const char *fn);

static void close_report(void)
{
	struct report *r = &cur;
	const struct kind_info *ki = &kinds[r->kind];
	char t[TITLE_LEN];
	struct title_ent *e;

	if (r->kind == K_NONE)
		return;
	if (r->kind == K_PENDING)
		goto out;
	if (!r->blame[0] && r->held_at[0])
		consider(r->held_at);
	if ((ki->flags & F_NEEDS_FUNC) && !r->blame[0])
		r->corrupted = 1;
	if (r->off < opt.from)
		goto out;
	build_title(r, t, sizeof(t));
	e = find_title(t, 1);
	if (!e) {
		overflow_count++;
		goto out;
	}
	if (!e->count)
		e->first_step = r->step;
	e->count++;
	if (r->armed)
		e->injected = 1;
	if (!(r->armed && (ki->flags & F_EXCUSABLE)))
		e->unexplained = 1;
	if (!r->corrupted)
		e->all_corrupted = 0;
	if (keep_text && e->seq < MAX_EXAMPLES &&
	    (!e->text || (e->ex_corrupted && !r->corrupted)))
		save_example(e, r);
out:
	r->kind = K_NONE;
}

/* ---- line classification ------------------------------------------------ */

struct start {
	enum kind kind;
	char prefix[PREFIX_LEN];
	char hint[FN_LEN];	/* function named by the header line itself */
	long cpu, pid;
};

/* The last "func+0x../0x.." token of a line, e.g. of "WARNING: CPU: ..". */
static void last_sym(struct str s, char *out)
{
	size_t i = s.n;

	out[0] = 0;
	while (i > 0) {
		size_t e = i;

		while (i > 0 && s.p[i - 1] != ' ')
			i--;
		if (parse_sym((struct str){ s.p + i, e - i }, out))
			return;
		while (i > 0 && s.p[i - 1] == ' ')
			i--;
	}
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

/* "<text>: XXXX [#N]" as printed by die() */
static int die_line(struct str m, struct str *what)
{
	const char *c = memchr(m.p, ':', m.n < 80 ? m.n : 80);
	struct str rest;

	if (!c)
		return 0;
	rest = skip_n(m, (size_t)(c - m.p) + 1);
	if (rest.n < 10 || rest.p[0] != ' ' || !is_hex((unsigned char)rest.p[1]) ||
	    !is_hex((unsigned char)rest.p[2]) || !is_hex((unsigned char)rest.p[3]) ||
	    !is_hex((unsigned char)rest.p[4]) || memcmp(rest.p + 5, " [#", 3) != 0)
		return 0;
	what->p = m.p;
	what->n = (size_t)(c - m.p);
	return 1;
}

/*
 * warn_alloc(): "<comm>: page allocation failure: order:..." (comm may hold
 * ':').  Sets the title prefix and returns the kind, or K_NONE.
 */
static enum kind warn_alloc_line(struct str m, char *prefix, size_t cap)
{
	size_t lim = m.n < 24 ? m.n : 24;
	const char *c = memchr(m.p, ':', lim);

	for (; c; c = memchr(c + 1, ':', lim - (size_t)(c + 1 - m.p))) {
		struct str r = skip_n(m, (size_t)(c - m.p) + 1);

		if (has_prefix(r, " page allocation failure: order:")) {
			snprintf(prefix, cap, "page allocation failure");
			return K_ALLOC;
		}
		if (has_prefix(r, " vmemmap alloc failure: order:")) {
			snprintf(prefix, cap, "vmemmap alloc failure");
			return K_VMEMMAP;
		}
		if (has_prefix(r, " vmalloc error: size")) {
			snprintf(prefix, cap, "vmalloc error");
			return K_ALLOC;
		}
	}
	return K_NONE;
}

static void set_prefix(struct start *st, const char *p)
{
	size_t n = strlen(p);

	if (n >= sizeof(st->prefix))
		n = sizeof(st->prefix) - 1;
	memcpy(st->prefix, p, n);
	st->prefix[n] = 0;
}

/* Is this message the first line of a kernel report?  Fills *st when so. */
static int classify_start(struct str m, struct start *st)
{
	struct str what;
	enum kind k;

	if (!m.n)
		return 0;
	st->hint[0] = 0;
	st->cpu = st->pid = -1;
	if (has_prefix(m, "watchdog: "))
		m = skip_n(m, 10);
	else if (has_prefix(m, "NMI watchdog: "))
		m = skip_n(m, 14);
	else if (has_prefix(m, "rcu: "))
		m = skip_n(m, 5);

	switch (m.p[0]) {
	case 'r':
		/* "rig: FAIL <what>: <details>" -> "rig: <what>" */
		if (has_prefix(m, "rig: FAIL ")) {
			struct str w = skip_n(m, 10);
			const char *c = memchr(w.p, ':', w.n);
			char tmp[PREFIX_LEN - 8];

			copy_clean(tmp, sizeof(tmp), w.p, c ? (size_t)(c - w.p) : w.n);
			st->kind = K_RIG;
			snprintf(st->prefix, sizeof(st->prefix), "rig: %s", tmp);
			return 1;
		}
		return 0;
	case 'B':
		if (has_prefix(m, "BUG: ")) {
			struct str b = skip_n(m, 5);

			if (has_prefix(b, "KASAN: ") || has_prefix(b, "KFENCE: ")) {
				int kf = b.p[1] == 'F';
				const char *in = find_lit(b, " in ");
				struct str ty = skip_n(b, kf ? 8 : 7);

				st->kind = kf ? K_KFENCE : K_KASAN;
				if (in) {
					ty.n = (size_t)(in - ty.p);
					parse_sym(skip_n(b, (size_t)(in - b.p) + 4), st->hint);
				}
				char tmp[PREFIX_LEN - 16];

				copy_clean(tmp, sizeof(tmp), ty.p, ty.n);
				snprintf(st->prefix, sizeof(st->prefix), "%s: %s",
					 kf ? "KFENCE" : "KASAN", tmp);
				return 1;
			}
			if (has_prefix(b, "kernel NULL pointer dereference") ||
			    has_prefix(b, "unable to handle kernel NULL pointer dereference")) {
				st->kind = K_PF;
				set_prefix(st, "BUG: kernel NULL pointer dereference");
				return 1;
			}
			if (has_prefix(b, "unable to handle page fault")) {
				st->kind = K_PF;
				set_prefix(st, "BUG: unable to handle page fault");
				return 1;
			}
			if (has_prefix(b, "unable to handle kernel paging request")) {
				st->kind = K_PF;
				set_prefix(st, "BUG: unable to handle kernel paging request");
				return 1;
			}
			if (has_prefix(b, "soft lockup")) {
				st->kind = K_SOFTLOCKUP;
				set_prefix(st, "BUG: soft lockup");
				st->pid = -1;
				return 1;
			}
			if (has_prefix(b, "Bad page state")) {
				st->kind = K_BADPAGE;
				set_prefix(st, "BUG: Bad page state");
				return 1;
			}
			if (has_prefix(b, "Bad rss-counter state")) {
				st->kind = K_RSS;
				set_prefix(st, "BUG: Bad rss-counter state");
				return 1;
			}
			st->kind = K_BUG;
			char tmp[PREFIX_LEN - 8];

			header_words(tmp, sizeof(tmp), b);
			snprintf(st->prefix, sizeof(st->prefix), "BUG: %s", tmp[0] ? tmp : "unknown");
			return 1;
		}
		break;
	case 'W':
		if (has_prefix(m, "WARNING: CPU: ")) {
			st->kind = K_WARN;
			set_prefix(st, "WARNING");
			last_sym(m, st->hint);
			st->cpu = num_after(m, "CPU: ");
			st->pid = num_after(m, " PID: ");
			return 1;
		}
		if (has_prefix(m, "WARNING: ")) {
			struct str w = skip_n(m, 9);

			if (find_lit(w, "possible circular locking") ||
			    find_lit(w, "possible recursive locking") ||
			    find_lit(w, "lock inversion") ||
			    find_lit(w, "-safe -> ")) {
				st->kind = K_DEADLOCK;
				set_prefix(st, "possible deadlock");
				return 1;
			}
			if (has_prefix(w, "inconsistent lock state")) {
				st->kind = K_DEADLOCK;
				set_prefix(st, "inconsistent lock state");
				return 1;
			}
			st->kind = K_LOCKDEP;
			char tmp[PREFIX_LEN - 12];

			header_words(tmp, sizeof(tmp), w);
			snprintf(st->prefix, sizeof(st->prefix), "WARNING: %s", tmp[0] ? tmp : "unknown");
			return 1;
		}
		if (has_prefix(m, "Watchdog detected hard LOCKUP")) {
			st->kind = K_HARDLOCKUP;
			set_prefix(st, "BUG: hard lockup");
			return 1;
		}
		break;
	case 'K':
		if (has_prefix(m, "Kernel panic - not syncing: ")) {
			char tmp[PREFIX_LEN - 16];

			st->kind = K_PANIC;
			sanitize_reason(tmp, sizeof(tmp), skip_n(m, 28));
			snprintf(st->prefix, sizeof(st->prefix), "kernel panic: %s", tmp);
			return 1;
		}
		break;
	case 'k':
		if (has_prefix(m, "kernel BUG at ")) {
			st->kind = K_KBUG;
			set_prefix(st, "kernel BUG");
			return 1;
		}
		break;
	case 'I':
		if (has_prefix(m, "INFO: task ") && find_lit(m, " blocked for more than ")) {
			st->kind = K_HUNG;
			set_prefix(st, "INFO: task hung");
			return 1;
		}
		if (has_prefix(m, "INFO: rcu") && find_lit(m, "stall")) {
			st->kind = K_RCU;
			set_prefix(st, "INFO: rcu detected stall");
			return 1;
		}
		if (has_prefix(m, "INFO: trying to register non-static key")) {
			st->kind = K_INFO;
			set_prefix(st, "INFO: trying to register non-static key");
			return 1;
		}
		break;
	case 'F':
		if (has_prefix(m, "FAULT_INJECTION: forcing a failure")) {
			st->kind = K_FAULT;
			set_prefix(st, "FAULT_INJECTION: forcing a failure");
			return 1;
		}
		break;
	case 'u':
		if (has_prefix(m, "unreferenced object 0x")) {
			st->kind = K_LEAK;
			set_prefix(st, "memory leak");
			return 1;
		}
		break;
	case 'l':
		if (has_prefix(m, "list_add corruption") || has_prefix(m, "list_del corruption") ||
		    has_prefix(m, "list_add double add")) {
			st->kind = K_LIST;
			set_prefix(st, "BUG: corrupted list");
			return 1;
		}
		break;
	case '-':
		if (has_prefix(m, "------------[ cut here ]------------")) {
			st->kind = K_PENDING;
			st->prefix[0] = 0;
			return 1;
		}
		break;
	}
	k = warn_alloc_line(m, st->prefix, sizeof(st->prefix));
	if (k != K_NONE) {
		st->kind = k;
		return 1;
	}
	/* die() strings: "Oops", "invalid opcode", "general protection fault", ... */
	if (((m.p[0] >= 'a' && m.p[0] <= 'z') || m.p[0] == 'O') && die_line(m, &what)) {
		struct str g = what;

		if (has_prefix(g, "general protection fault")) {
			st->kind = K_GPF;
			set_prefix(st, "general protection fault");
			return 1;
		}
		st->kind = K_DIE;
		char tmp[PREFIX_LEN];

		copy_clean(tmp, sizeof(tmp), g.p, g.n);
		set_prefix(st, tmp);
		return 1;
	}
	return 0;
}

/* Does a new header line belong to the open report (e.g. "Oops:" after "BUG:")? */
static int continues(enum kind open, enum kind k)
{
	switch (open) {
	case K_PENDING:
		return k != K_PENDING;
	case K_LIST:
		return k == K_PENDING || k == K_WARN || k == K_KBUG || k == K_DIE;
	case K_PF:
	case K_KBUG:
		return k == K_DIE;
	default:
		return 0;
	}
}

static void consider_span(struct str fn)
{
	if (cur.blame[0] || !fn.n || (kinds[cur.kind].flags & F_NO_BLAME))
		return;
	if (classes_of(fn) & kinds[cur.kind].skip)
		return;
	copy_clean(cur.blame, sizeof(cur.blame), fn.p, fn.n);
}

static void consider(const char *fn)
{
	consider_span((struct str){ fn, strlen(fn) });
}

static void open_report(const struct start *st, uint64_t off, uint64_t lineno)
{
	struct report *r = &cur;

	r->kind = st->kind;
	r->off = off;
	r->lineno = lineno;
	r->step = cur_step;
	r->armed = narmed > 0;
	if (keep_text) {
		armed_names(r->armed_names, sizeof(r->armed_names));
		strcpy(r->step_line, cur_step_line);
	}
	strcpy(r->prefix, st->prefix);
	r->blame[0] = 0;
	r->held_at[0] = 0;
	r->access[0] = 0;
	r->warn_cpu = st->cpu;
	r->warn_pid = st->pid;
	r->trace = TR_NONE;
	r->irq_depth = 0;
	r->task_open = 0;
	r->phase_lines = 0;
	r->corrupted = 0;
	r->has_hw = r->has_mod = 0;
	r->len = 0;
	r->nlines = 0;
	r->truncated = 0;
	consider(st->hint);
}

/* Upgrade the open report with a continuation header. */
static void merge_start(const struct start *st)
{
	struct report *r = &cur;

	if (r->kind == K_PENDING) {
		r->kind = st->kind;
		strcpy(r->prefix, st->prefix);
		r->warn_cpu = st->cpu;
		r->warn_pid = st->pid;
	} else if (st->kind == K_WARN) {
		r->warn_cpu = st->cpu;
		r->warn_pid = st->pid;
	}
	r->phase_lines = 0;
	consider(st->hint);
}

static void keep_line_slow(const char *line, size_t len)
{
	struct report *r = &cur;

	if (r->nlines >= REPORT_LINES || r->len + len + 1 > REPORT_BYTES) {
		r->truncated = 1;
		return;
	}
	memcpy(r->buf + r->len, line, len);
	r->len += len;
	r->buf[r->len++] = '\n';
	r->nlines++;
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

/* " ? func+0x1/0x2", "  [<ffffffff81000000>] func+0x1/0x2 [mod]" */
static int parse_frame(struct str s, struct str *fn, int *unreliable)
{
	s = skip_ws(s);
	*unreliable = 0;
	if (has_prefix(s, "[<")) {
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
	return sym_span(s, fn);
}

/* "RIP: 0010:func+0x1/0x2" -> func; user RIPs ("0033:0x4012") give nothing. */
static int parse_rip(struct str s, struct str *fn)
{
	const char *c;

	s = skip_ws(s);
	if (!has_prefix(s, "RIP: "))
		return 0;
	s = skip_n(s, 5);
	c = memchr(s.p, ':', s.n < 8 ? s.n : 8);
	if (c)
		s = skip_n(s, (size_t)(c - s.p) + 1);
	return sym_span(s, fn);
}

/* Trace handling for a line of the open report; returns 1 if consumed. */
static int trace_line(struct str m)
{
	struct report *r = &cur;
	struct str s = skip_ws(m), fn;
	int unrel;
	int stall = kinds[r->kind].flags & F_STALL;

	if (r->trace == TR_NONE) {
		if (has_prefix(s, "Call Trace:") || has_prefix(s, "backtrace:")) {
			r->trace = TR_IN;
			r->phase_lines = 0;
			return 1;
		}
		if (s.n && s.p[0] == 'R' && parse_rip(s, &fn))
			consider_span(fn);
		return 0;
	}
	if (r->trace != TR_IN)
		return 0;
	/* fast path: once blamed, an indented line other than <...> is a frame */
	if (r->blame[0] && m.n && m.p[0] == ' ' && s.n && s.p[0] != '<')
		return 1;
	if (s.n && s.p[0] == '<') {
		if (has_prefix(s, "<TASK>")) {
			r->task_open = 1;
		} else if (has_prefix(s, "</TASK>")) {
			r->task_open = 0;
			r->trace = TR_DONE;
			r->phase_lines = 0;
		} else if (has_prefix(s, "<IRQ>") || has_prefix(s, "<NMI>") ||
			   has_prefix(s, "<SOFTIRQ>") || has_prefix(s, "<#DF>")) {
			r->irq_depth++;
		} else if (has_prefix(s, "</IRQ>") || has_prefix(s, "</NMI>") ||
			   has_prefix(s, "</SOFTIRQ>") || has_prefix(s, "</#DF>")) {
			if (r->irq_depth)
				r->irq_depth--;
		}
		return 1;
	}
	if (parse_frame(s, &fn, &unrel)) {
		if (!unrel && !(stall && r->irq_depth))
			consider_span(fn);
		return 1;
	}
	if (parse_rip(s, &fn)) {
		if (!(stall && r->irq_depth))
			consider_span(fn);
		return 1;
	}
	if (is_reg_line(s) || !s.n)
		return 1;
	/* anything else ends the trace */
	r->trace = TR_DONE;
	r->phase_lines = 0;
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
	struct report *r = &cur;
	const struct kind_info *ki = &kinds[r->kind];

	keep_line(line, len);
	if (trace_line(m))
		return;
	if ((r->kind == K_LOCKDEP || r->kind == K_DEADLOCK) && r->trace == TR_NONE &&
	    !r->held_at[0] && m.n > 4 && has_prefix(skip_ws(m), "#")) {
		const char *at = find_lit(m, ", at: ");

		if (at)
			parse_sym(skip_n(m, (size_t)(at - m.p) + 6), r->held_at);
	}
	if (r->kind == K_KASAN && !r->access[0]) {
		if (has_prefix(m, "Read of size"))
			strcpy(r->access, "Read");
		else if (has_prefix(m, "Write of size"))
			strcpy(r->access, "Write");
	}
	if (r->warn_pid >= 0 && r->trace == TR_NONE && has_prefix(m, "CPU: ")) {
		long c = num_after(m, "CPU: "), p = num_after(m, " PID: ");

		if ((r->warn_cpu >= 0 && c != r->warn_cpu) || p != r->warn_pid)
			r->corrupted = 1;	/* another CPU's lines in between */
	}
	if (m.n > 4 && m.p[0] == '-' && has_prefix(m, "---[ end ")) {
		close_report();
		return;
	}
	if ((ki->flags & F_KASAN_END) && r->trace == TR_DONE && is_rule_line(m, '=')) {
		close_report();
		return;
	}
	r->phase_lines++;
	if (r->trace == TR_NONE) {
		if (r->phase_lines > ki->hdr_max)
			close_report();
	} else if (r->trace == TR_DONE) {
		if (r->phase_lines > ki->tail ||
		    ((r->kind == K_ALLOC || r->kind == K_VMEMMAP) && m.n > 15 &&
		     memcmp(m.p + m.n - 15, " pages reserved", 15) == 0))
			close_report();
	}
}

/* Would a new header now mean two reports are mixed up? */
static int open_report_unfinished(void)
{
	const struct report *r = &cur;

	if (r->kind == K_NONE || r->kind == K_PENDING)
		return 0;
	if (r->trace == TR_IN)
		return r->task_open;
	return r->trace == TR_NONE && (kinds[r->kind].flags & F_NEEDS_FUNC);
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

static void other_line(struct str m, const char *line, size_t len, uint64_t off,
		       uint64_t lineno);

static void process_line(const char *line, size_t len, uint64_t off, uint64_t lineno)
{
	struct str m = { line, len };

	/* strip the printk prefix: <N>, [   12.345678], [    T1] */
	if (m.n >= 3 && m.p[0] == '<' && m.p[1] >= '0' && m.p[1] <= '9') {
		size_t i = 1;

		while (i < m.n && i < 5 && m.p[i] >= '0' && m.p[i] <= '9')
			i++;
		if (i < m.n && m.p[i] == '>')
			m = skip_n(m, i + 1);
	}
	/*
	 * User space writing to the console without a newline glues the next
	 * kernel line to its own: "offline rc=130[   20.047474] rig: ...".
	 */
	if (m.n && m.p[0] != '[') {
		const char *b = memchr(m.p + 1, '[', m.n - 1);

		while (b) {
			struct str t = skip_n(m, (size_t)(b - m.p));
			size_t k = stamp_len(t);

			if (k && k < t.n && t.p[k] == ' ') {
				m = t;
				break;
			}
			b = memchr(b + 1, '[', (size_t)(m.p + m.n - b - 1));
		}
	}
	/* the common "[%5lu.%06lu] " first, then anything bracketed and numeric */
	if (m.n > 14 && m.p[0] == '[' && m.p[6] == '.' && m.p[13] == ']' &&
	    m.p[14] == ' ' && m.p[12] >= '0' && m.p[12] <= '9')
		m = skip_n(m, 15);
	for (int pass = 0; pass < 2 && m.n && m.p[0] == '['; pass++) {
		size_t i = 1;

		while (i < m.n && (m.p[i] == ' ' || m.p[i] == '.' ||
				   (m.p[i] >= '0' && m.p[i] <= '9') ||
				   (pass && (m.p[i] == 'T' || m.p[i] == 'C'))))
			i++;
		if (i >= m.n || m.p[i] != ']' || i < 2)
			break;
		m = skip_n(m, i + 1);
		if (m.n && m.p[0] == ' ')
			m = skip_n(m, 1);
	}

	if (has_prefix(m, "Command line: ") || has_prefix(m, "Kernel command line: "))
		parse_cmdline(m);
	if (m.n >= 5 && m.p[0] == 'r' && memcmp(m.p, "rig: ", 5) == 0 &&
	    !has_prefix(m, "rig: FAIL ")) {
		parse_marker(m, line, len);
		if (cur.kind != K_NONE)
			keep_line(line, len);
		return;
	}
	/*
	 * No report header or marker starts with white space (frames) or a
	 * register name ("RAX: ...", "Code: ...").  Inside a call trace whose
	 * culprit is known, such lines matter only as "not the end yet".
	 */
	if (m.n && (m.p[0] == ' ' || m.p[0] == '\t')) {
		if (cur.kind == K_NONE)
			return;
		if (cur.trace == TR_IN && cur.blame[0] && m.p[0] == ' ') {
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
	    m.p[0] != 'W' && is_reg_line(m)) {
		if (cur.kind == K_NONE)
			return;
		if (cur.trace == TR_IN && !has_prefix(m, "RIP: ")) {
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
	struct start st;

	note_context(m, cur.kind != K_NONE);
	if (classify_start(m, &st)) {
		if (cur.kind != K_NONE && continues(cur.kind, st.kind)) {
			keep_line(line, len);
			merge_start(&st);
			return;
		}
		if (cur.kind != K_NONE) {
			int mixed = open_report_unfinished();

			if (mixed)
				cur.corrupted = 1;
			close_report();
			open_report(&st, off, lineno);
			cur.corrupted = mixed;
		} else {
			open_report(&st, off, lineno);
		}
		keep_line(line, len);
		if (kinds[st.kind].flags & F_NO_TRACE)
			close_report();
		return;
	}
	if (cur.kind != K_NONE)
		report_line(m, line, len);
}

/* ---- input --------------------------------------------------------------- */

/*
 * Bit i set when p[i] is a newline, for the n <= 64 bytes at p (the buffer
 * has 64 readable bytes past its end).  Finding every line end of a block at
 * once is what keeps triage near grep's speed: a memchr() call per line costs
 * as much as the rest of the work on a typical 60-byte console line.
 */
static uint64_t nl_mask(const char *p, size_t n)
{
	uint64_t m = 0;
#ifdef __SSE2__
	const __m128i nl = _mm_set1_epi8('\n');

	for (int k = 0; k < 4; k++) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * k));

		m |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, nl)) << (16 * k);
	}
#else
	for (size_t i = 0; i < 64; i++)
		m |= (uint64_t)(p[i] == '\n') << i;
#endif
	return n < 64 ? m & ((UINT64_C(1) << n) - 1) : m;
}

static inline void one_line(char *p, size_t l, uint64_t off, uint64_t *lineno)
{
	if (l > LINE_MAX_LEN)
		l = LINE_MAX_LEN;
	while (l && p[l - 1] == '\r')
		l--;
	while (l && *p == '\r') {
		p++;
		l--;
	}
	process_line(p, l, off, ++*lineno);
}

static void scan(int fd)
{
	char *buf = xmalloc(READ_CHUNK + 64);
	size_t start = 0, end = 0;
	uint64_t base = 0, lineno = 0;	/* file offset of buf[0] */
	int eof = 0, skipping = 0;

	memset(buf, 0, READ_CHUNK + 64);
	while (!eof || start < end) {
		size_t pos = start, blk;

		/* every complete line in buf[start, end) */
		for (blk = start; blk < end; blk += 64) {
			uint64_t mask = nl_mask(buf + blk, end - blk < 64 ? end - blk : 64);

			if (pos > blk)
				mask &= ~UINT64_C(0) << (pos - blk);
			while (mask) {
				size_t nl = blk + (size_t)__builtin_ctzll(mask);
				const char *q = buf + pos;

				mask &= mask - 1;
				/*
				 * The commonest line, "[   12.345678]  frame+0x1/0x2",
				 * needs no parsing outside a report or in a trace
				 * whose culprit is known (see process_line()).
				 */
				if (!keep_text && !skipping && nl - pos > 17 && q[15] == ' ' && q[16] != ' ' &&
				    q[16] != '<' && q[13] == ']' && q[6] == '.' && q[0] == '[' &&
				    q[14] == ' ' && (cur.kind == K_NONE ||
						     (cur.trace == TR_IN && cur.blame[0]))) {
					lineno++;
					skipping = 0;
					pos = nl + 1;
					continue;
				}
				if (!skipping)
					one_line(buf + pos, nl - pos, base + pos, &lineno);
				skipping = 0;
				pos = nl + 1;
			}
		}
		start = pos;
		if (end - start >= LINE_MAX_LEN || (eof && start < end)) {
			/* an overlong line (its rest is dropped) or the last one */
			if (!skipping)
				one_line(buf + start, end - start, base + start, &lineno);
			skipping = !eof;
			start = end;
		}
		if (eof)
			break;
		memmove(buf, buf + start, end - start);
		base += start;
		end -= start;
		start = 0;
		for (;;) {
			ssize_t n = read(fd, buf + end, READ_CHUNK - end);

			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				die_io("read: %s", strerror(errno));
			if (n == 0)
				eof = 1;
			end += (size_t)n;
			break;
		}
	}
	if (cur.kind != K_NONE) {
		if (open_report_unfinished())
			cur.corrupted = 1;	/* the log ends inside it */
		close_report();
	}
	free(buf);
}

/* ---- output -------------------------------------------------------------- */

static int cmp_ent(const void *a, const void *b)
{
	const struct title_ent *x = *(const struct title_ent *const *)a;
	const struct title_ent *y = *(const struct title_ent *const *)b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void slug(char *dst, size_t cap, const char *t)
{
	size_t n = 0;
	int dash = 0;

	for (; *t && n + 1 < cap; t++) {
		if (is_ident((unsigned char)*t) && *t != '.' && *t != '$') {
			if (dash && n)
				dst[n++] = '-';
			dash = 0;
			if (n + 1 < cap)
				dst[n++] = *t;
		} else {
			dash = 1;
		}
	}
	dst[n] = 0;
}

static void file_name(char *dst, size_t cap, unsigned idx, const char *title)
{
	char s[100];

	slug(s, sizeof(s), title);
	snprintf(dst, cap, "%03u-%s.txt", idx + 1, s[0] ? s : "report");
}

static void step_str(char *dst, size_t cap, int step)
{
	if (step >= 0)
		snprintf(dst, cap, "%d", step);
	else
		snprintf(dst, cap, "-");
}

static FILE *open_out(const char *dir, const char *name)
{
	char path[4096];
	FILE *f;

	if (dir)
		snprintf(path, sizeof(path), "%s/%s", dir, name);
	else
		snprintf(path, sizeof(path), "%s", name);
	f = fopen(path, "w");
	if (!f)
		die_io("%s: %s", path, strerror(errno));
	return f;
}

static void close_out(FILE *f, const char *name)
{
	if (ferror(f) | fclose(f))
		die_io("%s: write error", name);
}

static void write_reports(struct title_ent **v, unsigned n)
{
	FILE *f;
	unsigned i;
	char name[160], st[16];

	if (mkdir(opt.reports_dir, 0777) && errno != EEXIST)
		die_io("%s: %s", opt.reports_dir, strerror(errno));
	for (i = 0; i < n; i++) {
		struct title_ent *e = v[i];

		file_name(name, sizeof(name), i, e->title);
		f = open_out(opt.reports_dir, name);
		fprintf(f, "title: %s\ncount: %lu\n", e->title, e->count);
		step_str(st, sizeof(st), e->first_step);
		fprintf(f, "first step: %s\n", st);
		fprintf(f, "injected: %s\n", e->injected ? "yes" : "no");
		fprintf(f, "explained: %s\n", e->unexplained ? "no" : "yes");
		fprintf(f, "corrupted: %s\n", e->all_corrupted ? "yes" : "no");
		if (e->text) {
			fprintf(f, "example: console byte %llu, line %llu%s\n",
				(unsigned long long)e->ex_off, (unsigned long long)e->ex_lineno,
				e->ex_corrupted ? " (corrupted)" : "");
			fprintf(f, "armed then: %s\n",
				e->ex_armed ? e->ex_armed_names : "none");
			fprintf(f, "step marker: %s\n",
				e->ex_step_line[0] ? e->ex_step_line : "none");
			if (!e->ex_has_hw && e->ex_hw[0])
				fprintf(f, "context: %s\n", e->ex_hw);
			if (!e->ex_has_mod && e->ex_mod[0])
				fprintf(f, "context: %s\n", e->ex_mod);
			fputs("\n", f);
			fwrite(e->text, 1, e->text_len, f);
		} else {
			fputs("\n(text not kept: too many distinct reports)\n", f);
		}
		close_out(f, name);
	}
	f = open_out(opt.reports_dir, "summary.txt");
	fprintf(f, "%-5s %6s %6s %-8s %-9s %-11s %s\n", "#", "count", "step",
		"injected", "corrupted", "unexplained", "title");
	for (i = 0; i < n; i++) {
		step_str(st, sizeof(st), v[i]->first_step);
		fprintf(f, "%03u   %6lu %6s %-8s %-9s %-11s %s\n", i + 1, v[i]->count, st,
			v[i]->injected ? "yes" : "no", v[i]->all_corrupted ? "yes" : "no",
			v[i]->unexplained ? "yes" : "no", v[i]->title);
	}
	if (overflow_count)
		fprintf(f, "(%lu more reports with titles beyond the first %u)\n",
			overflow_count, MAX_TITLES);
	close_out(f, "summary.txt");
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void write_json(struct title_ent **v, unsigned n)
{
	FILE *f = open_out(NULL, opt.json_file);
	char name[160];
	unsigned i;

	fputs("{\"reports\":[", f);
	for (i = 0; i < n; i++) {
		struct title_ent *e = v[i];

		fputs(i ? ",\n{" : "\n{", f);
		fputs("\"title\":", f);
		json_str(f, e->title);
		fprintf(f, ",\"count\":%lu,\"first_step\":", e->count);
		if (e->first_step >= 0)
			fprintf(f, "%d", e->first_step);
		else
			fputs("null", f);
		fprintf(f, ",\"injected\":%s,\"corrupted\":%s,\"unexplained\":%s,\"file\":",
			e->injected ? "true" : "false", e->all_corrupted ? "true" : "false",
			e->unexplained ? "true" : "false");
		if (opt.reports_dir) {
			file_name(name, sizeof(name), i, e->title);
			json_str(f, name);
		} else {
			fputs("null", f);
		}
		fputc('}', f);
	}
	fputs(n ? "\n]}\n" : "]}\n", f);
	close_out(f, opt.json_file);
}

static void usage(void)
{
	fprintf(stderr, "usage: %s [-r REPORTS_DIR] [-j JSON_FILE] [-f FROM_BYTE] CONSOLE_LOG|-\n",
		prog);
	exit(2);
}

int main(int argc, char **argv)
{
	struct title_ent **v;
	int c, fd, bad = 0;
	unsigned i;
	char *end;

	while ((c = getopt(argc, argv, "r:j:f:h")) != -1) {
		switch (c) {
		case 'r':
			opt.reports_dir = optarg;
			break;
		case 'j':
			opt.json_file = optarg;
			break;
		case 'f':
			errno = 0;
			opt.from = strtoull(optarg, &end, 10);
			if (errno || !*optarg || *end || *optarg == '-')
				die_io("-f wants a byte offset, not '%s'", optarg);
			break;
		default:
			usage();
		}
	}
	if (optind != argc - 1)
		usage();
	if (strcmp(argv[optind], "-") == 0) {
		fd = 0;
	} else {
		fd = open(argv[optind], O_RDONLY);
		if (fd < 0)
			die_io("%s: %s", argv[optind], strerror(errno));
	}
	keep_text = opt.reports_dir != NULL;
	if (keep_text)
		cur.buf = xmalloc(REPORT_BYTES);
	memo = calloc(MEMO_SIZE, sizeof(*memo));
	titles = calloc(MAX_TITLES, sizeof(*titles));
	title_hash = calloc(TITLE_HASH, sizeof(*title_hash));
	if (!memo || !titles || !title_hash)
		die_io("out of memory");

	scan(fd);
	if (fd)
		close(fd);

	v = xmalloc((ntitles + 1) * sizeof(*v));
	for (i = 0; i < ntitles; i++)
		v[i] = &titles[i];
	qsort(v, ntitles, sizeof(*v), cmp_ent);
	for (i = 0; i < ntitles; i++) {
		printf("%lu\t%s\n", v[i]->count, v[i]->title);
		bad |= v[i]->unexplained;
	}
	if (overflow_count) {
		printf("%lu\ttriage: more distinct titles than %u\n", overflow_count, MAX_TITLES);
		bad = 1;
	}
	if (fflush(stdout) || ferror(stdout))
		die_io("stdout: write error");
	if (opt.reports_dir)
		write_reports(v, ntitles);
	if (opt.json_file)
		write_json(v, ntitles);
	free(v);
	return bad ? 1 : 0;
}
