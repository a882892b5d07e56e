// SPDX-License-Identifier: GPL-2.0
/*
 * triage: find every kernel report in a console log, give each the title
 * syzkaller would (KASAN: use-after-free Read in f, WARNING in f, possible
 * deadlock in f, ...), tag it with the rig step and the armed fault
 * injectors, and tell injected allocation failures from real bugs.
 * C11 and libc only; the report families are the tables in fam-*.c.
 *
 * Usage: triage [-r REPORTS_DIR] [-j JSON_FILE] [-f FROM_BYTE] CONSOLE_LOG|-
 *        triage -H|--headers
 *   stdout  "COUNT<TAB>TITLE" per distinct title, most frequent first (ties:
 *           first seen first), nothing else
 *   -f N    count only reports whose first line starts at byte N or later
 *           (markers before N still set the step and the armed injectors)
 *   -r DIR  DIR/NNN-<title-slug>.txt per title (NNN = rank on stdout): a
 *           header, then the lines of the first clean occurrence (else the
 *           first one); DIR/summary.txt, one row per title
 *   -j FILE {"reports":[{"title":"..","count":N,"first_step":N|null,
 *           "injected":bool,"corrupted":bool,"unexplained":bool,
 *           "file":"NNN-...txt"|null}],
 *           "injections":[{"site":"func"|null,"fault":"failslab"|null,
 *           "count":N,"first_step":N|null}]}
 *   -H      print one POSIX extended regex (for bash's [[ $line =~ $re ]])
 *           that matches every console line that starts or belongs to a
 *           report, made from the same header table the detection uses
 *   exit    0 every report explained by an armed injector (or none),
 *           1 a report is not, 2 usage or I/O error (one line on stderr)
 *
 * Rig markers, written to /dev/kmsg: "rig: step N begin ...", "rig: step N
 * end", "rig: inject armed NAME", "rig: inject disarmed NAME".  A report
 * belongs to the last step begun (null before the first) and is "injected"
 * when an injector was armed as it started.  Only allocation failures
 * (warn_alloc: page allocation failure, vmemmap alloc failure, vmalloc error;
 * SLUB: Unable to allocate memory) are explained by that, or by an injected
 * failure just before them in the same task; anything else is a bug.
 * Injector parameters on the kernel command line (failslab=, fail_vmemmap=,
 * ...) count as armed from boot.  A "FAULT_INJECTION: forcing a failure"
 * stack is no kernel report: it is not on stdout, in -r or in the exit code;
 * -j lists it under "injections" by site (the function its stack blames,
 * null when no stack was printed) and injector (the "name" line), in order
 * of first appearance, and -r's summary.txt ends with them.  "rig: FAIL <what>: ..." is the rig's own
 * report (a load that lost data), titled "rig: <what>", never explained.
 * Per title: injected = some occurrence was, unexplained = some occurrence
 * was not explained, corrupted = every occurrence was cut off (by the end of
 * the log or a reboot) or mixed with another CPU's lines.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "triage.h"

/* ---- output -------------------------------------------------------------- */

