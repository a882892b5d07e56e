// SPDX-License-Identifier: GPL-2.0
/*
 * rigstate: the guest's state for hotplug-rig's per-step check, in one pass
 * (static binary). Prints what the agent's shell verb "state" printed, line
 * for line:
 *   block_size BYTES
 *   memtotal KB
 *   node NID KB                    per node
 *   auto_online POLICY
 *   block N NODE STATE ZONES       per memory block (NODE, ZONES "-" if none)
 *   vmemmap NAME VALUE             the series' counters, where present
 *   vmemmap-check LINE
 *   vmemmap injected_NAME VALUE
 * The shell version read every file a byte per system call; under TCG that
 * was most of a checked step's cost.
 *
 * rigstate --serve REQ ACK: the same for every request ID (a line) read
 * from the fifo REQ, its lines followed by the agent's "E ID STATUS" in the
 * same write, then STATUS on the fifo ACK. The agent starts it once: under
 * TCG a fork and exec of this binary cost about as much as the pass, and
 * the agent's own "E" line, written after it heard back, came 3 ms later.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MEMDIR "/sys/devices/system/memory"
#define NODEDIR "/sys/devices/system/node"
#define DBG "/sys/kernel/debug"

static char buf[1 << 16];

/* read_file: PATH's content into buf, NUL-terminated; -1 if unreadable */
static int read_file(const char *path)
{
	ssize_t n, len = 0;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -1;
	while ((n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += n;
	close(fd);
	buf[len] = '\0';
	return n < 0 ? -1 : 0;
}

/* trim: S without leading and trailing blanks (as the shell's read) */
static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/* first_line: the first line of buf, trimmed */
static char *first_line(void)
{
	buf[strcspn(buf, "\n")] = '\0';
	return trim(buf);
}

/* memtotal: the kB of the "MemTotal:" line of a meminfo file in buf */
static long long memtotal(void)
{
	char *p = strstr(buf, "MemTotal:");

	return p ? atoll(p + strlen("MemTotal:")) : -1;
}

static int is_num(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

static int by_number(const struct dirent **a, const struct dirent **b)
{
	return strverscmp((*a)->d_name, (*b)->d_name);
}

/* numbered: entries PREFIX<number> of DIR, in number order */
static int numbered(const char *dir, const char *prefix, struct dirent ***list)
{
	struct dirent **all;
	int n, i, k = 0;
	size_t pl = strlen(prefix);

	n = scandir(dir, &all, NULL, by_number);
	if (n < 0)
		return 0;
	for (i = 0; i < n; i++) {
		if (!strncmp(all[i]->d_name, prefix, pl) && is_num(all[i]->d_name + pl))
			all[k++] = all[i];
		else
			free(all[i]);
	}
	*list = all;
	return k;
}

/*
 * The node of each block, from the nodes' links to their blocks (one
 * directory read a node rather than one a block; the links are made and
 * removed in pairs with the blocks' own): the highest node linking it, as
 * the shell's last match. Indexed by block number; -1 for none.
 */
static int *block_node;
static int block_nodes;

static void map_nodes(struct dirent **nodes, int n)
{
	struct dirent **links;
	char path[512];
	int i, j, k, b;

	for (i = 0; i < block_nodes; i++)
		block_node[i] = -1;
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), NODEDIR "/%s", nodes[i]->d_name);
		k = numbered(path, "memory", &links);
		for (j = 0; j < k; j++) {
			b = atoi(links[j]->d_name + 6);
			if (b >= block_nodes) {
				int *m = realloc(block_node, (b + 64) * sizeof(*m));

				if (!m)
					exit(1);
				block_node = m;
				while (block_nodes < b + 64)
					block_node[block_nodes++] = -1;
			}
			block_node[b] = atoi(nodes[i]->d_name + 4);
			free(links[j]);
		}
		if (k)
			free(links);
	}
}

