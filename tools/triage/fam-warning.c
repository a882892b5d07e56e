// SPDX-License-Identifier: GPL-2.0
/*
 * triage family: WARN() and its kinds.  "------------[ cut here ]------------"
 * then "WARNING: CPU: 0 PID: 1 at lib/refcount.c:25 func+0x1/0x2" (kernel/panic.c,
 * __warn), the old "WARNING: at file:line func()" and 6.19's "WARNING:
 * file:line at func+0x1/0x2, CPU#0: comm/1" (with no file: "WARNING: at
 * func+0x1/0x2, CPU#0: comm/1").  With CONFIG_DEBUG_BUGVERBOSE_DETAILED
 * (6.17, include/asm-generic/bug.h and arch/x86/include/asm/bug.h) the
 * condition of WARN_ON_ONCE() leads the file string: "[cond] file:line".
 * The file names the kind, as in syzkaller: refcount, ODEBUG, kmalloc,
 * usercopy, kobject, lockdep, ...  Any other "WARNING:" line (user space
 * prints many) is not a report.
 */
#include <string.h>

#include "triage.h"

static const char *const refcount_skip[] = { "refcount", "kobject_", NULL };
static const char *const odebug_skip[] = {
	"debug_", "rcu", "hrtimer_", "timer_", "work_", "percpu_", "vunmap", "vfree",
	"__free_", "debug_check", "kobject_", NULL
};
static const char *const usercopy_skip[] = { "usercopy", "__check", NULL };
static const char *const kobject_skip[] = { "kobject_", NULL };
static const char *const proc_skip[] = { "proc_", NULL };
static const char *const locking_skip[] = { "lock_sock", "release_sock", NULL };
static const char *const kmalloc_skip[] = { "kmalloc", "krealloc", "slab", "kmem", NULL };

/* "malloc", "kmalloc", "vmalloc", "kvmalloc", ...: syzkaller's k?.?malloc */
static int mallocish(const char *fn)
{
	if (*fn == 'k')
		fn++;
	return strncmp(fn, "malloc", 6) == 0 || (*fn && strncmp(fn + 1, "malloc", 6) == 0);
}

/* The kind of a WARN from the file it fired in and the function it names. */
static void warn_kind(struct header *h, struct str file)
{
	static const struct {
		const char *file;
		const char *title;
		const char *const *skip;
	} kinds[] = {
		{ "lib/refcount.c", "WARNING: refcount bug in %f", refcount_skip },
		{ "lib/debugobjects.c", "WARNING: ODEBUG bug in %f", odebug_skip },
		{ "mm/usercopy.c", "WARNING: bad usercopy in %f", usercopy_skip },
		{ "lib/kobject.c", "WARNING: kobject bug in %f", kobject_skip },
		{ "fs/proc/generic.c", "WARNING: proc registration bug in %f", proc_skip },
		{ "kernel/locking/lockdep.c", "WARNING: locking bug in %f", locking_skip },
	};
	size_t i;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (has_prefix(file, kinds[i].file)) {
			h->title = kinds[i].title;
			h->skip_also = kinds[i].skip;
			return;
		}
	if (has_prefix(file, "mm/vmalloc.c") && strstr(h->hint, "__vmalloc_node")) {
		h->title = "WARNING: zero-size vmalloc in %f";
	} else if (has_prefix(file, "mm/") && mallocish(h->hint)) {
		h->title = "WARNING: kmalloc bug in %f";
		h->skip_also = kmalloc_skip;
	}
}

/* The function a WARNING line names: its last "func+0x1/0x2" or "func()" word. */
static void warn_func(struct str s, char *out)
{
	size_t i = s.n;

	out[0] = 0;
	while (i > 0) {
		size_t e = i, k;

		while (i > 0 && s.p[i - 1] != ' ')
			i--;
		struct str w = { s.p + i, e - i };

		if (parse_sym(w, out))
			return;
		for (k = 0; k < w.n && is_ident((unsigned char)w.p[k]) && w.p[k] != '.'; k++)
			;
		if (k && k + 1 < w.n && w.p[k] == '(' && w.p[k + 1] == ')') {
			copy_clean(out, FN_LEN, w.p, k);
			return;
		}
		while (i > 0 && s.p[i - 1] == ' ')
			i--;
	}
}

/* A "path/file.c:123" word at s, as its file part; 0 if none. */
static int src_word(struct str s, struct str *file)
{
	size_t i = 0;

	while (i < s.n && (is_ident((unsigned char)s.p[i]) || s.p[i] == '/' || s.p[i] == '-'))
		i++;
	if (i < 3 || i + 1 >= s.n || s.p[i] != ':' || s.p[i + 1] < '0' || s.p[i + 1] > '9' ||
	    !memchr(s.p, '.', i))
		return 0;
	file->p = s.p;
	file->n = i;
	return 1;
}

/*
 * DEBUG_BUGVERBOSE_DETAILED's "[cond] file.c:12": the file word after the
 * condition.  The condition is C and may hold "] " itself, so the first
 * "] " followed by a file word ends it.
 */
