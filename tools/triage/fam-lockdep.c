// SPDX-License-Identifier: GPL-2.0
/*
 * triage family: lockdep and lock debugging (kernel/locking/lockdep.c,
 * spinlock_debug.c).  Deadlock reports name the function from the "at:"
 * line after "is trying to acquire lock:"; older kernels bracket the
 * header ("[ INFO: possible circular locking dependency detected ]").
 */
#include <string.h>

#include "triage.h"

static const char *const workqueue_skip[] = {
	"process_one_work", "flush_workqueue", "drain_workqueue", "destroy_workqueue", NULL
};
static const char *const rcu_skip[] = { "rcu", "kmem", "slab", NULL };
static const char *const spin_skip[] = { "spin_", "_lock", "_unlock", NULL };
static const char *const nonstatic_skip[] = { "stack", "lock", "IRQ", NULL };
static const char *const locking_skip[] = { "lock_sock", "release_sock", NULL };

/* "BUG: spinlock lockup suspected on CPU#0, sh/1": the words before the data */
static int parse_spin(struct header *h)
{
	header_words(h->text, sizeof(h->text), skip_n(h->at, 5));
	return h->text[0] != 0;
}

/* "WARNING: HARDIRQ-safe -> HARDIRQ-unsafe lock order detected" */
static int parse_order(struct header *h)
{
	return find_lit(h->at, "-unsafe lock order detected") != NULL;
}

/* "BUG: sh/1 still has locks held!" and the WARNING of newer kernels */
static int parse_still_held(struct header *h)
{
	if (find_lit(h->msg, "BUG: "))
		h->title = "BUG: still has locks held in %f";
	return 1;
}

#define DEADLOCK(a, after) { .anchor = a, .title = "possible deadlock in %f", \
	.from = FROM_AT, .at_after = after, .flags = F_NEEDS_FUNC, .skip = SK_BASE, \
	.skip_also = workqueue_skip, .hdr_max = 400 }
#define AT(a, t, after) { .anchor = a, .title = t, .from = FROM_AT, .at_after = after, \
	.flags = F_NEEDS_FUNC, .skip = SK_BASE, .hdr_max = 60 }
#define STACK(a, t, sk) { .anchor = a, .title = t, .from = FROM_STACK, .skip = SK_BASE, \
	.skip_also = sk, .flags = F_NEEDS_FUNC, .hdr_max = 200 }

const struct row fam_lockdep[] = {
	DEADLOCK("WARNING: possible circular locking dependency detected",
		 "is trying to acquire lock"),
	DEADLOCK("INFO: possible circular locking dependency detected",
		 "is trying to acquire lock"),
	DEADLOCK("WARNING: possible recursive locking detected", "is trying to acquire lock"),
	DEADLOCK("INFO: possible recursive locking detected", "is trying to acquire lock"),
	DEADLOCK("WARNING: possible irq lock inversion dependency detected",
		 "just changed the state of lock"),
	DEADLOCK("INFO: possible irq lock inversion dependency detected",
		 "just changed the state of lock"),
	{ .anchor = "-safe -> ", .title = "possible deadlock in %f", .from = FROM_AT,
	  .at_after = "which became", .parse = parse_order, .flags = F_NEEDS_FUNC,
	  .skip = SK_BASE, .hdr_max = 400 },
	STACK("WARNING: inconsistent lock state", "inconsistent lock state in %f", NULL),
	STACK("INFO: inconsistent lock state", "inconsistent lock state in %f", NULL),
	STACK("WARNING: suspicious RCU usage", "WARNING: suspicious RCU usage in %f", rcu_skip),
	STACK("INFO: suspicious RCU usage", "INFO: suspicious RCU usage in %f", rcu_skip),
	STACK("WARNING: Nested lock was not taken", "WARNING: nested lock was not taken in %f",
	      NULL),
	STACK("BUG: Invalid wait context", "WARNING: locking bug in %f", locking_skip),
	STACK("INFO: trying to register non-static key",
	      "INFO: trying to register non-static key in %f", nonstatic_skip),
	AT("WARNING: lock held when returning to user space",
	   "WARNING: lock held when returning to user space in %f",
	   "leaving the kernel with locks still held"),
	AT("BUG: lock held when returning to user space",
	   "BUG: lock held when returning to user space in %f",
	   "leaving the kernel with locks still held"),
	AT("WARNING: bad unlock balance detected", "WARNING: bad unlock balance in %f",
	   "is trying to release lock"),
	AT("BUG: bad unlock balance detected", "BUG: bad unlock balance in %f",
	   "is trying to release lock"),
	AT("WARNING: held lock freed", "WARNING: held lock freed in %f", NULL),
	AT("BUG: held lock freed", "BUG: held lock freed in %f", NULL),
	{ .anchor = "still has locks held!", .title = "WARNING: still has locks held in %f",
	  .from = FROM_AT, .parse = parse_still_held, .flags = F_NEEDS_FUNC, .skip = SK_BASE,
	  .hdr_max = 60 },
	{ .anchor = "BUG: spinlock ", .title = "BUG: %h in %f", .from = FROM_STACK,
	  .parse = parse_spin, .skip = SK_BASE, .skip_also = spin_skip, .hdr_max = 60,
	  .tail = 20 },
	{ .anchor = "BUG: rwlock ", .title = "BUG: %h in %f", .from = FROM_STACK,
	  .parse = parse_spin, .skip = SK_BASE, .skip_also = spin_skip, .hdr_max = 60,
	  .tail = 20 },
	{ NULL },
};