static void block_line(const char *name)
{
	char path[512], st[64], node[32] = "-";
	const char *zone = "-";
	int b = atoi(name + 6);

	snprintf(path, sizeof(path), MEMDIR "/%s/state", name);
	if (read_file(path))
		return;
	snprintf(st, sizeof(st), "%s", first_line());
	if (b < block_nodes && block_node[b] >= 0)
		snprintf(node, sizeof(node), "%d", block_node[b]);
	if (!strcmp(st, "online")) {
		snprintf(path, sizeof(path), MEMDIR "/%s/valid_zones", name);
		if (!read_file(path))
			zone = first_line();
	}
	printf("block %s %s %s %s\n", name + 6, node, st, zone);
}

/*
 * each_line: "PREFIX<line>" for each line of PATH, blanks trimmed; with
 * PAIRS, "PREFIX<first word> <rest>" (the shell's "read -r name val").
 */
static void each_line(const char *path, const char *prefix, int pairs)
{
	char *line, *save, *rest;
	size_t w;

	if (read_file(path))
		return;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		line = trim(line);
		if (!*line)
			continue;
		w = strcspn(line, " \t");
		if (!pairs || !line[w]) {
			printf("%s%s\n", prefix, line);
			continue;
		}
		line[w] = '\0';
		rest = trim(line + w + 1);
		printf("%s%s %s\n", prefix, line, rest);
	}
}

/* state: one pass, every line of it written before it returns */
static int state(void)
{
	struct dirent **list, **nodes;
	char path[512];
	int i, n, nn;

	if (read_file(MEMDIR "/block_size_bytes"))
		return 1;
	printf("block_size %lld\n", strtoll(first_line(), NULL, 16));
	if (!read_file("/proc/meminfo"))
		printf("memtotal %lld\n", memtotal());
	nn = numbered(NODEDIR, "node", &nodes);
	for (i = 0; i < nn; i++) {
		snprintf(path, sizeof(path), NODEDIR "/%s/meminfo", nodes[i]->d_name);
		if (!read_file(path))
			printf("node %s %lld\n", nodes[i]->d_name + 4, memtotal());
	}
	map_nodes(nodes, nn);
	for (i = 0; i < nn; i++)
		free(nodes[i]);
	if (nn)
		free(nodes);
	if (!read_file(MEMDIR "/auto_online_blocks"))
		printf("auto_online %s\n", first_line());
	n = numbered(MEMDIR, "memory", &list);
	for (i = 0; i < n; i++) {
		block_line(list[i]->d_name);
		free(list[i]);
	}
	if (n)
		free(list);
	if (!access(DBG "/vmemmap/stats", R_OK)) {
		each_line(DBG "/vmemmap/stats", "vmemmap ", 1);
		each_line(DBG "/vmemmap/check", "vmemmap-check ", 0);
		if (!access(DBG "/fail_vmemmap/injected", R_OK))
			each_line(DBG "/fail_vmemmap/injected", "vmemmap injected_", 1);
	}
	return 0;
}

/* serve: a pass for each request on REQ, ended as the agent ends a reply */
static int serve(const char *req, const char *ack)
{
	char id[32], line[16];
	FILE *in;
	int out, len, st;

	in = fopen(req, "r");
	out = in ? open(ack, O_WRONLY) : -1;
	if (out < 0) {
		perror("rigstate");
		return 1;
	}
	while (fgets(id, sizeof(id), in)) {
		id[strcspn(id, "\n")] = '\0';
		st = state();
		printf("E %s %d\n", id, st);
		fflush(stdout);
		len = snprintf(line, sizeof(line), "%d\n", st);
		if (write(out, line, len) != len)
			return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	/* one write to the agent's port, not one a line */
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	if (argc == 4 && !strcmp(argv[1], "--serve"))
		return serve(argv[2], argv[3]);
	if (argc != 1) {
		fprintf(stderr, "usage: rigstate [--serve REQ ACK]\n");
		return 2;
	}
	return state();
}
