// SPDX-License-Identifier: GPL-2.0
/*
 * triage core: which frames never get the blame.  The classes of helper
 * frames (syzkaller's pkg/report skip list and its stall and hung-task
 * extractors: reporting, locking, list debugging, allocators, sanitizer
 * internals, thunks, syscall entry, driver core and work helpers), matched
 * by name patterns and memoised, since the same few hundred frames recur.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "triage.h"

/*
 * Name patterns: "^x" a prefix, "x$" a suffix, "^x$" the whole name, else a
 * part of it (as syzkaller's skip patterns, which are unanchored regexps).
 */
struct pat {
	const char *core;	/* without ^ and $ */
	size_t len;
	unsigned char head, tail;
};

static struct pat pat_parse(const char *pat)
{
	size_t l = strlen(pat);
	struct pat p = { pat, l, pat[0] == '^', l > 1 && pat[l - 1] == '$' };

	p.core += p.head;
	p.len -= (size_t)p.head + p.tail;
	return p;
}

static int pat_hit(const struct pat *p, struct str name)
{
	if (p->len > name.n)
		return 0;
	if (p->head && p->tail)
		return p->len == name.n && memcmp(p->core, name.p, p->len) == 0;
	if (p->head)
		return memcmp(p->core, name.p, p->len) == 0;
	if (p->tail)
		return memcmp(p->core, name.p + name.n - p->len, p->len) == 0;
	return find_n(name, p->core, p->len) != NULL;
}

int name_matches(const char *const *pats, struct str name)
{
	for (; pats && *pats; pats++) {
		struct pat p = pat_parse(*pats);

		if (pat_hit(&p, name))
			return 1;
	}
	return 0;
}

/*
 * Stalls loop somewhere inside a request: the title names the frame just
 * above where the request entered (a syscall's file operation, a work item,
 * a timer), so that one stall gets one title wherever the loop was caught.
 */
static const char *const anchors[] = {
	"process_one_work", "do_syscall_", "do_fast_syscall_", "sysenter_dispatch",
	"tracesys_phase2", "el0_svc_handler", "invoke_syscall", "ret_fast_syscall",
	"netif_receive_skb", "do_softirq", "call_timer_fn", "_run_timers",
	"run_timer_softirq", "hrtimer_run", "run_ksoftirqd", "smpboot_thread_fn",
	"^kthread$", "start_secondary", "cpu_startup_entry", "ret_from_fork",
	"vfs_write", "vfs_read", "vfs_iter_read", "vfs_iter_write", "do_iter_read",
	"do_iter_write", "call_read_iter", "call_write_iter", "new_sync_read",
	"new_sync_write", "vfs_ioctl", "ksys_ioctl", "compat_ioctl", "blkdev_ioctl",
	"do_iter_readv_writev", "^call_mmap", "mmap_region", "do_mmap",
	"do_dentry_open", "vfs_open", "^sock_sendmsg", "^sock_recvmsg",
	"^sock_release", "^__sock_release", "kernel_setsockopt",
	"sock_common_setsockopt", "kernel_listen", "sk_common_release", "^sock_mmap",
	"kernel_accept", "^sock_do_ioctl", "^sock_ioctl", "^nfnetlink_rcv_msg",
	"^rtnetlink_rcv_msg", "^netlink_dump", "__do_fault", "do_page_fault",
	"^page_fault$", "__fput", "task_work_run", "exit_to_usermode",
	"smp_call_function", "tasklet_action",
	NULL
};

