// SPDX-License-Identifier: GPL-2.0
/*
 * Takes two mutexes in one order and then in the other, in one thread:
 * no deadlock happens, but lockdep sees the inverted order and reports
 * a possible circular locking dependency.  Loading always fails (-EAGAIN),
 * so nothing stays behind.
 */
#include <linux/module.h>
#include <linux/mutex.h>

static DEFINE_MUTEX(inversion_first);
static DEFINE_MUTEX(inversion_second);

static noinline void take_in_order(void)
{
	mutex_lock(&inversion_first);
	mutex_lock(&inversion_second);
	mutex_unlock(&inversion_second);
	mutex_unlock(&inversion_first);
}

static noinline void take_inverted(void)
{
	mutex_lock(&inversion_second);
	mutex_lock(&inversion_first);
	mutex_unlock(&inversion_first);
	mutex_unlock(&inversion_second);
}

static int __init lockdep_inversion_init(void)
{
	take_in_order();
	take_inverted();
	return -EAGAIN;
}
module_init(lockdep_inversion_init);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("hotplug-rig: a lock order inversion for lockdep's golden log");
