/* SPDX-License-Identifier: MIT */
/*
 * helper.c - running a helper program (the symboliser) from the report
 * path, where fork(), posix_spawn() and popen() are not safe: they run
 * atfork handlers, allocate or take locks that a signal handler may have
 * interrupted.
 *
 * The child is made with clone(CLONE_VM | CLONE_VFORK) on a stack of ours
 * (static: reports are serialised), resets every signal disposition, puts
 * one end of a socketpair on its stdin and stdout, /dev/null on stderr,
 * closes every other descriptor and execve()s the helper with a scrubbed
 * environment: no LD_PRELOAD (it must not load us), no ODEBUG*, no
 * DEBUGINFOD_URLS (a report never touches the network).  Its exit signal
 * is 0, not SIGCHLD: the host's SIGCHLD handler never sees it and wait()
 * without __WALL never reaps it; we reap it with __WCLONE.  Everything here
 * is a system call: no malloc, no stdio, no loader call.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

/* The child's stack: it runs only until execve, in a few hundred bytes. */
static char child_stack[16384] __attribute__((aligned(16)));

struct child_args {
	const char *path;
	char *const *argv;
	int fd;
};

static char *const scrubbed_env[] = {
	"PATH=/usr/local/bin:/usr/bin:/bin",
	"LC_ALL=C",
	NULL,
};

/* The kernel's struct sigaction (x86-64, aarch64, riscv64 layouts agree). */
struct kernel_sigaction {
	void *handler;
	unsigned long flags;
	void *restorer;
	unsigned long mask;
};

static int child_main(void *arg)
{
	const struct child_args *a = arg;
	struct kernel_sigaction dfl = { .handler = SIG_DFL };
	unsigned long none = 0;
	int sig, fd, null;

	for (sig = 1; sig <= 64; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			syscall(SYS_rt_sigaction, sig, &dfl, NULL, sizeof(unsigned long));
	/* Our end may be 0 or 1: move it out of the way first. */
	fd = (int)syscall(SYS_fcntl, a->fd, F_DUPFD, 10);
	null = (int)syscall(SYS_openat, AT_FDCWD, "/dev/null", O_WRONLY);
	if (fd < 0 || null < 0 || syscall(SYS_dup2, fd, 0) < 0 ||
	    syscall(SYS_dup2, fd, 1) < 0 || syscall(SYS_dup2, null, 2) < 0)
		syscall(SYS_exit, 127);
	syscall(SYS_close_range, 3, ~0U, 0);	/* best effort (Linux 5.9) */
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &none, NULL, sizeof(none));
	syscall(SYS_execve, a->path, a->argv, scrubbed_env);
	syscall(SYS_exit, 127);
	return 127;
}

/**
 * odebug_helper_start - run @path with @argv, talking over a socket
 * @h:	filled in: the child's pid and our end of the socket
 *
 * Returns false (and starts nothing) when the program cannot be run.
 */
bool odebug_helper_start(struct odebug_helper *h, const char *path, char *const *argv)
{
	struct child_args a = { .path = path, .argv = argv };
	unsigned long all = ~0UL, old;
	struct stat st;
	int sv[2], high, status;
	pid_t pid;

	h->pid = 0;
	h->fd = -1;
	if (access(path, X_OK))
		return false;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return false;
	a.fd = sv[1];
	/* No handler of the host may run on the child's stack. */
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &old, sizeof(all));
	pid = clone(child_main, child_stack + sizeof(child_stack),
		    CLONE_VM | CLONE_VFORK, &a);
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, sizeof(old));
	close(sv[1]);
	if (pid <= 0) {
		close(sv[0]);
		return false;
	}
	if (waitpid(pid, &status, WNOHANG | __WCLONE) == pid) {
		close(sv[0]);	/* exec failed: the child is already gone */
		return false;
	}
	/* A high descriptor: a daemon closing its low ones leaves ours alone. */
	high = fcntl(sv[0], F_DUPFD_CLOEXEC, 512);
	if (high >= 0) {
		close(sv[0]);
		sv[0] = high;
	}
	h->pid = pid;
	h->fd = sv[0];
	h->owner = getpid();
	if (fstat(h->fd, &st) == 0) {
		h->dev = st.st_dev;
		h->ino = st.st_ino;
	}
	return true;
}

/* Is the helper still ours and our socket still the one we made? */
bool odebug_helper_alive(struct odebug_helper *h)
{
	struct stat st;

	if (h->fd < 0)
		return false;
	if (h->owner != getpid()) {	/* a forked child: the parent's helper */
		close(h->fd);
		h->fd = -1;
		h->pid = 0;
		return false;
	}
	if (fstat(h->fd, &st) || st.st_dev != h->dev || st.st_ino != h->ino) {
		h->fd = -1;		/* closed or reused by the host */
		odebug_helper_stop(h);
		return false;
	}
	return true;
}

/* Kill and reap it (SIGKILL: it may be stuck). */
void odebug_helper_stop(struct odebug_helper *h)
{
	if (h->fd >= 0)
		close(h->fd);
	if (h->pid > 0 && h->owner == getpid()) {
		kill(h->pid, SIGKILL);
		while (waitpid(h->pid, NULL, __WCLONE) < 0 && errno == EINTR)
			;
	}
	h->fd = -1;
	h->pid = 0;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

/**
 * odebug_helper_talk - send @req, then read until @done says the answer is whole
 * @out, @cap:	where the answer goes; *@len: its length
 * @done:	called after each read with the text so far
 * @timeout_ms:	for the whole exchange
 * @shut:	close our sending side once @req is sent (the helper then
 *		answers and exits: its EOF ends the answer)
 *
 * Writes and reads interleave (poll), so a long request never deadlocks
 * against a helper whose answers fill the socket.  Returns false on a
 * timeout, an error, EOF before @done, or an answer larger than @cap.
 */
bool odebug_helper_talk(struct odebug_helper *h, const char *req, size_t req_len,
			char *out, size_t cap, size_t *len,
			bool (*done)(const char *text, size_t len, void *ctx), void *ctx,
			int timeout_ms, bool shut)
{
	long deadline = now_ms() + timeout_ms;

	*len = 0;
	for (;;) {
		struct pollfd p = { .fd = h->fd, .events = POLLIN };
		long left = deadline - now_ms();
		ssize_t n;

		if (req_len)
			p.events |= POLLOUT;
		if (left <= 0)
			return false;
		n = poll(&p, 1, (int)left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		if (req_len && (p.revents & POLLOUT)) {
			n = send(h->fd, req, req_len, MSG_NOSIGNAL | MSG_DONTWAIT);
			if (n < 0 && errno != EAGAIN && errno != EINTR)
				return false;
			if (n > 0) {
				req += n;
				req_len -= (size_t)n;
				if (!req_len && shut)
					shutdown(h->fd, SHUT_WR);
			}
		}
		if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
			if (*len == cap)
				return false;
			n = recv(h->fd, out + *len, cap - *len, MSG_DONTWAIT);
			if (n < 0 && (errno == EAGAIN || errno == EINTR))
				continue;
			if (n <= 0)
				return !req_len && done(out, *len, ctx);
			*len += (size_t)n;
			if (!req_len && done(out, *len, ctx))
				return true;
		}
	}
}
