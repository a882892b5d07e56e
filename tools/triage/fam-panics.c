// SPDX-License-Identifier: GPL-2.0
/*
 * triage family: panics (kernel/panic.c: "Kernel panic - not syncing: %s")
 * and double faults (arch/x86/kernel/traps.c).  A panic's title is its
 * reason, without addresses or exit codes; a panic that only ends an
 * earlier report ("Fatal exception", "panic_on_warn set") is not counted.
 */
#include <string.h>

#include "triage.h"

static const char *const stack_chk_skip[] = { "stack_chk", NULL };
static const char *const sched_skip[] = { "schedule", "retint_kernel", NULL };
static const char *const bad_stack_skip[] = { "bad_stack", NULL };

static int parse_panic(struct header *h)
{
	struct str why = skip_n(h->at, 28);

	if (has_prefix(why, "stack-protector: Kernel stack is corrupted in: ")) {
		parse_sym(skip_n(why, 47), h->hint);
		h->title = "kernel panic: stack is corrupted in %f";
		h->skip_also = stack_chk_skip;
	} else if (has_prefix(why, "corrupted stack end detected inside scheduler")) {
		h->title = "kernel panic: corrupted stack end in %f";
		h->skip_also = sched_skip;
	} else if (has_prefix(why, "kernel stack overflow")) {
		h->title = "kernel stack overflow in %f";
		h->skip_also = bad_stack_skip;
	}
	sanitize_reason(h->text, sizeof(h->text), why);
	return 1;
}

#define AFTERMATH(a) { .anchor = "Kernel panic - not syncing: " a, \
	.title = "kernel panic: " a, .flags = F_END_MARK | F_AFTERMATH, .hdr_max = 30, \
	.tail = 10 }

const struct row fam_panics[] = {
	{ .anchor = "Kernel panic - not syncing: ", .title = "kernel panic: %h",
	  .from = FROM_STACK, .parse = parse_panic, .flags = F_END_MARK, .skip = SK_BASE,
	  .hdr_max = 30, .tail = 10 },
	AFTERMATH("Fatal exception"),
	AFTERMATH("panic_on_warn set"),
	AFTERMATH("hung_task: blocked tasks"),
	AFTERMATH("softlockup: hung tasks"),
	AFTERMATH("Hard LOCKUP"),
	AFTERMATH("RCU Stall"),
	AFTERMATH("Oops - BUG"),
	{ .anchor = "PANIC: double fault", .title = "PANIC: double fault in %f",
	  .from = FROM_STACK, .flags = F_NEEDS_FUNC | F_END_MARK, .skip = SK_BASE,
	  .hdr_max = 60, .tail = 30 },
	{ NULL },
};
