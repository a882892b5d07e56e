// SPDX-License-Identifier: GPL-2.0
/*
 * rigload: memory load for hotplug-rig (static binary). A daemon per load holds
 * anonymous memory bound to one node, filled with a seeded pattern, optionally
 * held by vmsplice references; clients talk to it over a fifo in /tmp/rigload.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DIR		"/tmp/rigload"
#define PAGE		4096UL
#define MPOL_BIND	2
#define MAX_NODES	1024
#define PIPE_CHUNK	(1UL << 20)
#define BATCH		512
#define MAX_KEYS	4096	/* nodes or memory blocks a load can spread over */

static const char usage[] =
	"usage: rigload [-t SECS] start NAME NODE BYTES SEED [PIN_BYTES]\n"
	"       rigload [-t SECS] verify|where|release|stop NAME\n"
	"       rigload [-t SECS] corrupt NAME OFFSET   (flip a byte: tests the checker)\n";

static unsigned int opt_timeout;	/* -t: seconds; 0 = by size */

/* The load, as the daemon holds it. */
static const char *name;
static uint64_t *buf;
static size_t bytes, pin_bytes;
static unsigned long long seed;
static int node;
static int *pin_fds, npin_fds;

static const char *errname(int err)
{
	const char *s = strerrorname_np(err);

	return s ? s : "E?";
}

