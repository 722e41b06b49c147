/* SPDX-License-Identifier: MIT */
/*
 * bench-stats.h - what the benchmark programs share: a clock read in
 * nanoseconds and the median of a run's samples.
 */
#ifndef ODEBUG_BENCH_STATS_H
#define ODEBUG_BENCH_STATS_H

#include <stdlib.h>
#include <time.h>

/* @clock now, in nanoseconds (CLOCK_THREAD_CPUTIME_ID: time preempted not counted). */
static inline double bench_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* qsort()'s order of doubles. */
static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The median of the @n samples in @v, which it sorts in place. */
static inline double bench_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), bench_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif /* ODEBUG_BENCH_STATS_H */