static int cond_src_word(struct str s, struct str *file)
{
	const char *e;

	if (!s.n || s.p[0] != '[')
		return src_word(s, file);
	while ((e = find_lit(s, "] ")) != NULL) {
		s = skip_n(s, (size_t)(e - s.p) + 2);
		if (src_word(s, file))
			return 1;
	}
	return 0;
}

static struct str after(struct str s, const char *lit)
{
	const char *p = find_lit(s, lit);

	return p ? skip_n(s, (size_t)(p - s.p) + strlen(lit)) : (struct str){ NULL, 0 };
}

static long number_after(struct str s, const char *lit)
{
	struct str n = after(s, lit);
	long v = 0;

	if (!n.n || n.p[0] < '0' || n.p[0] > '9')
		return -1;
	while (n.n && n.p[0] >= '0' && n.p[0] <= '9' && v < 100000000) {
		v = v * 10 + (n.p[0] - '0');
		n = skip_n(n, 1);
	}
	return v;
}

/* "WARNING: CPU: 0 PID: 1 at lib/refcount.c:25 refcount_warn_saturate+0x1/0x2" */
static int parse_cpu_warn(struct header *h)
{
	struct str file;

	h->cpu = number_after(h->at, "CPU: ");
	h->pid = number_after(h->at, " PID: ");
	if (h->cpu < 0 || h->pid < 0 || !find_lit(h->at, " at "))
		return 0;	/* "WARNING: CPU: 1 is busy" from user space */
	warn_func(h->at, h->hint);
	if (cond_src_word(after(h->at, " at "), &file))
		warn_kind(h, file);
	return 1;
}

/*
 * "WARNING: at kernel/foo.c:12 func()", "WARNING: mm/foo.c:12 at func+0x1/0x2,
 * CPU#0: sh/1", "WARNING: [cond] mm/foo.c:12 at ...", and with no file
 * "WARNING: at func+0x1/0x2, CPU#0: sh/1".
 */
static int parse_other_warn(struct header *h)
{
	struct str s = skip_n(h->at, 9), file;
	const char *cpu;

	if (has_prefix(s, "at "))
		s = skip_n(s, 3);
	cpu = find_lit(s, ", CPU#");
	if (!cond_src_word(s, &file)) {
		struct str sym = { s.p, cpu ? (size_t)(cpu - s.p) : 0 };

		/* no file: all that comes before ", CPU#" is one func+0x1/0x2 */
		return cpu && !memchr(sym.p, ' ', sym.n) && parse_sym(sym, h->hint);
	}
	warn_func(s.n > 200 ? (struct str){ s.p, 200 } : s, h->hint);
	if (cpu)
		warn_func((struct str){ s.p, (size_t)(cpu - s.p) }, h->hint);
	warn_kind(h, file);
	return 1;
}

/*
 * The frame-pointer unwinder's own complaints (arch/x86/kernel/unwind_frame.c:
 * "WARNING: kernel stack regs at %p in %s:%d has bad 'bp' value %p", "...
 * frame pointer at %p in %s:%d has bad value %p"): a corrupted stack, no
 * WARN() and no trace of their own; titled without the addresses and task.
 */
static int parse_bad_regs(struct header *h)
{
	const char *q = find_lit(h->at, " has bad '");
	struct str v;
	const char *e;

	if (!q)
		return 0;
	v = skip_n(h->at, (size_t)(q - h->at.p) + 10);
	e = memchr(v.p, '\'', v.n);
	if (!e || e == v.p || e - v.p > 8)
		return 0;
	copy_clean(h->text, sizeof(h->text), v.p, (size_t)(e - v.p));
	return 1;
}

static int parse_bad_fp(struct header *h)
{
	return find_lit(h->at, " has bad value") != NULL;
}

#define WARN_ROW(a, p) { .anchor = a, .title = "WARNING in %f", .from = FROM_STACK, \
	.parse = p, .flags = F_NEEDS_FUNC | F_END_MARK, .skip = SK_BASE, .group = G_WARN, \
	.follows = G_LIST | G_DENTRY, .hdr_max = 60, .tail = 30 }

const struct row fam_warning[] = {
	{ .anchor = "------------[ cut here ]------------", .flags = F_PENDING,
	  .group = G_CUT, .follows = G_DENTRY, .hdr_max = 8 },
	{ .anchor = "WARNING: kernel stack regs at ",
	  .title = "WARNING: kernel stack regs has bad '%h' value", .parse = parse_bad_regs,
	  .flags = F_NO_TRACE },
	{ .anchor = "WARNING: kernel stack frame pointer at ",
	  .title = "WARNING: kernel stack frame pointer has bad value", .parse = parse_bad_fp,
	  .flags = F_NO_TRACE },
	WARN_ROW("WARNING: CPU: ", parse_cpu_warn),
	WARN_ROW("WARNING: ", parse_other_warn),
	{ NULL },
};