static const struct skip_class {
	unsigned cls;
	const char *const *pats;
} skip_classes[] = {
	{ SK_COMMON, (const char *const[]){
		"panic", "invalid_op", "report_bug", "fixup_bug", "handle_bug", "do_error",
		"_trap$", "do_trap", "show_stack", "dump_stack", "walk_stack",
		"dump_backtrace", "show_trace_log_lvl", "sched_show_task", "warn_slowpath",
		"warn_alloc", "warn_bogus", "__warn", "printk", "print_report",
		"debug_object", "timer_is_static_object", "work_is_static_object",
		"^die$", "^__die", "die_addr", "die_kernel_fault", "^oops_", "page_fault_oops",
		"kernelmode_fixup_or_oops", "bad_area", "^no_context$", "exc_page_fault",
		"handle_page_fault", "do_user_addr_fault", "exc_general_protection",
		"^asm_exc_", "^exc_invalid_op", "fixup_exception", "^ex_handler_",
		"nmi_cpu_backtrace", "cpumask_backtrace", "single_cpu_backtrace",
		"dump_cpu_task", "bug_handler", "do_kernel_fault", "do_translation_fault",
		"do_mem_abort", "el1_abort", "el1h_64_sync", "^el1_da", "^el1_dbg",
		"call_break_hook", "brk_handler", "dev_warn", "dev_err", "dev_info",
		"snprintf", "kasprintf", "kvasprintf", "^string$", "^pointer$",
		NULL } },
	{ SK_ENTRY, (const char *const[]){
		"_indirect_thunk_", "__x86_return_thunk", "^__x64_sys_", "^__ia32_sys_",
		"^__arm64_sys_", "^__se_sys_", "^entry_SYSCALL", "^entry_SYSENTER",
		"^do_syscall_", "^el0_svc", "^invoke_syscall", "^__invoke_syscall",
		"read_once_", "write_once_", "atomic_", "atomic64_", "^arch_atomic",
		"set_bit", "clear_bit", "change_bit", "test_bit", "^refcount_", "^kref_",
		"^rb_", "^__rb_", "^complete$", "^kvfree$", "^kfree$",
		"^iput$", "^put_device$", "^klist_", "^get_taint$",
		NULL } },
	{ SK_SAN, (const char *const[]){
		"__sanitizer", "__asan", "kasan", "hwasan", "__msan", "kmsan", "kcsan_",
		"__tsan", "kfence_", "__kfence", "ubsan", "check_memory_region",
		"check_heap_object", "check_object", "read_word_at_a_time",
		"print_address_description", "memcpy", "memcmp", "memset", "memchr",
		"memmove", "memdup", "strcmp", "strncmp", "strcpy", "strlcpy", "strncpy",
		"strscpy", "strlen", "strstr", "strnstr", "strnlen", "strchr", "strdup",
		"strndup", "copy_to_user", "copy_from_user", "copy_to_iter",
		"copy_from_iter", "copy_page_to_iter", "copy_page_from_iter", "put_user",
		"get_user", "might_fault", "might_sleep", "might_resched",
		NULL } },
	{ SK_ALLOC, (const char *const[]){
		"alloc_page", "malloc", "zalloc", "calloc", "krealloc", "kmem_cache",
		"allocate_slab", "__alloc_frozen_pages", "folio_alloc", "alloc_folio", "slab_",
		"^new_slab", "get_page_from_freelist", "^rmqueue", "prepare_alloc_pages",
		"__get_free_pages", "get_zeroed_page", "vmalloc", "vzalloc",
		"vmemmap_alloc_block", "__earlyonly_bootmem_alloc", "memblock_alloc",
		"kmemleak_alloc", "kstrdup", "kmemdup", "kvrealloc", "kvcalloc",
		NULL } },
	{ SK_LOCK, (const char *const[]){
		"lockdep", "lock_acquire", "lock_release", "lock_class", "mark_lock",
		"held_locks", "raw_spin_rq", "spin_lock", "spin_trylock", "spin_unlock",
		"read_lock", "read_trylock", "write_lock", "write_trylock", "read_unlock",
		"write_unlock", "^down$", "down_read", "down_write", "down_trylock",
		"^down_interruptible", "^down_killable", "up_read", "up_write", "^mutex_",
		"^__mutex_", "^rt_mutex_", "^__rt_mutex", "owner_on_cpu", "osq_lock",
		"osq_unlock", "queued_spin_lock", "bh_enable", "bh_disable",
		"print_unlock", "imbalance_bug", "print_usage_bug", "validate_chain",
		"check_prev_add", "check_prevs_add", "check_noncircular",
		"check_deadlock", "print_deadlock_bug", "print_circular_bug",
		"lock_is_held", "debug_check_no_locks", "rcu_lock_acquire", "__wake_up",
		"^spin_bug$", "^spin_dump$", "^percpu_down", "^percpu_up",
		NULL } },
	{ SK_LIST, (const char *const[]){
		"list_add", "list_del", "list_replace", "list_move", "list_splice",
		"__list_valid_slowpath",
		NULL } },
	{ SK_FAULT, (const char *const[]){
		"should_fail", "fail_dump", "^fei_", "aggr_pre_handler",
		"opt_pre_handler", "optimized_callback", "^kprobe_", "^do_int3",
		"^exc_int3", "^ftrace_",
		NULL } },
	/* FROM_HUNG: where a blocked task waits, never why */
	{ SK_SCHED, (const char *const[]){
		"sched", "_lock", "_slowlock", "down", "rwsem", "completion", "kthread",
		"wait", "synchronize", "context_switch", "__switch_to",
		"cancel_delayed_work", "rcu_barrier", "sleep", "^folio_wait",
		"^bit_wait", "^__lock_page",
		NULL } },
	{ SK_FREE, (const char *const[]){
		"free_page", "put_page", "get_page", "update_page", "release_page",
		"free_unref", "^folio", "^_folio", "^__folio", "truncate_inode_pages",
		"page_frag_free", "alloc", "vmap", "page_owner", "^bad_page",
		"free_pages", "free_one_page", "free_pcp", "check_new_page",
		NULL } },
	/* driver core, work and timer, I/O and small helpers that only pass a bug on */
	{ SK_HELPER, (const char *const[]){
		"kobject_", "add_uevent_var", "get_device_parent", "device_add", "device_del",
		"device_unregister", "device_destroy", "device_release", "devres_release_all",
		"device_for_each_child", "sysfs_remove", "device_remove_file",
		"hwrng_unregister", "i2c_del_adapter", "__unregister_client",
		"rollback_registered", "unregister_netdev", "tty_unregister_device",
		"dummy_urb_enqueue", "usb_kill_urb", "usb_kill_anchored_urbs",
		"usb_control_msg", "usb_hcd_submit_urb", "usb_submit_urb", "kfree_skb",
		"del_timer", "flush_work", "__cancel_work_timer", "cancel_work_sync",
		"try_to_grab_pending", "flush_workqueue", "drain_workqueue",
		"destroy_workqueue", "queue_work", "insert_work", "__queue_delayed_work",
		"queue_delayed_work_on", "finish_wait", "kthread_stop", "lock_timer_base",
		"__timer_delete_sync", "sk_stop_timer_sync", "__mod_timer",
		"readb$", "readw$", "readl$", "readq$", "writeb$", "writew$", "writel$",
		"writeq$", "logic_in", "logic_out", "^crc4", "^crc7", "^crc8", "^crc16",
		"^crc32", "^crc64", "crc_itu_t", "__might_resched", "assertfail",
		"^iput_final$", "^ihold$", "hex_dump_to_buffer", "print_hex_dump",
		"trace_hardirq", "trace_softirq", "^lock_page", "^unlock_page",
		"stack_trace_consume_entry", "arch_stack_walk", "stack_trace_save",
		"ida_free", "print_tainted", "xas_start", "xas_load", "xas_find",
		"find_lock_entries", "truncate_inode_pages_range", "__phys_addr",
		"__fortify_report", "cleanup_srcu_struct", "rhashtable_lookup",
		"extract_user_to_sg", "extract_iter_to_sg", "drop_nlink", "fast_dput",
		"dput", "mark_buffer_dirty",
		NULL } },
	{ SK_ANCHOR, anchors },
	/* the timer interrupt that prints a stall, and the stall printers */
	{ SK_STALL, (const char *const[]){
		"rcu", "apic_timer_interrupt", "sysvec_", "hrtimer", "tick_",
		"update_process_times", "watchdog_timer_fn", "irq_exit", "softirq",
		"nmi", "perf_event_overflow", "handle_pmi",
		NULL } },
};

