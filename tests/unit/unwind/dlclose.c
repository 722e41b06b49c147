/* SPDX-License-Identifier: MIT */
/*
 * dlclose.c - a report's frames through a module that replaced an
 * unloaded one at the same address (test-unwind's two builds of
 * unwind/mod.c): the rules lib/report/unwind.c kept for the first must be
 * forgotten at its dlclose(), or the second's frame is unwound with the
 * first's size and the report loses its caller.  Linked with libodebug,
 * run with ODEBUG=1.
 *
 *   unwind-dlclose DIR   (DIR holds libunwind-mod-small.so and -big.so)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "odebug.h"

static const struct debug_obj_descr descr = { .name = "unwind-dlclose" };
static long objs[8];
static int next_obj;

/* A misuse: "activate not available", reported with its stack. */
static void misuse(void *arg)
{
	(void)arg;
	debug_object_activate(&objs[next_obj++], &descr);
}

static __attribute__((noinline)) void *through_module(int (*call)(void (*)(void *), void *))
{
	volatile int r = call(misuse, NULL);

	(void)r;
	return __builtin_return_address(0);
}

/* Run one call with stderr in a pipe: what it printed, and the outer return address. */
static const char *reported(int (*call)(void (*)(void *), void *), void **outer)
{
	static char out[16384];
	int fds[2], saved = dup(2);
	ssize_t n, got = 0;

	if (pipe(fds))
		abort();
	dup2(fds[1], 2);
	*outer = through_module(call);
	dup2(saved, 2);
	close(saved);
	close(fds[1]);
	while ((n = read(fds[0], out + got, sizeof(out) - 1 - (size_t)got)) > 0)
		got += n;
	close(fds[0]);
	out[got] = '\0';
	return out;
}

int main(int argc, char **argv)
{
	int failed = 0;

	if (argc != 2)
		return 2;
	for (int m = 0; m < 2; m++) {
		int (*call)(void (*)(void *), void *);
		char path[512], want[32];
		const char *out;
		void *h, *outer;

		snprintf(path, sizeof(path), "%s/libunwind-mod-%s.so", argv[1], m ? "big" : "small");
		h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		if (!h || !(*(void **)&call = dlsym(h, "unwind_mod_call"))) {
			fprintf(stderr, "unwind-dlclose: cannot load %s\n", path);
			return 2;
		}
		reported(call, &outer);		/* the rules kept */
		out = reported(call, &outer);	/* reported by them */
		snprintf(want, sizeof(want), " %p ", outer);
		if (!strstr(out, "ODEBUG: activate not available") || !strstr(out, want)) {
			fprintf(stderr, "unwind-dlclose: the report through %s lost its caller"
				" (%s):\n%s", path, want, out);
			failed = 1;
		}
		dlclose(h);
	}
	return failed;
}
