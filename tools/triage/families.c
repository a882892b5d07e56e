// SPDX-License-Identifier: GPL-2.0
/*
 * triage: the report families, one row each.  Adding a family is writing
 * its fam-NAME.c (a table of header rows) and adding one row here.  The
 * detection and --headers both read this table, so they cannot drift.
 */
#include <stdio.h>
#include <string.h>

#include "triage.h"

extern const struct row fam_sanitizers[], fam_oops[], fam_warning[], fam_lockdep[],
	fam_stalls[], fam_memory[], fam_panics[], fam_injection[], fam_acpi[];

const struct family families[] = {
	{ "sanitizers (KASAN, KFENCE, KMSAN, KCSAN, UBSAN)", fam_sanitizers },
	{ "BUG, Oops, general protection fault, kernel BUG", fam_oops },
	{ "WARNING and its kinds (refcount, ODEBUG, kmalloc, ...)", fam_warning },
	{ "lockdep and lock debugging", fam_lockdep },
	{ "stalls, lockups and hung tasks", fam_stalls },
	{ "memory and page state, invalid context", fam_memory },
	{ "panics and double faults", fam_panics },
	{ "ACPICA object reference counts", fam_acpi },
	{ "allocation failures, fault injection, the rig's own failures", fam_injection },
	{ NULL, NULL },
};

static void put_ere(const char *s)
{
	for (; *s; s++) {
		if (strchr(".[]()*+?{}|^$\\", *s))
			putchar('\\');
		putchar(*s);
	}
}

/* Another anchor or trace start inside this one: then the filter needs only that one. */
static int covered(const char *a)
{
	const struct family *f;
	const struct row *r;
	const char *const *t;

	for (f = families; f->name; f++)
		for (r = f->rows; r->anchor; r++)
			if (r->anchor != a && strstr(a, r->anchor) &&
			    (strlen(r->anchor) < strlen(a) || r->anchor < a))
				return 1;
	for (t = trace_starts; *t; t++)
		if (*t != a && strstr(a, *t))
			return 1;
	return 0;
}

static void alternative(const char *a, int *first)
{
	if (covered(a))
		return;
	if (!*first)
		putchar('|');
	put_ere(a);
	*first = 0;
}

/*
 * One ERE, an alternation of every row's anchor and every trace start, all
 * quoted: a superset of what starts or continues a report (a row's parser
 * may still say no), for a quick filter in front of triage.
 */
void print_headers_regex(void)
{
	const struct family *f;
	const struct row *r;
	const char *const *t;
	int first = 1;

	putchar('(');
	for (f = families; f->name; f++)
		for (r = f->rows; r->anchor; r++)
			alternative(r->anchor, &first);
	for (t = trace_starts; *t; t++)
		alternative(*t, &first);
	puts(")");
}
