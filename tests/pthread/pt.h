/* SPDX-License-Identifier: MIT */
/*
 * pt.h - shared by the built-in type suites: run a piece of code, then
 * assert the reports it made (by text, and by the warnings counter) or
 * that it made none.
 */
#ifndef ODEBUG_TEST_PT_H
#define ODEBUG_TEST_PT_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "helpers.h"

/* @code makes exactly @n reports, each line @text appears in the output. */
#define EXPECT_REPORTS(n, code, ...) EXPECT_OUTPUT((n), -1, NULL, code, __VA_ARGS__)

#define EXPECT_REPORT(code, ...) EXPECT_REPORTS(1, code, __VA_ARGS__)

/* @code is silent: no report counted, nothing printed. */
#define EXPECT_SILENT(...) do {						\
	struct stats_delta d_;							\
	char *out_;								\
										\
	stats_mark();								\
	capture_start();							\
	__VA_ARGS__;								\
	out_ = capture_stop();							\
	d_ = stats_delta();							\
	if (d_.warnings || strstr(out_, "ODEBUG"))				\
		fail_msg("%ld warnings:\n%s", d_.warnings, out_);		\
	free(out_);								\
} while (0)

static inline int tid(void)
{
	return (int)syscall(SYS_gettid);
}

/* Until @addr's tracker is in @state (a thread reached its wait). */
static inline void wait_state(const void *addr, enum debug_obj_state state)
{
	for (int i = 0; i < 10000 && debug_object_get_state(addr) != state; i++)
		usleep(1000);
	assert_int_equal(debug_object_get_state(addr), state);
	usleep(20000);	/* and from our bookkeeping into glibc's wait */
}

static inline struct timespec in_ms(long ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += ms % 1000 * 1000000;
	ts.tv_sec += ms / 1000 + ts.tv_nsec / 1000000000;
	ts.tv_nsec %= 1000000000;
	return ts;
}

#endif
