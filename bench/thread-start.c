/* SPDX-License-Identifier: MIT */
/*
 * bench-thread-start N: what a thread's start costs.  One mutex is
 * initialised (with ODEBUG=1 that starts libodebug), then N empty threads
 * are created and joined one after another; prints the mean wall time.
 * For instruction counts run it under callgrind with N and 2N and divide
 * the difference by N (BENCHMARKS.md).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void *empty(void *arg)
{
	return arg;
}

int main(int argc, char **argv)
{
	int i, n = argc > 1 ? atoi(argv[1]) : 2000;
	pthread_mutex_t m;
	struct timespec a, b;

	pthread_mutex_init(&m, NULL);
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < n; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, empty, NULL))
			return 1;
		pthread_join(t, NULL);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("thread-start: %.2f us per create+join\n",
	       ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / n / 1e3);
	pthread_mutex_destroy(&m);
	return 0;
}