static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("rigload: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* splitmix64 of the seed and the word's index: cheap, and no two words alike */
static inline uint64_t pattern(size_t word)
{
	uint64_t z = seed + (word + 1) * 0x9e3779b97f4a7c15ULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static int parse_size(const char *s, size_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		return -1;
	switch (*end) {
	case 'G': v <<= 10; /* fall through */
	case 'M': v <<= 10; /* fall through */
	case 'K': v <<= 10; end++; break;
	}
	if (*end)
		return -1;
	*out = v;
	return 0;
}

static void path(char *p, size_t n, const char *ext)
{
	snprintf(p, n, DIR "/%s.%s", name, ext);
}

static void remove_files(void)
{
	char p[256];

	path(p, sizeof(p), "ctl");
	unlink(p);
	path(p, sizeof(p), "pid");
	unlink(p);
	path(p, sizeof(p), "state");
	unlink(p);
}

static void write_file(const char *ext, const char *fmt, ...)
{
	char p[256], tmp[264];
	va_list ap;
	FILE *f;

	path(p, sizeof(p), ext);
	snprintf(tmp, sizeof(tmp), "%s.tmp", p);
	f = fopen(tmp, "w");
	if (!f)
		return;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	if (fclose(f) == 0)
		rename(tmp, p);
}

static void write_state(const char *state, long long fill_ms, long long verify_ms)
{
	write_file("state", "name %s\nstate %s\nnode %d\nbytes %zu\nseed %llu\n"
		   "pinned %zu\nfill_ms %lld\nverify_ms %lld\n", name, state, node,
		   bytes, seed, npin_fds ? pin_bytes : 0, fill_ms, verify_ms);
}

/* A key of the state file, or 0. */
static unsigned long long state_get(const char *key)
{
	unsigned long long v = 0;
	char p[256], k[32];
	FILE *f;

	path(p, sizeof(p), "state");
	f = fopen(p, "r");
	if (!f)
		return 0;
	while (fscanf(f, "%31s", k) == 1) {
		if (!strcmp(k, key)) {
			if (fscanf(f, "%llu", &v) != 1)
				v = 0;
			break;
		}
		if (fscanf(f, "%*[^\n]") < 0)
			break;
	}
	fclose(f);
	return v;
}

/* Client waits: -t, or one minute plus a second per 16 MiB under TCG. */
static int timeout_ms(size_t n)
{
	if (opt_timeout)
		return opt_timeout * 1000;
	return (60 + (n >> 24)) * 1000;
}

/* One write per record: (v)dprintf fails on /dev/kmsg (SEEK_CUR is EINVAL). */
static void kmsg(const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	int fd, n;

	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fd = open("/dev/kmsg", O_WRONLY);
	if (fd < 0)
		return;
	if (write(fd, msg, n < (int)sizeof(msg) ? n : (int)sizeof(msg) - 1) < 0)
		fprintf(stderr, "rigload: /dev/kmsg: %s\n", errname(errno));
	close(fd);
}

/* The PFN of a mapped address, or 0 when /proc/self/pagemap hides it. */
static unsigned long long pfn_of(const void *addr)
{
	uint64_t e = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd < 0)
		return 0;
	if (pread(fd, &e, 8, (uintptr_t)addr / PAGE * 8) != 8)
		e = 0;
	close(fd);
	return (e >> 63) ? e & ((1ULL << 55) - 1) : 0;
}

/* ---- the daemon ------------------------------------------------------ */

/* on_all_cpus: every CPU the kernel has, whatever the agent's affinity */
static void on_all_cpus(void)
{
	cpu_set_t all;
	long n = sysconf(_SC_NPROCESSORS_CONF), i;

	CPU_ZERO(&all);
	for (i = 0; i < n && i < CPU_SETSIZE; i++)
		CPU_SET(i, &all);
	sched_setaffinity(0, sizeof(all), &all);
}

static int pin(void)
{
	size_t off = 0, n, put;
	int p[2], sz;
	ssize_t r;

	/* At worst a pipe per page, if F_SETPIPE_SZ is refused. */
	pin_fds = calloc(pin_bytes / PAGE + 1, sizeof(*pin_fds));
	if (!pin_fds)
		return ENOMEM;
	while (off < pin_bytes) {
		if (pipe2(p, O_CLOEXEC))
			return errno;
		pin_fds[npin_fds++] = p[0];
		sz = fcntl(p[1], F_SETPIPE_SZ, PIPE_CHUNK);
		if (sz < 0)
			sz = fcntl(p[1], F_GETPIPE_SZ);
		n = pin_bytes - off < (size_t)sz ? pin_bytes - off : (size_t)sz;
		for (put = 0; put < n; put += r) {
			struct iovec iov = { (char *)buf + off + put, n - put };

			r = vmsplice(p[1], &iov, 1, SPLICE_F_NONBLOCK);
			if (r < 0 && errno == EAGAIN && put)
				break;	/* full: on to the next pipe */
			if (r <= 0) {
				close(p[1]);
				return r < 0 ? errno : EIO;
			}
		}
		off += put;
		/* The read end alone keeps the pipe, and the page references. */
		close(p[1]);
	}
	return 0;
}

static void unpin(void)
{
	while (npin_fds)
		close(pin_fds[--npin_fds]);
}

static int verify(FILE *out)
{
	size_t words = bytes / 8, i, first = 0, bad = 0, bad_pages = 0, last_page = -1;
	long long t0 = now_ms();
	char msg[256], pfn_s[24] = "unknown";
	unsigned long long pfn;
	uint64_t exp, got;
	unsigned int b;

	for (i = 0; i < words; i++) {
		if (buf[i] == pattern(i))
			continue;
		if (!bad)
			first = i;
		if (i * 8 / PAGE != last_page) {
			last_page = i * 8 / PAGE;
			bad_pages++;
		}
		bad++;
	}
	write_state(npin_fds ? "pinned" : "ready", state_get("fill_ms"), now_ms() - t0);
	if (!bad) {
		fprintf(out, "ok %zu\n", bytes);
		return 0;
	}
	exp = pattern(first);
	got = buf[first];
	b = __builtin_ctzll(exp ^ got) / 8;
	pfn = pfn_of(&buf[first]);
	if (pfn)
		snprintf(pfn_s, sizeof(pfn_s), "0x%llx", pfn);
	snprintf(msg, sizeof(msg),
		 "mismatch at vaddr %p pfn %s offset %zu expected 0x%02x got 0x%02x (%zu bad words in %zu pages)",
		 (char *)buf + first * 8 + b, pfn_s, first * 8 + b,
		 (unsigned int)(exp >> 8 * b) & 0xff, (unsigned int)(got >> 8 * b) & 0xff,
		 bad, bad_pages);
	fprintf(out, "%s\n", msg);
	kmsg("rig: FAIL data mismatch in load %s: %s\n", name, msg);
	return 1;
}

struct tally {
	int key, pages, pinned;
};

static void count(struct tally *t, int *n, int key, int pinned)
{
	int k;

	for (k = 0; k < *n && t[k].key != key; k++)
		;
	if (k == *n) {
		if (*n == MAX_KEYS)
			return;
		t[(*n)++] = (struct tally){ .key = key };
	}
	t[k].pages++;
	t[k].pinned += pinned;
}

static int by_key(const void *a, const void *b)
{
	return ((const struct tally *)a)->key - ((const struct tally *)b)->key;
}

/* Pages per node (move_pages) and per memory block (pagemap PFNs). */
static int where(FILE *out)
{
	static struct tally nodes[MAX_KEYS], blocks[MAX_KEYS];
	size_t npg = bytes / PAGE, pinned_pg = npin_fds ? pin_bytes / PAGE : 0;
	unsigned long long block_size = 0, pfn;
	int nn = 0, nb = 0, fd, st[BATCH], err = 0, no_pfn = 0, k, n;
	uint64_t pm[BATCH];
	void *pages[BATCH];
	size_t i, j;
	FILE *f;

	f = fopen("/sys/devices/system/memory/block_size_bytes", "r");
	if (f) {
		if (fscanf(f, "%llx", &block_size) != 1)
			block_size = 0;
		fclose(f);
	}
	fd = open("/proc/self/pagemap", O_RDONLY);
	for (i = 0; i < npg; i += BATCH) {
		n = npg - i < BATCH ? npg - i : BATCH;
		for (j = 0; j < (size_t)n; j++)
			pages[j] = (char *)buf + (i + j) * PAGE;
		if (syscall(SYS_move_pages, 0, n, pages, NULL, st, 0)) {
			err = errno;
			break;
		}
		if (fd < 0 || pread(fd, pm, n * 8, ((uintptr_t)buf / PAGE + i) * 8) != n * 8)
			no_pfn = 1;
		for (j = 0; j < (size_t)n; j++) {
			int p = i + j < pinned_pg;

			count(nodes, &nn, st[j] < 0 ? -1 : st[j], p);
			pfn = pm[j] & ((1ULL << 55) - 1);
			if (no_pfn || !block_size || !(pm[j] >> 63) || !pfn) {
				no_pfn = 1;
				continue;
			}
			count(blocks, &nb, pfn * PAGE / block_size, p);
		}
	}
	if (fd >= 0)
		close(fd);
	if (err) {
		fprintf(out, "move_pages: %s\n", errname(err));
		return 1;
	}
	qsort(nodes, nn, sizeof(*nodes), by_key);
	qsort(blocks, nb, sizeof(*blocks), by_key);
	fprintf(out, "load %s node %d pages %zu pinned %zu\n", name, node, npg, pinned_pg);
	for (k = 0; k < nn; k++) {
		if (nodes[k].key < 0)
			fprintf(out, "node - pages %d pinned %d\n", nodes[k].pages, nodes[k].pinned);
		else
			fprintf(out, "node %d pages %d pinned %d\n", nodes[k].key,
				nodes[k].pages, nodes[k].pinned);
	}
	if (no_pfn)
		fprintf(out, "blocks unknown (no PFNs in /proc/self/pagemap)\n");
	else
		for (k = 0; k < nb; k++)
			fprintf(out, "block %d pages %d pinned %d\n", blocks[k].key,
				blocks[k].pages, blocks[k].pinned);
	return 0;
}

/* One request: "CMD REPLY_FIFO [ARG]". The reply ends with "exit N". */
static int serve(char *line)
{
	char cmd[16], reply[200];
	unsigned long long arg = 0;
	int fd, st = 0, stop = 0;
	FILE *out;

	if (sscanf(line, "%15s %199s %llu", cmd, reply, &arg) < 2)
		return 0;
	fd = open(reply, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return 0;	/* the client gave up */
	fcntl(fd, F_SETFL, 0);
	out = fdopen(fd, "w");
	if (!out) {
		close(fd);
		return 0;
	}
	if (!strcmp(cmd, "verify")) {
		st = verify(out);
	} else if (!strcmp(cmd, "where")) {
		st = where(out);
	} else if (!strcmp(cmd, "release")) {
		fprintf(out, "released %zu bytes\n", npin_fds ? pin_bytes : 0);
		unpin();
		write_state("ready", state_get("fill_ms"), state_get("verify_ms"));
	} else if (!strcmp(cmd, "corrupt")) {
		if (arg < bytes) {
			((volatile unsigned char *)buf)[arg] ^= 0xff;
			fprintf(out, "flipped byte at offset %llu\n", arg);
		} else {
			fprintf(out, "offset %llu is beyond the load's %zu bytes\n", arg, bytes);
			st = 2;
		}
	} else if (!strcmp(cmd, "stop")) {
		unpin();
		munmap(buf, bytes);
		remove_files();	/* before the reply: the name is free again */
		fprintf(out, "stopped %s\n", name);
		stop = 1;
	} else {
		fprintf(out, "unknown request '%s'\n", cmd);
		st = 2;
	}
	fprintf(out, "exit %d\n", st);
	fclose(out);
	return stop;
}

static void __attribute__((noreturn)) daemon_main(int ready, int ctl)
{
	unsigned long mask[MAX_NODES / 64] = { 0 };
	char req[4096];
	long long t0, fill_ms;
	size_t i, have = 0;
	int err;
	char *nl;
	ssize_t r;

	buf = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED) {
		dprintf(ready, "mmap %zu bytes: %s\n", bytes, errname(errno));
		_exit(1);
	}
	mask[node / 64] = 1UL << (node % 64);
	if (syscall(SYS_mbind, buf, bytes, MPOL_BIND, mask, MAX_NODES + 1, 0)) {
		dprintf(ready, "mbind to node %d: %s%s\n", node, errname(errno),
			errno == EINVAL ? " (a node without memory?)" : "");
		_exit(1);
	}
	t0 = now_ms();
	for (i = 0; i < bytes / 8; i++)
		buf[i] = pattern(i);
	fill_ms = now_ms() - t0;
	if (pin_bytes) {
		err = pin();
		if (err) {
			dprintf(ready, "vmsplice %zu bytes: %s\n", pin_bytes, errname(err));
			_exit(1);
		}
	}
	write_file("pid", "%d\n", getpid());
	write_state(npin_fds ? "pinned" : "ready", fill_ms, 0);
	dprintf(ready, "ok\n");
	close(ready);

	for (;;) {
		r = read(ctl, req + have, sizeof(req) - 1 - have);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		have += r;
		req[have] = 0;
		while ((nl = strchr(req, '\n'))) {
			*nl = 0;
			if (serve(req))
				goto out;
			have -= nl + 1 - req;
			memmove(req, nl + 1, have + 1);
		}
		if (have == sizeof(req) - 1)
			have = 0;	/* garbage without a newline */
	}
out:
	remove_files();
	_exit(0);
}

/* ---- the clients ----------------------------------------------------- */

static int do_start(int argc, char **argv)
{
	char p[256], msg[256] = "";
	int rp[2], ctl, fd, st, n = 0;
	struct pollfd pfd;
	long long t0 = now_ms();
	pid_t pid;
	ssize_t r;

	if (argc < 4 || argc > 5) {
		fputs(usage, stderr);
		return 2;
	}
	node = atoi(argv[1]);
	if (node < 0 || node >= MAX_NODES)
		die("node '%s' out of range", argv[1]);
	if (parse_size(argv[2], &bytes) || !bytes || bytes % PAGE)
		die("BYTES '%s' is not a size in whole pages (K, M, G)", argv[2]);
	seed = strtoull(argv[3], NULL, 0);
	if (argc == 5 && (parse_size(argv[4], &pin_bytes) || pin_bytes > bytes))
		die("PIN_BYTES '%s' is not a size up to BYTES", argv[4]);
	pin_bytes = (pin_bytes + PAGE - 1) & ~(PAGE - 1);

	if (mkdir(DIR, 0755) && errno != EEXIST)
		die("mkdir " DIR ": %s", errname(errno));
	path(p, sizeof(p), "ctl");
	fd = open(p, O_WRONLY | O_NONBLOCK);
	if (fd >= 0)
		die("load %s is running already", name);
	unlink(p);
	if (mkfifo(p, 0600))
		die("mkfifo %s: %s", p, errname(errno));
	ctl = open(p, O_RDWR | O_CLOEXEC);
	if (ctl < 0 || pipe2(rp, O_CLOEXEC))
		die("%s: %s", p, errname(errno));

	pid = fork();
	if (pid < 0)
		die("fork: %s", errname(errno));
	if (pid == 0) {
		/* Leave the agent's session, its port and its signals behind. */
		setsid();
		/* and its CPU: the agent keeps to the first (guest/agent) */
		on_all_cpus();
		signal(SIGPIPE, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		signal(SIGINT, SIG_IGN);
		dup2(rp[1], 100);
		dup2(ctl, 101);
		fd = open("/dev/null", O_RDWR);
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		dup2(100, 3);
		dup2(101, 4);
		close_range(5, ~0U, 0);
		daemon_main(3, 4);
	}
	close(rp[1]);
	close(ctl);
	pfd = (struct pollfd){ .fd = rp[0], .events = POLLIN };
	for (;;) {
		r = poll(&pfd, 1, timeout_ms(bytes) - (now_ms() - t0));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			kill(pid, SIGKILL);
			die("load %s: no answer from the daemon within %d s", name,
			    timeout_ms(bytes) / 1000);
		}
		r = read(rp[0], msg + n, sizeof(msg) - 1 - n);
		if (r <= 0)
			break;
		n += r;
		msg[n] = 0;
		if (strchr(msg, '\n'))
			break;
	}
	if (!strcmp(msg, "ok\n")) {
		printf("started %s node %d bytes %zu pinned %zu\n", name, node, bytes, pin_bytes);
		return 0;
	}
	unlink(p);
	if (n) {
		waitpid(pid, NULL, 0);
		die("load %s: %.*s", name, (int)strcspn(msg, "\n"), msg);
	}
	if (waitpid(pid, &st, 0) == pid && WIFSIGNALED(st))
		die("load %s: the daemon was killed by signal %d%s while filling %zu bytes on node %d",
		    name, WTERMSIG(st), WTERMSIG(st) == SIGKILL ? " (the OOM killer?)" : "",
		    bytes, node);
	die("load %s: the daemon died before it was ready", name);
	return 1;
}

/* verify, where, release, corrupt, stop: one request, its reply to stdout. */
static int do_request(const char *cmd, unsigned long long arg)
{
	char ctlp[256], reply[256], line[4096], req[300];
	long long t0 = now_ms();
	int ctl, fd, st = -1, len, tmo;
	struct pollfd pfd;
	FILE *in;

	path(ctlp, sizeof(ctlp), "ctl");
	ctl = open(ctlp, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (ctl < 0) {
		if (errno == ENOENT)
			die("no load %s", name);
		if (errno != ENXIO)
			die("%s: %s", ctlp, errname(errno));
		/* No reader: the daemon died (OOM killer, a signal). */
		if (!strcmp(cmd, "stop"))
			remove_files();
		die("load %s: its daemon is gone", name);
	}
	snprintf(reply, sizeof(reply), DIR "/%s.reply.%d", name, getpid());
	unlink(reply);
	if (mkfifo(reply, 0600))
		die("mkfifo %s: %s", reply, errname(errno));
	fd = open(reply, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		die("%s: %s", reply, errname(errno));
	len = snprintf(req, sizeof(req), "%s %s %llu\n", cmd, reply, arg);
	if (write(ctl, req, len) != len) {
		unlink(reply);
		die("load %s: request: %s", name, errname(errno));
	}
	close(ctl);
	/* Until the daemon has opened and closed the fifo: POLLHUP then. */
	tmo = timeout_ms(state_get("bytes"));
	pfd = (struct pollfd){ .fd = fd, .events = POLLIN };
	for (;;) {
		int r = poll(&pfd, 1, tmo - (now_ms() - t0));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			unlink(reply);
			die("load %s: no answer to %s within %d s", name, cmd, tmo / 1000);
		}
		if (pfd.revents & POLLIN)
			break;
		if (pfd.revents & POLLHUP)
			break;
	}
	fcntl(fd, F_SETFL, 0);
	unlink(reply);
	in = fdopen(fd, "r");
	while (in && fgets(line, sizeof(line), in)) {
		if (sscanf(line, "exit %d", &st) == 1)
			break;
		fputs(line, stdout);
	}
	if (st < 0)
		die("load %s: the daemon died during %s", name, cmd);
	return st;
}

int main(int argc, char **argv)
{
	const char *cmd;
	unsigned long long arg = 0;
	size_t i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 2 && !strcmp(argv[1], "-t")) {
		opt_timeout = strtoul(argv[2], NULL, 10);
		argc -= 2;
		argv += 2;
	}
	if (argc < 3) {
		fputs(usage, stderr);
		return 2;
	}
	cmd = argv[1];
	name = argv[2];
	for (i = 0; name[i]; i++)
		if (!(name[i] >= 'a' && name[i] <= 'z') && !(name[i] >= '0' && name[i] <= '9') &&
		    name[i] != '-' && name[i] != '_')
			break;
	if (name[i] || !i || i > 32)
		die("'%s' is not a load name ([a-z0-9_-], up to 32)", name);
	if (!strcmp(cmd, "start"))
		return do_start(argc - 2, argv + 2);
	if (!strcmp(cmd, "corrupt")) {
		if (argc != 4) {
			fputs(usage, stderr);
			return 2;
		}
		arg = strtoull(argv[3], NULL, 0);
	} else if (argc != 3 || (strcmp(cmd, "verify") && strcmp(cmd, "where") &&
				 strcmp(cmd, "release") && strcmp(cmd, "stop"))) {
		fputs(usage, stderr);
		return 2;
	}
	return do_request(cmd, arg);
}
