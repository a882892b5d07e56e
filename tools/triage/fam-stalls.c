// SPDX-License-Identifier: GPL-2.0
/*
 * triage family: stalls, lockups and hung tasks (kernel/rcu/tree_stall.h,
 * kernel/watchdog.c, kernel/hung_task.c, kernel/workqueue.c: also work items
 * that leak a lock).  A stall is named from the interrupted task's stack, by
 * the frame above the point where its request entered (FROM_STALL); a hung
 * task from the blocked task's stack, past the frames that only wait
 * (FROM_HUNG).
 */
#include <string.h>

#include "triage.h"

static const char *const schedule_skip[] = { "schedule", NULL };

/* "INFO: rcu_sched self-detected stall on CPU", "INFO: rcu_preempt detected stalls ..." */
static int parse_rcu(struct header *h)
{
	struct str s = h->at;

	if (s.n > 60)
		s.n = 60;
	return find_lit(s, "detected") && find_lit(s, "stall");
}

/* "INFO: task sh:40 blocked for more than 120 seconds." */
static int parse_task(struct header *h)
{
	if (find_lit(h->at, " blocked for more than ") ||
	    find_lit(h->at, " blocked in I/O wait for more than "))
		return 1;
	if (find_lit(h->at, " can't die for more than ")) {
		h->title = "INFO: task can't die in %f";
		return 1;
	}
	return 0;
}

/*
 * kernel/workqueue.c, process_one_work: a work item that returned holding a
 * lock or in atomic context.  "     last function: %ps" names it; the stack
 * is only the worker's own.
 */
static int leaked_body(struct report *r, struct str m)
{
	size_t i = 0;

	m = skip_ws(m);
	if (r->blame[0] || !has_prefix(m, "last function: "))
		return !r->blame[0];
	m = skip_n(m, 15);	/* %ps: a bare name, maybe ".cold" or " [module]" after it */
	while (i < m.n && is_ident((unsigned char)m.p[i]) && m.p[i] != '.')
		i++;
	copy_clean(r->blame, sizeof(r->blame), m.p, i);
	return !r->blame[0];
}

static const char *const leaked_starts[] = { "last function: ", NULL };

const struct row fam_stalls[] = {
	{ .anchor = "INFO: rcu_", .title = "INFO: rcu detected stall in %f", .from = FROM_STALL,
	  .parse = parse_rcu, .flags = F_NEEDS_FUNC, .skip = SK_BASE | SK_STALL,
	  .hdr_max = 40, .tail = 60 },
	{ .anchor = "BUG: soft lockup", .title = "BUG: soft lockup in %f", .from = FROM_STALL,
	  .flags = F_NEEDS_FUNC, .skip = SK_BASE, .hdr_max = 40 },
	{ .anchor = "Watchdog detected hard LOCKUP", .title = "BUG: hard lockup in %f",
	  .from = FROM_STALL, .flags = F_NEEDS_FUNC, .skip = SK_BASE, .hdr_max = 40 },
	{ .anchor = "INFO: task ", .title = "INFO: task hung in %f", .from = FROM_HUNG,
	  .parse = parse_task, .flags = F_NEEDS_FUNC, .skip = SK_BASE | SK_SCHED,
	  .skip_also = schedule_skip, .hdr_max = 12 },
	{ .anchor = "BUG: workqueue lockup", .title = "BUG: workqueue lockup",
	  .flags = F_NO_TRACE },
	{ .anchor = "BUG: workqueue leaked lock or atomic",
	  .title = "BUG: workqueue leaked lock or atomic in %f", .body = leaked_body,
	  .body_starts = leaked_starts,
	  .flags = F_NEEDS_FUNC, .hdr_max = 8 },
	/* net/core/dev.c netdev_wait_allrefs: a device whose references never drop */
	{ .anchor = "unregister_netdevice: waiting for",
	  .title = "unregister_netdevice: waiting for DEV to become free", .flags = F_NO_TRACE },
	{ NULL },
};
