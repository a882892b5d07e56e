// SPDX-License-Identifier: GPL-2.0
/*
 * triage core: the rig's markers ("rig: step N begin ...", "rig: inject
 * armed NAME", ...) and injectors armed from the kernel command line: the
 * step a report belongs to and whether an injector explains it.
 */
#include <stdio.h>
#include <string.h>

#include "triage.h"

static int cur_step = -1;
static char cur_step_line[CTX_LEN];
static char armed[MAX_ARMED][ARMED_NAME];
static int narmed;

int marker_step(void)
{
	return cur_step;
}

const char *marker_step_line(void)
{
	return cur_step_line;
}

int markers_armed(void)
{
	return narmed;
}

void markers_armed_names(char *out, size_t cap)
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

static void arm(const char *name)
{
	int k;

	for (k = 0; k < narmed; k++)
		if (strcmp(armed[k], name) == 0)
			return;
	if (narmed < MAX_ARMED)
		strcpy(armed[narmed++], name);
}

/* "rig: step N begin ...", "rig: step N end", "rig: inject (armed|disarmed) NAME" */
void parse_marker(struct str m, const char *line, size_t len)
{
	char name[ARMED_NAME];
	size_t i = 0;
	int k;

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
			if (keep_text)	/* only report files show it */
				copy_clean(cur_step_line, sizeof(cur_step_line), line, len);
		}
		return;
	}
	if (!has_prefix(m, "inject "))
		return;
	m = skip_n(m, 7);
	int on = has_prefix(m, "armed ");

	if (!on && !has_prefix(m, "disarmed "))
		return;
	m = skip_n(m, on ? 6 : 9);
	while (i < m.n && i < sizeof(name) - 1 && m.p[i] != ' ' && m.p[i] != '\t')
		i++;
	if (!i)
		return;
	copy_clean(name, sizeof(name), m.p, i);
	if (on) {
		arm(name);
		return;
	}
	if (strcmp(name, "all") == 0) {
		narmed = 0;
		return;
	}
	for (k = 0; k < narmed; k++)
		if (strcmp(armed[k], name) == 0) {
			memmove(armed[k], armed[k + 1], (size_t)(narmed - k - 1) * ARMED_NAME);
			narmed--;
			return;
		}
}

/*
 * Injectors armed from boot by their kernel parameters ("failslab=",
 * "fail_page_alloc=", "fail_vmemmap=", ...): armed for the whole log, as
 * "boot:NAME".
 */
void parse_cmdline(struct str m)
{
	static const char *const params[] = {
		"failslab=", "fail_page_alloc=", "fail_vmemmap=", "fail_futex=",
		"fail_make_request=", "fail_usercopy=",
	};
	char name[ARMED_NAME];
	size_t i;

	for (i = 0; i < sizeof(params) / sizeof(params[0]); i++) {
		const char *at = find_lit(m, params[i]);

		if (!at || (at > m.p && at[-1] != ' '))
			continue;
		snprintf(name, sizeof(name), "boot:%.*s", (int)(strlen(params[i]) - 1), params[i]);
		arm(name);
	}
}

