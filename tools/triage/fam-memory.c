// SPDX-License-Identifier: GPL-2.0
/*
 * triage family: memory and page state.  Bad page state (mm/page_alloc.c,
 * bad_page), rss counters (kernel/fork.c), kmemleak (mm/kmemleak.c: titled
 * "memory leak in f" from its backtrace), list corruption (lib/list_debug.c),
 * SLUB's object checks (mm/slub.c), sleeping or scheduling where the
 * context forbids it (kernel/sched/core.c), and a dentry still in use at
 * unmount (fs/dcache.c, umount_check).
 */
#include <string.h>

#include "triage.h"

static const char *const leak_skip[] = {
	"kmemleak", "mmap", "kmem", "slab", "alloc", "create_object", "idr_get",
	"list_lru_init", "kasprintf", "kvasprintf", "pcpu_create", "strdup",
	"strndup", "memdup", NULL
};
static const char *const schedule_skip[] = { "schedule", NULL };
static const char *const preempt_skip[] = {
	"dump_stack", "preemption", "preempt", "debug_", "processor_id", "this_cpu", NULL
};

/* "BUG: using smp_processor_id() in preemptible [00000000] code: sh/1" */
static int parse_preemptible(struct header *h)
{
	struct str s = skip_n(h->at, 11);
	size_t i = 0;

	while (i < s.n && is_ident((unsigned char)s.p[i]) && s.p[i] != '.')
		i++;
	if (!i || !has_prefix(skip_n(s, i), "() in preemptible"))
		return 0;
	copy_clean(h->text, sizeof(h->text), s.p, i);
	return 1;
}

/*
 * "BUG: Dentry %p{i=%lx,n=%pd}  still in use (%d) [unmount of %s %s]": the
 * file system and device are left out of the title, as syzkaller does (the
 * device is a loop number more often than not).
 */
static int parse_dentry(struct header *h)
{
	if (!find_lit(h->at, " still in use ("))
		return 0;
	if (find_lit(h->at, ") [unmount of "))
		h->title = "BUG: Dentry still in use in unmount";
	return 1;
}

/* SLUB: "BUG kmalloc-64 (Not tainted): Object already free" */
static int parse_slub(struct header *h)
{
	const char *c = find_lit(h->at, "): ");

	if (!c)
		return 0;
	if (find_lit(h->at, "Object already free")) {
		h->title = "BUG: Object already free";
		return 1;
	}
	header_words(h->text, sizeof(h->text), skip_n(h->at, (size_t)(c - h->at.p) + 3));
	return h->text[0] != 0;
}

#define PAGE(a, t) { .anchor = a, .title = t, .from = FROM_AT, \
	.at_after = "page last allocated", .flags = F_NEEDS_FUNC, .skip = SK_BASE | SK_FREE, \
	.hdr_max = 80 }
#define NO_TRACE(a) { .anchor = a, .title = a, .flags = F_NO_TRACE }
#define LIST(a) { .anchor = a, .title = "BUG: corrupted list in %f", .from = FROM_STACK, \
	.flags = F_NEEDS_FUNC | F_END_MARK, .skip = SK_BASE, .group = G_LIST, \
	.hdr_max = 60, .tail = 30 }

const struct row fam_memory[] = {
	PAGE("BUG: Bad page state", "BUG: Bad page state in %f"),
	PAGE("BUG: Bad page cache", "BUG: Bad page cache in %f"),
	{ .anchor = "BUG: Bad page map", .title = "BUG: Bad page map", .hdr_max = 60 },
	NO_TRACE("BUG: Bad rss-counter state"),
	NO_TRACE("BUG: non-zero nr_ptes on freeing mm"),
	NO_TRACE("BUG: non-zero nr_pmds on freeing mm"),
	{ .anchor = "unreferenced object 0x", .title = "memory leak in %f", .from = FROM_STACK,
	  .flags = F_NEEDS_FUNC, .skip = SK_BASE, .skip_also = leak_skip, .hdr_max = 12 },
	{ .anchor = "BUG: memory leak", .title = "memory leak in %f", .from = FROM_STACK,
	  .flags = F_NEEDS_FUNC, .skip = SK_BASE, .skip_also = leak_skip, .hdr_max = 12 },
	LIST("list_add corruption"),
	LIST("list_del corruption"),
	LIST("list_add double add"),
	/* fs/super.c and fs/file_table.c of older kernels: a file or inode used after free */
	{ .anchor = "VFS: Busy inodes after unmount",
	  .title = "VFS: Busy inodes after unmount (use-after-free)", .flags = F_NO_TRACE },
	{ .anchor = "VFS: Close: file count is 0",
	  .title = "VFS: Close: file count is zero (use-after-free)", .flags = F_NO_TRACE },
	/* the WARN_ON(1) right after it is its stack, not a report of its own */
	{ .anchor = "BUG: Dentry ", .title = "BUG: Dentry still in use", .parse = parse_dentry,
	  .flags = F_END_MARK, .group = G_DENTRY, .hdr_max = 60, .tail = 30 },
	{ .anchor = "BUG kmalloc-", .title = "BUG: %h", .parse = parse_slub, .hdr_max = 60 },
	{ .anchor = "BUG: sleeping function called from invalid context",
	  .title = "BUG: sleeping function called from invalid context in %f",
	  .from = FROM_STACK, .flags = F_NEEDS_FUNC, .skip = SK_BASE, .hdr_max = 60 },
	{ .anchor = "BUG: scheduling while atomic", .title = "BUG: scheduling while atomic in %f",
	  .from = FROM_STACK, .flags = F_NEEDS_FUNC, .skip = SK_BASE,
	  .skip_also = schedule_skip, .hdr_max = 60 },
	{ .anchor = "BUG: using ", .title = "BUG: using %h() in preemptible code in %f",
	  .from = FROM_STACK, .parse = parse_preemptible, .flags = F_NEEDS_FUNC,
	  .skip = SK_BASE, .skip_also = preempt_skip, .hdr_max = 60 },
	{ NULL },
};
