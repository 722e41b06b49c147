/* SPDX-License-Identifier: MIT */
/*
 * harness.h - what the looped torture scenarios share: a clock, a watchdog
 * that turns a hang into a failure, a bounded wait for a child, and an
 * interval timer.  Include after torture.h (the watchdog prints its counts).
 */
#ifndef ODEBUG_TORTURE_HARNESS_H
#define ODEBUG_TORTURE_HARNESS_H

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static inline double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A run that hangs is a failure, not a stuck CI job. */
static inline void *watchdog(void *arg)
{
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	sleep((unsigned int)(uintptr_t)arg);
	printf("FAIL: hung for %u s (deadlock)\n", (unsigned int)(uintptr_t)arg);
	printf("%d passed, %d failed\n", passed, failed + 1);
	fflush(stdout);
	_exit(1);
	return NULL;
}

static inline void start_watchdog(unsigned int seconds)
{
	pthread_t t;
	sigset_t all, old;

	/* Created with every signal blocked: the timer's go to the others. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pthread_create(&t, NULL, watchdog, (void *)(uintptr_t)seconds);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_detach(t);
}

/* waitpid, but a child still running after @seconds is killed (status 9). */
static inline void wait_bounded(pid_t pid, int *status, int seconds)
{
	double end = now() + seconds;

	while (waitpid(pid, status, WNOHANG) == 0) {
		if (now() > end) {
			kill(pid, SIGKILL);
			waitpid(pid, status, 0);
			printf("child %d hung for %d s: killed\n", (int)pid, seconds);
			return;
		}
		usleep(10000);
	}
}

static inline void every(long usec)
{
	struct itimerval it = { { 0, usec }, { 0, usec } };

	setitimer(ITIMER_REAL, &it, NULL);
}

#endif /* ODEBUG_TORTURE_HARNESS_H */
