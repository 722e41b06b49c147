/* SPDX-License-Identifier: MIT */
/*
 * epoll-close.c - what closing a short-lived epoll set costs while many
 * registrations are held elsewhere: a server with 19,000 long-lived
 * registrations (19 sets of 1,000 eventfds, each with a heap data.ptr)
 * that makes, uses and closes 20,000 sets of one registration each.  A
 * set's close ends its own registrations' holds (lib/checks/held/held.c); it should
 * cost what those are, not what every set holds.
 *
 * The program runs itself again under each library given, ROUNDS times
 * in rotated order, and prints the median ns per short-lived set
 * (epoll_create1, one EPOLL_CTL_ADD, close), with ODEBUG unset as the
 * reference, and with a second library (the tree before a change) the
 * ratio of the two:
 *
 *   bench-epoll-close LIBODEBUG [BEFORE]	ROUNDS (5) runs under each
 *   bench-epoll-close --child		one run: ns per short-lived set
 *
 * Times are the thread's CPU time, so time preempted is not counted.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench-stats.h"

#define LONG_SETS	19
#define LONG_FDS	1000
#define SHORT_SETS	20000
#define ROUNDS		5

static void add(int set, int fd, void *ptr)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = ptr };

	if (epoll_ctl(set, EPOLL_CTL_ADD, fd, &ev))
		exit(2);
}

/* One run: the long-lived registrations, then the short-lived sets timed. */
static int child(void)
{
	static int fds[LONG_FDS];
	void *conn = malloc(64);
	double t0;
	int i, j, fd = eventfd(0, 0);

	for (j = 0; j < LONG_FDS; j++)
		if ((fds[j] = eventfd(0, 0)) < 0)
			return 2;
	for (i = 0; i < LONG_SETS; i++) {
		int set = epoll_create1(0);

		for (j = 0; j < LONG_FDS; j++)
			add(set, fds[j], malloc(64));
	}
	t0 = bench_ns(CLOCK_THREAD_CPUTIME_ID);
	for (i = 0; i < SHORT_SETS; i++) {
		int set = epoll_create1(0);

		add(set, fd, conn);
		close(set);
	}
	printf("%.1f\n", (bench_ns(CLOCK_THREAD_CPUTIME_ID) - t0) / SHORT_SETS);
	return 0;
}

/* ns per short-lived set of one run under @lib (NULL: none), ODEBUG=@on. */
static double run(const char *self, const char *lib, int on)
{
	int out[2], status;
	char buf[64] = "";
	ssize_t n;
	pid_t pid;

	if (pipe(out))
		exit(2);
	pid = fork();
	if (pid == 0) {
		dup2(out[1], 1);
		if (lib)
			setenv("LD_PRELOAD", lib, 1);
		if (on)
			setenv("ODEBUG", "1", 1);
		else
			unsetenv("ODEBUG");
		execl(self, self, "--child", (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	n = read(out[0], buf, sizeof(buf) - 1);
	close(out[0]);
	waitpid(pid, &status, 0);
	if (n <= 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "bench-epoll-close: a run under %s failed\n", lib ? lib : "nothing");
		exit(1);
	}
	buf[n] = '\0';
	return atof(buf);
}

int main(int argc, char **argv)
{
	static double t[3][ROUNDS];
	const char *lib[3], *label[3] = { "unset", "ODEBUG=1", "ODEBUG=1, before" };
	int rounds = ROUNDS, nconf, r, c;

	if (argc > 1 && !strcmp(argv[1], "--child"))
		return child();
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: %s LIBODEBUG [BEFORE]\n", argv[0]);
		return 2;
	}
	lib[0] = lib[1] = argv[1];
	lib[2] = argc > 2 ? argv[2] : NULL;
	nconf = lib[2] ? 3 : 2;
	for (r = 0; r < rounds; r++)
		for (c = 0; c < nconf; c++) {
			int k = (r + c) % nconf;	/* rotated: drift hits each alike */

			t[k][r] = run("/proc/self/exe", lib[k], k > 0);
		}
	printf("%d registrations held, %d short-lived sets (create, 1 ADD, close), "
	       "median of %d runs:\n", LONG_SETS * LONG_FDS, SHORT_SETS, rounds);
	for (c = 0; c < nconf; c++)
		printf("  %-17s %10.1f ns per set\n", label[c], bench_median(t[c], rounds));
	if (nconf == 3)
		printf("  before / now: %.2f\n", bench_median(t[2], rounds) / bench_median(t[1], rounds));
	return 0;
}
