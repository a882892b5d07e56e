// SPDX-License-Identifier: GPL-2.0
/*
 * rigctl: the guest's precise sysfs writer for hotplug-rig (static binary).
 *   rigctl write [-t SECS] VALUE FILE...  write VALUE to each FILE in order;
 *                                         on a failure print "ERRNO FILE"
 *                                         (EBUSY, EINTR...) and exit 1
 *   rigctl cycle N FILE...             N x (online_movable all, offline all
 *                                      in reverse); print the time per cycle
 * -t arms SIGALRM without SA_RESTART: offline_pages() retries until a signal
 * is pending, so the write returns EINTR instead of hanging.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void on_alarm(int sig)
{
	(void)sig;
}

static int write_file(const char *path, const char *val, unsigned int secs)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	int fd, err = 0;
	ssize_t n;

	fd = open(path, O_WRONLY);
	if (fd < 0)
		return errno;
	if (secs) {
		sigaction(SIGALRM, &sa, NULL);
		alarm(secs);
	}
	n = write(fd, val, strlen(val));
	if (n < 0)
		err = errno;
	if (secs)
		alarm(0);
	close(fd);
	return err;
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int report(const char *path, int err)
{
	const char *name = strerrorname_np(err);

	printf("%s %s\n", name ? name : "E?", path);
	return 1;
}

static int do_write(int argc, char **argv)
{
	unsigned int secs = 0;
	int i, err;

	if (argc > 2 && !strcmp(argv[0], "-t")) {
		secs = strtoul(argv[1], NULL, 10);
		argc -= 2;
		argv += 2;
	}
	if (argc < 2) {
		fprintf(stderr, "usage: rigctl write [-t SECS] VALUE FILE...\n");
		return 2;
	}
	for (i = 1; i < argc; i++) {
		err = write_file(argv[i], argv[0], secs);
		if (err)
			return report(argv[i], err);
	}
	return 0;
}

static int do_cycle(int argc, char **argv)
{
	long long t0;
	int n, i, c, err;

	if (argc < 2) {
		fprintf(stderr, "usage: rigctl cycle N FILE...\n");
		return 2;
	}
	n = atoi(argv[0]);
	t0 = now_ns();
	for (c = 0; c < n; c++) {
		for (i = 1; i < argc; i++) {
			err = write_file(argv[i], "online_movable", 0);
			if (err)
				return report(argv[i], err);
		}
		for (i = argc - 1; i >= 1; i--) {
			err = write_file(argv[i], "offline", 10);
			if (err)
				return report(argv[i], err);
		}
	}
	printf("cycles %d cycle_ns %lld\n", n, n ? (now_ns() - t0) / n : 0);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "write"))
		return do_write(argc - 2, argv + 2);
	if (argc >= 2 && !strcmp(argv[1], "cycle"))
		return do_cycle(argc - 2, argv + 2);
	fprintf(stderr, "usage: rigctl write|cycle ...\n");
	return 2;
}
