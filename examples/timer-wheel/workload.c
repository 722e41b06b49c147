/* SPDX-License-Identifier: MIT */
/*
 * workload.c - the timer wheel without bugs, for benchmarks: arm, cancel
 * and expire timers (a million by default, or argv[1]) spread over 4096
 * connections' worth of timers.
 */
#include <stdio.h>
#include <stdlib.h>

#include "timer.h"

static unsigned long fired;

static void expired(struct timer *t)
{
	(void)t;
	fired++;
}

int main(int argc, char **argv)
{
	unsigned long ops = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000;
	unsigned long i, seed = 1, cancelled = 0;
	const unsigned long n = 4096;
	struct timer *timers = calloc(n, sizeof(*timers));

	if (!timers)
		return 1;
	for (i = 0; i < n; i++)
		timer_init(&timers[i], expired);
	for (i = 0; i < ops; i++) {
		struct timer *t;

		seed = seed * 6364136223846793005UL + 1442695040888963407UL;
		t = &timers[(seed >> 33) % n];
		if (timer_pending(t)) {
			if ((seed >> 20) & 1)
				cancelled += timer_del(t);
		} else {
			timer_add(t, timer_now() + 1 + (seed >> 40) % 200);
		}
		if ((i & 15) == 0)
			timer_tick();
	}
	while (timers_armed())
		timer_tick();
	printf("%lu operations: %lu fired, %lu cancelled\n", ops, fired, cancelled);
	free(timers);
	return 0;
}
