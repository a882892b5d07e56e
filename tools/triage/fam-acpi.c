// SPDX-License-Identifier: GPL-2.0
/*
 * triage family: ACPICA's own object checks (drivers/acpi/acpica/utdelete.c,
 * acpi_ut_update_ref_count, through ACPI_WARNING: "ACPI Warning: Obj %p,
 * Reference Count ...").  An object whose reference count would go below
 * zero, or rises from zero, was freed while something still used it: the
 * interpreter goes on, and the next user of that memory may crash far from
 * here (a failed allocation in an AML method's error path can do it).  They
 * print no stack.  Other ACPI warnings are no report.
 */
#include "triage.h"

static int parse_refcount(struct header *h)
{
	if (find_lit(h->at, "Reference Count is already zero")) {
		h->title = "ACPI: object reference count underflow";
		return 1;
	}
	if (find_lit(h->at, "Reference Count was zero before increment")) {
		h->title = "ACPI: object reference count raised from zero";
		return 1;
	}
	return 0;
}

const struct row fam_acpi[] = {
	{ .anchor = "ACPI Warning: Obj ", .title = "ACPI: object reference count",
	  .parse = parse_refcount, .flags = F_NO_TRACE, .hdr_max = 120 },
	{ NULL },
};