static int cmp_ent(const void *a, const void *b)
{
	const struct title_ent *x = *(const struct title_ent *const *)a;
	const struct title_ent *y = *(const struct title_ent *const *)b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void slug(char *dst, size_t cap, const char *t)
{
	size_t n = 0;
	int dash = 0;

	for (; *t && n + 1 < cap; t++) {
		if (is_ident((unsigned char)*t) && *t != '.' && *t != '$') {
			if (dash && n)
				dst[n++] = '-';
			dash = 0;
			if (n + 1 < cap)
				dst[n++] = *t;
		} else {
			dash = 1;
		}
	}
	dst[n] = 0;
}

static void file_name(char *dst, size_t cap, unsigned idx, const char *title)
{
	char s[100];

	slug(s, sizeof(s), title);
	snprintf(dst, cap, "%03u-%s.txt", idx + 1, s[0] ? s : "report");
}

static void step_str(char *dst, size_t cap, int step)
{
	if (step >= 0)
		snprintf(dst, cap, "%d", step);
	else
		snprintf(dst, cap, "-");
}

static FILE *open_out(const char *dir, const char *name)
{
	char path[4096];
	FILE *f;

	if (dir)
		snprintf(path, sizeof(path), "%s/%s", dir, name);
	else
		snprintf(path, sizeof(path), "%s", name);
	f = fopen(path, "w");
	if (!f)
		die_io("%s: %s", path, strerror(errno));
	return f;
}

static void close_out(FILE *f, const char *name)
{
	if (ferror(f) | fclose(f))
		die_io("%s: write error", name);
}

static void write_reports(struct title_ent **v, unsigned n)
{
	FILE *f;
	unsigned i;
	char name[160], st[16];

	if (mkdir(opt.reports_dir, 0777) && errno != EEXIST)
		die_io("%s: %s", opt.reports_dir, strerror(errno));
	for (i = 0; i < n; i++) {
		struct title_ent *e = v[i];

		file_name(name, sizeof(name), i, e->title);
		f = open_out(opt.reports_dir, name);
		fprintf(f, "title: %s\ncount: %lu\n", e->title, e->count);
		step_str(st, sizeof(st), e->first_step);
		fprintf(f, "first step: %s\n", st);
		fprintf(f, "injected: %s\n", e->injected ? "yes" : "no");
		fprintf(f, "explained: %s\n", e->unexplained ? "no" : "yes");
		fprintf(f, "corrupted: %s\n", e->all_corrupted ? "yes" : "no");
		if (e->text) {
			fprintf(f, "example: console byte %llu, line %llu%s\n",
				(unsigned long long)e->ex_off, (unsigned long long)e->ex_lineno,
				e->ex_corrupted ? " (corrupted)" : "");
			fprintf(f, "armed then: %s\n",
				e->ex_armed ? e->ex_armed_names : "none");
			fprintf(f, "step marker: %s\n",
				e->ex_step_line[0] ? e->ex_step_line : "none");
			if (!e->ex_has_hw && e->ex_hw[0])
				fprintf(f, "context: %s\n", e->ex_hw);
			if (!e->ex_has_mod && e->ex_mod[0])
				fprintf(f, "context: %s\n", e->ex_mod);
			fputs("\n", f);
			fwrite(e->text, 1, e->text_len, f);
		} else {
			fputs("\n(text not kept: too many distinct reports)\n", f);
		}
		close_out(f, name);
	}
	f = open_out(opt.reports_dir, "summary.txt");
	fprintf(f, "%-5s %6s %6s %-8s %-9s %-11s %s\n", "#", "count", "step",
		"injected", "corrupted", "unexplained", "title");
	for (i = 0; i < n; i++) {
		step_str(st, sizeof(st), v[i]->first_step);
		fprintf(f, "%03u   %6lu %6s %-8s %-9s %-11s %s\n", i + 1, v[i]->count, st,
			v[i]->injected ? "yes" : "no", v[i]->all_corrupted ? "yes" : "no",
			v[i]->unexplained ? "yes" : "no", v[i]->title);
	}
	if (overflow_count)
		fprintf(f, "(%lu more reports with titles beyond the first %u)\n",
			overflow_count, MAX_TITLES);
	for (i = 0; i < ninjections; i++) {
		step_str(st, sizeof(st), injections[i].first_step);
		fprintf(f, "injected  %6lu %6s %s at %s\n", injections[i].count, st,
			injections[i].fault[0] ? injections[i].fault : "failure",
			injections[i].site[0] ? injections[i].site : "(no stack)");
	}
	close_out(f, "summary.txt");
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void write_json(struct title_ent **v, unsigned n)
{
	FILE *f = open_out(NULL, opt.json_file);
	char name[160];
	unsigned i;

	fputs("{\"reports\":[", f);
	for (i = 0; i < n; i++) {
		struct title_ent *e = v[i];

		fputs(i ? ",\n{" : "\n{", f);
		fputs("\"title\":", f);
		json_str(f, e->title);
		fprintf(f, ",\"count\":%lu,\"first_step\":", e->count);
		if (e->first_step >= 0)
			fprintf(f, "%d", e->first_step);
		else
			fputs("null", f);
		fprintf(f, ",\"injected\":%s,\"corrupted\":%s,\"unexplained\":%s,\"file\":",
			e->injected ? "true" : "false", e->all_corrupted ? "true" : "false",
			e->unexplained ? "true" : "false");
		if (opt.reports_dir) {
			file_name(name, sizeof(name), i, e->title);
			json_str(f, name);
		} else {
			fputs("null", f);
		}
		fputc('}', f);
	}
	fputs(n ? "\n]," : "],", f);
	fputs("\"injections\":[", f);
	for (i = 0; i < ninjections; i++) {
		struct injection_ent *j = &injections[i];

		fputs(i ? ",\n{\"site\":" : "\n{\"site\":", f);
		if (j->site[0])
			json_str(f, j->site);
		else
			fputs("null", f);
		fputs(",\"fault\":", f);
		if (j->fault[0])
			json_str(f, j->fault);
		else
			fputs("null", f);
		fprintf(f, ",\"count\":%lu,\"first_step\":", j->count);
		if (j->first_step >= 0)
			fprintf(f, "%d}", j->first_step);
		else
			fputs("null}", f);
	}
	fputs(ninjections ? "\n]}\n" : "]}\n", f);
	close_out(f, opt.json_file);
}

static void usage(void)
{
	fputs("usage: triage [-r REPORTS_DIR] [-j JSON_FILE] [-f FROM_BYTE] CONSOLE_LOG|-\n"
	      "       triage -H|--headers\n", stderr);
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "headers", no_argument, NULL, 'H' },
		{ NULL, 0, NULL, 0 },
	};
	struct title_ent **v;
	int c, fd, bad = 0, headers = 0;
	unsigned i;
	char *end;

	while ((c = getopt_long(argc, argv, "r:j:f:H", longopts, NULL)) != -1) {
		switch (c) {
		case 'r':
			opt.reports_dir = optarg;
			break;
		case 'j':
			opt.json_file = optarg;
			break;
		case 'f':
			errno = 0;
			opt.from = strtoull(optarg, &end, 10);
			if (errno || !*optarg || *end || *optarg == '-')
				die_io("-f wants a byte offset, not '%s'", optarg);
			break;
		case 'H':
			headers = 1;
			break;
		default:
			usage();
		}
	}
	if (headers) {
		if (optind != argc)
			usage();
		print_headers_regex();
		if (fflush(stdout) || ferror(stdout))
			die_io("stdout: write error");
		return 0;
	}
	if (optind != argc - 1)
		usage();
	if (strcmp(argv[optind], "-") == 0) {
		fd = 0;
	} else {
		fd = open(argv[optind], O_RDONLY);
		if (fd < 0)
			die_io("%s: %s", argv[optind], strerror(errno));
	}
	keep_text = opt.reports_dir != NULL;
	core_init();
	scan(fd);
	if (fd)
		close(fd);

	v = xmalloc((ntitles + 1) * sizeof(*v));
	for (i = 0; i < ntitles; i++)
		v[i] = &titles[i];
	qsort(v, ntitles, sizeof(*v), cmp_ent);
	for (i = 0; i < ntitles; i++) {
		printf("%lu\t%s\n", v[i]->count, v[i]->title);
		bad |= v[i]->unexplained;
	}
	if (overflow_count) {
		printf("%lu\ttriage: more distinct titles than %u\n", overflow_count, MAX_TITLES);
		bad = 1;
	}
	if (fflush(stdout) || ferror(stdout))
		die_io("stdout: write error");
	if (opt.reports_dir)
		write_reports(v, ntitles);
	if (opt.json_file)
		write_json(v, ntitles);
	free(v);
	return bad ? 1 : 0;
}
