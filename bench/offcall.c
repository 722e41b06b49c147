/* SPDX-License-Identifier: MIT */
/*
 * offcall.c - what an annotation call costs the caller when libodebug is
 * linked and ODEBUG is unset.
 *
 * bench-offcall [CALLS]
 *	CALLS / 2 iterations of an activate + deactivate pair on one of 16
 *	objects.  The loop is call_loop(), so that
 *	    valgrind --tool=callgrind --toggle-collect=call_loop bench-offcall
 *	counts exactly the loop with its call sites, and whatever it calls.
 *	Built twice from this source: bench-offcall (linked with libodebug)
 *	and bench-offcall-disabled (-DODEBUG_DISABLE: the calls compile away,
 *	leaving the loop's own work).  Prints the wall time per call as well.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "odebug.h"

static const struct debug_obj_descr descr = { .name = "offcall" };

struct obj {
	long payload[8];
};

static struct obj objs[16];

__attribute__((noinline)) void call_loop(struct obj *o, unsigned long iters);
__attribute__((noinline)) void call_loop(struct obj *o, unsigned long iters)
{
	unsigned long i;

	for (i = 0; i < iters; i++) {
		struct obj *x = &o[i & 15];

		debug_object_activate(x, &descr);
		debug_object_deactivate(x, &descr);
		/* Keep the loop a loop in the ODEBUG_DISABLE build too. */
		__asm__ volatile("" : : "r"(x) : "memory");
	}
}

int main(int argc, char **argv)
{
	unsigned long calls = argc > 1 ? strtoul(argv[1], NULL, 10) : 10000000;
	struct timespec t0, t1;
	double ns;
	int i;

	for (i = 0; i < 16; i++)
		debug_object_init(&objs[i], &descr);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	call_loop(objs, calls / 2);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ns = (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
	for (i = 0; i < 16; i++)
		debug_object_free(&objs[i], &descr);
	printf("calls=%lu ns_per_call=%.3f enabled=%d\n", calls, ns / (double)calls,
	       (int)debug_objects_enabled());
	return 0;
}
