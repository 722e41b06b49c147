/* SPDX-License-Identifier: MIT */
/*
 * evmodule.c - what the libevent module adds to a connection's change of
 * state in the libevent 1.4 API, as memcached makes it: event_del(),
 * event_set(), event_base_set(), event_add() of one event (event_set() is
 * the one wrapped call), timed plain (ODEBUG unset) and with the module
 * (ODEBUG=1) in one run: the program runs itself again in each
 * configuration (evmodule LIBODEBUG MODULE_PATH) and prints ns per change
 * and per wrapped call, the median of 5 alternated runs each.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <event2/event.h>
#include <event2/event_compat.h>
#include <event2/event_struct.h>

#include "bench-stats.h"

#define PAIRS	1000000

static void on_event(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
}

/* One change of state: the event set again, on its base, added. */
static void change(struct event_base *base, struct event *ev, const struct timeval *tv)
{
	event_del(ev);
	event_set(ev, -1, EV_PERSIST, on_event, NULL);
	event_base_set(base, ev);
	event_add(ev, tv);
}

/* The child: ns per change. */
static double pairs(void)
{
	struct event_base *base = event_base_new();
	struct timeval tv = { 60, 0 };
	struct timespec a, b;
	struct event ev;
	long i;

	event_assign(&ev, base, -1, EV_PERSIST, on_event, NULL);
	for (i = 0; i < PAIRS / 10; i++)	/* warm */
		change(base, &ev, &tv);
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < PAIRS; i++)
		change(base, &ev, &tv);
	event_del(&ev);
	clock_gettime(CLOCK_MONOTONIC, &b);
	event_base_free(base);
	return ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / PAIRS;
}

static double run(char *self, const char *lib, const char *opts, bool on)
{
	char buf[64] = "";
	int fd[2];
	pid_t pid;

	if (pipe(fd))
		exit(1);
	pid = fork();
	if (pid == 0) {
		dup2(fd[1], 1);
		setenv("LD_PRELOAD", lib, 1);
		if (on) {
			setenv("ODEBUG", "1", 1);
			setenv("ODEBUG_OPTIONS", opts, 1);
		} else {
			unsetenv("ODEBUG");
		}
		execl(self, self, "--child", (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	if (read(fd[0], buf, sizeof(buf) - 1) < 0)
		buf[0] = '\0';
	close(fd[0]);
	waitpid(pid, NULL, 0);
	return atof(buf);
}

int main(int argc, char **argv)
{
	double off[5], on[5], none[5];
	char opts[600], optsnone[600];
	int i;

	if (argc == 2 && !strcmp(argv[1], "--child")) {
		printf("%f\n", pairs());
		return 0;
	}
	if (argc != 3) {
		fprintf(stderr, "usage: evmodule LIBODEBUG MODULE_PATH\n");
		return 2;
	}
	snprintf(opts, sizeof(opts), "module_path=%s:check_pthread=0", argv[2]);
	snprintf(optsnone, sizeof(optsnone), "module_path=%s:check_pthread=0:modules=none",
		 argv[2]);
	for (i = 0; i < 5; i++) {
		off[i] = run(argv[0], argv[1], "", false);
		on[i] = run(argv[0], argv[1], opts, true);
		none[i] = run(argv[0], argv[1], optsnone, true);
	}
	qsort(off, 5, sizeof(double), bench_cmp_double);
	qsort(on, 5, sizeof(double), bench_cmp_double);
	qsort(none, 5, sizeof(double), bench_cmp_double);
	printf("event_del+event_set+event_base_set+event_add: %.1f ns ODEBUG unset, "
	       "%.1f ns ODEBUG=1 modules=none, %.1f ns ODEBUG=1 with the module\n",
	       off[2], none[2], on[2]);
	printf("the module adds %.1f ns per event_set (goal: at most 50)\n",
	       on[2] - none[2]);
	return 0;
}
