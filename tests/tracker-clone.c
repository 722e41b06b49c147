/* SPDX-License-Identifier: MIT */
/*
 * The tracker's compare-and-swap (lib/tracker.h) from threads glibc does
 * not know about: two made with a raw clone(CLONE_THREAD), which leaves
 * __libc_single_threaded true, and the main thread, all incrementing one
 * tracker word by compare-and-swap.  Every successful swap must count: a
 * swap that is not atomic across cores loses increments.  The clone
 * threads touch no TLS and call nothing but the swap (they share the main
 * thread's thread pointer).  Exit status 0 when no increment was lost.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/single_threaded.h>
#include <unistd.h>

#include "internal.h"

#define ROUNDS	2000000ul
#define STACK	(64 * 1024)
#define TRIALS	32

static struct odebug_tracker tracker;
static int finished;

static void bump(void)
{
	for (unsigned long i = 0; i < ROUNDS; i++) {
		uint64_t old;

		do
			old = __atomic_load_n(&tracker.word, __ATOMIC_RELAXED);
		while (!odebug_tracker_cas(&tracker, old, old + 1));
	}
}

static int raw_thread(void *arg)
{
	(void)arg;
	bump();
	__atomic_add_fetch(&finished, 1, __ATOMIC_RELEASE);
	return 0;
}

/* One trial: 0 when every increment counted.  (Their stacks are left mapped.) */
static int trial(void)
{
	int flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
		    CLONE_SYSVSEM;
	uint64_t got;

	tracker.word = 0;
	finished = 0;
	for (int i = 0; i < 2; i++) {
		char *stack = mmap(NULL, STACK, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (stack == MAP_FAILED || clone(raw_thread, stack + STACK, flags, NULL) < 0) {
			perror("clone");
			return 2;
		}
	}
	bump();
	while (__atomic_load_n(&finished, __ATOMIC_ACQUIRE) < 2)
		sched_yield();
	usleep(10000);	/* until they are out of their stacks' last frames */
	got = __atomic_load_n(&tracker.word, __ATOMIC_RELAXED);
	printf("%s - %lu increments by compare-and-swap from 3 threads (single-threaded flag %d), %lu counted\n",
	       got == 3 * ROUNDS ? "ok" : "FAIL", 3 * ROUNDS, (int)__libc_single_threaded,
	       (unsigned long)got);
	return got == 3 * ROUNDS ? 0 : 1;
}

/* Several trials: on a loaded machine the threads may not overlap in one. */
int main(void)
{
	for (int i = 0; i < TRIALS; i++)
		if (trial())
			return 1;
	return 0;
}
