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
 * without __WALL never reaps it; we reap it with __WALL.  It leads a process
 * group of its own, so that stopping it kills what it started too.
 * Everything here is a system call: no malloc, no stdio, no loader call;
 * every call that can block is a raw syscall(), never a cancellation point
 * (report.c also disables cancellation for the report).
 *
 * In a seccomp sandbox no helper is started: the usual policy kills the
 * process at a clone() without CLONE_THREAD (odebug_helper_sandboxed()).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
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

#include "dynsym.h"
#include "report.h"

/* The raw calls used where the libc wrapper is a cancellation point. */
static void sys_close(int fd)
{
	syscall(SYS_close, fd);
}

/* Reap our child @pid (exit signal 0: only __WALL or __WCLONE see it). */
static bool reap(int pid, int flags)
{
	long r;

	do
		r = syscall(SYS_wait4, pid, NULL, flags | __WALL, NULL);
	while (r < 0 && errno == EINTR);
	return r == pid;
}

/*
 * Is this thread under seccomp (a filter, or strict mode)?  The usual
 * sandbox policy kills the whole process with SIGSYS at a clone() that
 * makes a process, which is how the helper is started; no policy can be
 * read back, so any filter means no helper.  Asked close to each start,
 * since the program may install a filter at any time; once seen, the
 * answer is kept (a filter is never removed, and a forked child inherits
 * it).  /proc/thread-self/status, with raw calls (prctl(PR_GET_SECCOMP)
 * may itself be filtered): a thread's filter, not the main thread's.  A
 * status that cannot be read counts as a sandbox.  Under the report lock
 * (the buffer is static).
 */
bool odebug_helper_sandboxed(void)
{
	static bool sandboxed;
	static char buf[1024];
	size_t keep = 1, total = 0;
	int fd, value = -1;

	if (sandboxed)
		return true;
	fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/thread-self/status",
			  O_RDONLY | O_CLOEXEC);
	buf[0] = '\n';
	/* Read in pieces, each searched with the tail of the one before. */
	while (fd >= 0 && value < 0) {
		long n = syscall(SYS_read, fd, buf + keep, sizeof(buf) - 1 - keep);
		const char *p;
		size_t len;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		total += (size_t)n;
		len = keep + (size_t)n;
		buf[len] = '\0';
		p = strstr(buf, "\nSeccomp:");
		if (p) {
			for (p += 9; *p == ' ' || *p == '\t'; p++)
				;
			if (*p >= '0' && *p <= '9')
				value = *p - '0';
		}
		keep = len < 32 ? len : 32;
		memmove(buf, buf + len - keep, keep);
	}
	if (fd >= 0)
		sys_close(fd);
	/* Unreadable: cannot tell.  Read whole without the line: no seccomp. */
	sandboxed = !total || value > 0;
	return sandboxed;
}

/* The child's stack: it runs only until execve, in a few hundred bytes. */
static ODEBUG_LARGE char child_stack[16384] __attribute__((aligned(16)));

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
	syscall(SYS_setpgid, 0, 0);		/* its own group: stop kills all */
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &none, NULL, sizeof(none));
	syscall(SYS_execve, a->path, a->argv, scrubbed_env);
	syscall(SYS_exit, 127);
	return 127;
}

/*
 * glibc's own clone(), found by the constructor: a sanitizer runtime linked
 * into the program intercepts clone() (clang's ThreadSanitizer takes every
 * clone for a fork, and its checks fail on our CLONE_VM child).  Without
 * it, the clone() the program sees.
 */
static int (*libc_clone)(int (*fn)(void *), void *stack, int flags, void *arg, ...);

void odebug_helper_init(void)
{
	/* libc's own clone(), from its hash table: no dlopen(), ours rescans. */
	*(void **)&libc_clone = odebug_object_definition("libc.so.6", "clone");
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
	int sv[2], high;
	pid_t pid;

	h->pid = 0;
	h->fd = -1;
	h->timed_out = false;
	if (odebug_helper_sandboxed() || access(path, X_OK))
		return false;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return false;
	a.fd = sv[1];
	/* No handler of the host may run on the child's stack. */
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &old, sizeof(all));
	pid = (libc_clone ? libc_clone : clone)(child_main, child_stack + sizeof(child_stack),
						CLONE_VM | CLONE_VFORK, &a);
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, sizeof(old));
	sys_close(sv[1]);
	if (pid <= 0) {
		sys_close(sv[0]);
		return false;
	}
	if (reap(pid, WNOHANG)) {
		sys_close(sv[0]);	/* exec failed: the child is already gone */
		return false;
	}
	/* A high descriptor: a daemon closing its low ones leaves ours alone. */
	high = fcntl(sv[0], F_DUPFD_CLOEXEC, 512);
	if (high >= 0) {
		sys_close(sv[0]);
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
		sys_close(h->fd);
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

/*
 * Kill and reap it (SIGKILL: it may be stuck), and whatever it started in
 * its process group (a script's children): no zombie, nothing left running.
 * Its pid is its group's id while it is unreaped, so the group is ours.
 */
void odebug_helper_stop(struct odebug_helper *h)
{
	if (h->fd >= 0)
		sys_close(h->fd);
	if (h->pid > 0 && h->owner == getpid()) {
		syscall(SYS_kill, -h->pid, SIGKILL);
		syscall(SYS_kill, h->pid, SIGKILL);
		reap(h->pid, 0);
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
 * timeout (h->timed_out is set), an error, EOF before @done, or an answer
 * larger than @cap.  Raw ppoll, sendto and recvfrom: no cancellation point.
 */
bool odebug_helper_talk(struct odebug_helper *h, const char *req, size_t req_len,
			char *out, size_t cap, size_t *len,
			bool (*done)(const char *text, size_t len, void *ctx), void *ctx,
			int timeout_ms, bool shut)
{
	long deadline = now_ms() + timeout_ms;

	*len = 0;
	h->timed_out = false;
	for (;;) {
		struct pollfd p = { .fd = h->fd, .events = POLLIN };
		long left = deadline - now_ms();
		struct timespec ts = { left / 1000, left % 1000 * 1000000 };
		ssize_t n;

		if (req_len)
			p.events |= POLLOUT;
		if (left <= 0) {
			h->timed_out = true;
			return false;
		}
		n = syscall(SYS_ppoll, &p, 1, &ts, NULL, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0)
			h->timed_out = true;
		if (n <= 0)
			return false;
		if (req_len && (p.revents & POLLOUT)) {
			n = syscall(SYS_sendto, h->fd, req, req_len, MSG_NOSIGNAL | MSG_DONTWAIT,
				    NULL, 0);
			if (n < 0 && errno != EAGAIN && errno != EINTR)
				return false;
			if (n > 0) {
				req += n;
				req_len -= (size_t)n;
				if (!req_len && shut)
					syscall(SYS_shutdown, h->fd, SHUT_WR);
			}
		}
		if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
			if (*len == cap)
				return false;
			n = syscall(SYS_recvfrom, h->fd, out + *len, cap - *len, MSG_DONTWAIT,
				    NULL, NULL);
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
