/* SPDX-License-Identifier: MIT */
/*
 * cost-book.c - the bookkeeping lib/checks/held/held.c adds to a call, without the
 * system call (whose time here varies more than the bookkeeping takes):
 * ns per odebug_held_epoll_ctl (ADD then DEL of a data.ptr) and per
 * odebug_held_timer_set (arm then disarm), the core linked directly, with
 * ODEBUG=1: the best of 9 passes of the thread's CPU time (time the
 * thread was preempted is not counted: the machine is shared).  The
 * interposer's own test and call add about 45 instructions
 * (cost-instr.sh).  "held-cost-book N": N calls of each per pass, for
 * instruction counts.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <time.h>

#include "held.h"

static long N = 1000000;	/* or argv[1]: a count for callgrind */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	void *p = malloc(64), *q = malloc(64);
	double best_e = 1e9, best_t = 1e9, t0;

	if (argc > 1)
		N = atol(argv[1]);
	if (!debug_objects_enabled() || !odebug_load(&odebug_held_on)) {
		fprintf(stderr, "ODEBUG=1 needed\n");
		return 77;
	}
	odebug_held_timer_create(0x1234, 1, (uintptr_t)q, 0);
	for (int k = 0; k < 9; k++) {
		double t;

		t0 = now();
		for (int i = 0; i < N; i++) {
			odebug_held_epoll_ctl(3, EPOLL_CTL_ADD, 4, EPOLLIN, (uintptr_t)p);
			odebug_held_epoll_ctl(3, EPOLL_CTL_DEL, 4, 0, 0);
		}
		t = (now() - t0) / N / 2;
		if (t < best_e)
			best_e = t;
		t0 = now();
		for (int i = 0; i < N; i++) {
			odebug_held_timer_set(0x1234, 1, true);
			odebug_held_timer_set(0x1234, 1, false);
		}
		t = (now() - t0) / N / 2;
		if (t < best_t)
			best_t = t;
	}
	printf("epoll_ctl bookkeeping (ADD or DEL of a data.ptr): %.1f ns\n", best_e);
	printf("timer_settime bookkeeping (arm or disarm):        %.1f ns\n", best_t);
	return 0;
}
