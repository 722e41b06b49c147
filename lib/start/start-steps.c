/* SPDX-License-Identifier: MIT */
/*
 * start-steps.c - where the start's time goes, in the bench build of the
 * library only (bench/start-steps/): each odebug_start_step() records the
 * monotonic clock; our last constructor writes the stamps, in
 * nanoseconds, to the descriptor ODEBUG_START_STEPS_FD names, and our last
 * destructor the program's end, if it runs.  bench-start --steps
 * subtracts the time it spawned the process.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "start.h"

#define MAX_STEPS 48

static struct { const char *name; long long ns; } steps[MAX_STEPS];
static int nsteps;

void odebug_start_step(const char *name)
{
	struct timespec ts;

	if (nsteps == MAX_STEPS)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	steps[nsteps].name = name;
	steps[nsteps++].ns = (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static char *put_ll(char *p, long long v)
{
	char tmp[24];
	int n = 0;

	do
		tmp[n++] = (char)('0' + v % 10);
	while ((v /= 10));
	while (n)
		*p++ = tmp[--n];
	return p;
}

/* The steps not written yet, "name ns\n" each. */
void odebug_start_steps_flush(void)
{
	static int written;
	const char *fd = getenv("ODEBUG_START_STEPS_FD");
	char buf[64 * MAX_STEPS], *p = buf;
	int i;

	if (!fd)
		return;
	for (i = written; i < nsteps; i++) {
		size_t n = strnlen(steps[i].name, 40);

		memcpy(p, steps[i].name, n);
		p += n;
		*p++ = ' ';
		p = put_ll(p, steps[i].ns);
		*p++ = '\n';
	}
	written = nsteps;
	if (write(atoi(fd), buf, (size_t)(p - buf)) < 0)
		return;
}

/* A program that exits through exit() (not _exit(), as dash does) adds its end. */
__attribute__((destructor(101))) static void write_exit(void)
{
	odebug_start_step("the program, to our last destructor");
	odebug_start_steps_flush();
}
