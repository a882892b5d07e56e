// SPDX-License-Identifier: GPL-2.0
/*
 * rigchan: one line channel of the rig's runner to a QEMU unix socket (QMP,
 * the guest agent), in place of socat, so that bash can read it fast.
 *
 *   rigchan SOCKET SPOOL TAG
 *
 * Standard input goes to SOCKET as it comes. What SOCKET sends is appended
 * to the file SPOOL.0 in whole lines, and after each write one byte goes to
 * standard output (a pipe) unless one is still unread there: a wake-up. The
 * runner waits for a wake-up with bash's "read -t" and then reads the lines
 * from the file. bash reads a pipe one byte per system call, and with a
 * timeout it also polls before each byte (about 2 us a byte here); a
 * regular file it reads a buffer at a time. A thirty-line agent reply took
 * 3-4 ms through socat's pipe.
 *
 * The spool is cut into segments of SEGMENT bytes (RIGCHAN_SEGMENT): at a line boundary past
 * that size, SPOOL.N+1 is created and the line "\001rigchan TAG next" ends
 * SPOOL.N; the reader moves on to SPOOL.N+1 and removes SPOOL.N. TAG is the
 * runner's, so nothing the guest prints can pass for it.
 *
 * The connect is retried for 2 s (QEMU binds its socket before it listens).
 * Ends when SOCKET ends, with the last partial line written out whole
 * (the runner reads the rest of the spool), or when standard input ends
 * or SIGTERM comes (the runner closed the channel, or died), removing the
 * spool; exit status 1 on an error, said on stderr.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define SEGMENT (4 << 20)	/* RIGCHAN_SEGMENT=BYTES (tests) */
#define LINE_MAX_BYTES (1 << 16)	/* a longer line is cut in two */

static const char *spool, *tag;
static int seg_fd = -1;
static unsigned int seg_no;
static size_t seg_bytes, seg_max = SEGMENT;

static void die(const char *what)
{
	fprintf(stderr, "rigchan: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void write_all(int fd, const char *p, size_t n, const char *what)
{
	ssize_t w;

	while (n) {
		w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			die(what);
		}
		p += w;
		n -= w;
	}
}

/* the segment being written and the next, named ahead for on_term() */
static char seg_path[2][4096];

static int open_segment(unsigned int no)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s.%u", spool, no);
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		die(path);
	return fd;
}

static void name_segments(unsigned int no)
{
	snprintf(seg_path[0], sizeof(seg_path[0]), "%s.%u", spool, no);
	snprintf(seg_path[1], sizeof(seg_path[1]), "%s.%u", spool, no + 1);
}

/*
 * The end of standard input or SIGTERM: the runner closed the channel, or
 * died (its descriptors closed, the parent-death signal): nobody reads
 * the spool any more. A runner killed with -9 left its segments in /tmp,
 * up to 8 MiB of them after a soak. Exit status 0 for the end of input.
 */
static void on_term(int sig)
{
	unlink(seg_path[0]);
	unlink(seg_path[1]);
	_exit(sig ? 128 + sig : 0);
}

/* spool_lines: whole lines to the spool, a new segment when one is full */
static void spool_lines(const char *p, size_t n)
{
	char mark[256];
	int next, len;

	write_all(seg_fd, p, n, "spool");
	seg_bytes += n;
	if (seg_bytes < seg_max)
		return;
	next = open_segment(seg_no + 1);
	len = snprintf(mark, sizeof(mark), "\001rigchan %s next\n", tag);
	write_all(seg_fd, mark, len, "spool");
	close(seg_fd);
	seg_fd = next;
	seg_no++;
	seg_bytes = 0;
	name_segments(seg_no);
}

/* wake: one byte to the runner, unless the last one is still unread */
static void wake(void)
{
	int pending = 0;

	if (!ioctl(STDOUT_FILENO, FIONREAD, &pending) && pending > 0)
		return;
	if (write(STDOUT_FILENO, "\n", 1) < 0 && errno != EAGAIN)
		exit(0);	/* the runner is gone */
}

static int connect_retry(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timespec pause = { 0, 20 * 1000 * 1000 };
	int fd, tries;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		errno = ENAMETOOLONG;
		die(path);
	}
	strcpy(sa.sun_path, path);
	for (tries = 0;; tries++) {
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			die("socket");
		if (!connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
			return fd;
		if ((errno != ECONNREFUSED && errno != ENOENT) || tries == 100)
			die(path);
		close(fd);
		nanosleep(&pause, NULL);
	}
}

int main(int argc, char **argv)
{
	static char in[LINE_MAX_BYTES * 2], out[1 << 16];
	size_t have = 0, out_len = 0, out_off = 0;
	struct pollfd pf[2];
	int sock, fl;

	if (argc != 4) {
		fprintf(stderr, "usage: rigchan SOCKET SPOOL TAG\n");
		return 2;
	}
	spool = argv[2];
	tag = argv[3];
	if (getenv("RIGCHAN_SEGMENT"))
		seg_max = strtoul(getenv("RIGCHAN_SEGMENT"), NULL, 0);
	name_segments(0);
	signal(SIGTERM, on_term);
	seg_fd = open_segment(0);
	sock = connect_retry(argv[1]);
	fl = fcntl(sock, F_GETFL);
	if (fl < 0 || fcntl(sock, F_SETFL, fl | O_NONBLOCK))
		die("socket flags");
	fl = fcntl(STDOUT_FILENO, F_GETFL);
	if (fl < 0 || fcntl(STDOUT_FILENO, F_SETFL, fl | O_NONBLOCK))
		die("stdout flags");

	for (;;) {
		ssize_t n;
		char *nl;

		/* what the runner sent waits until the socket takes it */
		pf[0].fd = out_len ? -1 : STDIN_FILENO;
		pf[0].events = POLLIN;
		pf[1].fd = sock;
		pf[1].events = POLLIN | (out_len ? POLLOUT : 0);
		if (poll(pf, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			die("poll");
		}
		if (pf[0].revents) {
			n = read(STDIN_FILENO, out, sizeof(out));
			if (n < 0 && errno != EINTR && errno != EAGAIN)
				die("stdin");
			if (n == 0)
				on_term(0);	/* the runner closed the channel */
			if (n > 0) {
				out_len = n;
				out_off = 0;
			}
		}
		if (out_len && (pf[1].revents & (POLLOUT | POLLERR | POLLHUP))) {
			n = write(sock, out + out_off, out_len);
			if (n < 0 && errno != EAGAIN && errno != EINTR)
				break;	/* QEMU went away: the read below sees it */
			if (n > 0) {
				out_off += n;
				out_len -= n;
			}
		}
		if (!(pf[1].revents & (POLLIN | POLLERR | POLLHUP)))
			continue;
		n = read(sock, in + have, sizeof(in) - 1 - have);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0)
			break;
		have += n;
		nl = memrchr(in, '\n', have);
		if (!nl && have >= LINE_MAX_BYTES) {
			in[have++] = '\n';
			nl = in + have - 1;
		}
		if (!nl)
			continue;
		spool_lines(in, nl + 1 - in);
		have -= nl + 1 - in;
		memmove(in, nl + 1, have);
		wake();
	}
	if (have) {
		in[have++] = '\n';
		spool_lines(in, have);
	}
	wake();
	return 0;
}