/*
 * Memo of name -> skip classes: the same few hundred frames recur.  An
 * entry is one cache line, aligned: a frame's lookup then loads one line,
 * not two (most of frame_classes()'s time was that load).
 */
#define MEMO_SIZE 8192
#define MEMO_NAME 58
static struct memo {
	char name[MEMO_NAME];
	unsigned char len;
	unsigned char used;
	unsigned cls;
} *memo;
static unsigned memo_used;

#define NCLASSES (sizeof(skip_classes) / sizeof(skip_classes[0]))

/* The class patterns parsed once: every new frame name is tried against all of them. */
static struct pat *class_pats[NCLASSES];

void frames_init(void)
{
	size_t k, n;
	void *raw;

	_Static_assert(sizeof(*memo) == 64, "a memo entry is one cache line");
	/* calloc(): its fresh pages come zeroed, without writing 512 KiB first */
	raw = calloc(MEMO_SIZE + 1, sizeof(*memo));
	if (!raw)
		die_io("out of memory");
	memo = (struct memo *)(((uintptr_t)raw + 63) & ~(uintptr_t)63);
	for (k = 0; k < NCLASSES; k++) {
		for (n = 0; skip_classes[k].pats[n]; n++)
			;
		class_pats[k] = xmalloc((n + 1) * sizeof(struct pat));
		for (n = 0; skip_classes[k].pats[n]; n++)
			class_pats[k][n] = pat_parse(skip_classes[k].pats[n]);
		class_pats[k][n].core = NULL;
	}
}

/*
 * The bytes a name holds, as a set: a pattern whose first or last byte is
 * not in it cannot match, and most patterns are ruled out so without a search.
 */
struct byte_set {
	uint64_t w[4];
};

static inline int in_set(const struct byte_set *b, char c)
{
	return (b->w[(unsigned char)c >> 6] >> ((unsigned char)c & 63)) & 1;
}

static int class_matches(size_t k, struct str name, const struct byte_set *b)
{
	const struct pat *p;

	for (p = class_pats[k]; p->core; p++)
		if ((!p->len || (in_set(b, p->core[0]) && in_set(b, p->core[p->len - 1]))) &&
		    pat_hit(p, name))
			return 1;
	return 0;
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

unsigned frame_classes(struct str name)
{
	unsigned cls = 0, h = 0, i;
	size_t k;
	struct byte_set b = { { 0, 0, 0, 0 } };
	int memoize = name.n < MEMO_NAME;

	if (memoize) {
		h = hash_name(name.p, name.n) & (MEMO_SIZE - 1);
		for (i = 0; i < MEMO_SIZE && memo[h].used; i++) {
			if (memo[h].len == name.n && memcmp(memo[h].name, name.p, name.n) == 0)
				return memo[h].cls;
			h = (h + 1) & (MEMO_SIZE - 1);
		}
	}
	for (k = 0; k < name.n; k++)
		b.w[(unsigned char)name.p[k] >> 6] |= UINT64_C(1) << ((unsigned char)name.p[k] & 63);
	for (k = 0; k < NCLASSES; k++)
		if (class_matches(k, name, &b))
			cls |= skip_classes[k].cls;
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

int stall_anchor(struct str name)
{
	return (frame_classes(name) & SK_ANCHOR) != 0;
}
