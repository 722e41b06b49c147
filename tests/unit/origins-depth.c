/* SPDX-License-Identifier: MIT */
/*
 * origins=1 remembers a call chain per thread instead of unwinding it again
 * (lib/report/origin.c).  Run with ODEBUG=1 ODEBUG_OPTIONS=origins=1:stack_depth=12:
 *
 *   1. an object initialised 30 calls deep prints exactly stack_depth (12)
 *      frames where it was initialised, named;
 *   2. a second object from the same chain (a cache hit) prints the same
 *      frames;
 *   3. two chains that differ only in one caller, at the same stack depth
 *      (the same cache key), each print their own caller.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "odebug.h"

#define DEPTH	12	/* stack_depth in the test's environment */

static const struct debug_obj_descr descr = { .name = "origins_depth" };
static int failed;

static void check(int ok, const char *what, const char *out)
{
	if (!ok) {
		fprintf(stderr, "origins-depth: FAILED: %s\n%s", what, out ? out : "");
		failed = 1;
	}
}

/* Activate @obj twice with stderr in a pipe; returns the report. */
static char *report_of(long *obj)
{
	static char out[16384];
	int fds[2], saved = dup(2);
	ssize_t n, got = 0;

	if (pipe(fds))
		abort();
	dup2(fds[1], 2);
	debug_object_activate(obj, &descr);
	debug_object_activate(obj, &descr);
	dup2(saved, 2);
	close(saved);
	close(fds[1]);
	while ((n = read(fds[0], out + got, sizeof(out) - 1 - (size_t)got)) > 0)
		got += n;
	close(fds[0]);
	out[got] = '\0';
	return strdup(out);
}

/* The frames printed under "object initialised at:", and how many. */
static char *init_frames(const char *report, int *count)
{
	const char *p = strstr(report, "ODEBUG: object initialised at:\n");
	const char *end;

	*count = 0;
	if (!p)
		return strdup("");
	p = strchr(p, '\n') + 1;
	for (end = p; !strncmp(end, "    #", 5); end = strchr(end, '\n') + 1)
		(*count)++;
	return strndup(p, (size_t)(end - p));
}

__attribute__((noinline)) void origins_depth_site(long *obj);
__attribute__((noinline)) void origins_depth_site(long *obj)
{
	debug_object_init(obj, &descr);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void origins_depth_recurse(int n, long *obj);
__attribute__((noinline)) void origins_depth_recurse(int n, long *obj)
{
	if (n > 0)
		origins_depth_recurse(n - 1, obj);
	else
		origins_depth_site(obj);
	__asm__ volatile("" ::: "memory");	/* not a tail call */
}

/* Two callers alike but for a constant: the same frame size and depth. */
static volatile int sink;
__attribute__((noinline)) void origins_depth_wrap_a(long *obj);
__attribute__((noinline)) void origins_depth_wrap_a(long *obj)
{
	sink = 1;
	origins_depth_recurse(3, obj);
	sink = 11;
}

__attribute__((noinline)) void origins_depth_wrap_b(long *obj);
__attribute__((noinline)) void origins_depth_wrap_b(long *obj)
{
	sink = 2;
	origins_depth_recurse(3, obj);
	sink = 22;
}

int main(void)
{
	static long objs[4];
	char *r1, *r2, *f1, *f2, *ra, *rb;
	int n1, n2, n;

	origins_depth_recurse(30, &objs[0]);
	origins_depth_recurse(30, &objs[1]);
	r1 = report_of(&objs[0]);
	r2 = report_of(&objs[1]);
	f1 = init_frames(r1, &n1);
	f2 = init_frames(r2, &n2);
	check(n1 == DEPTH, "the origin is not stack_depth frames deep", r1);
	check(strstr(f1, " in origins_depth_site+") != NULL, "the site is not frame #0", r1);
	check(strstr(f1, "    #11 ") && strstr(f1, " in origins_depth_recurse+"),
	      "the recursion is not in the origin", r1);
	check(n2 == DEPTH, "the second origin (a cache hit) is not stack_depth deep", r2);
	check(!strcmp(f1, f2), "the same chain printed different frames", r2);

	origins_depth_wrap_a(&objs[2]);
	origins_depth_wrap_b(&objs[3]);
	ra = report_of(&objs[2]);
	rb = report_of(&objs[3]);
	free(f1);
	f1 = init_frames(ra, &n);
	check(strstr(f1, " in origins_depth_wrap_a+") && !strstr(f1, "wrap_b"),
	      "the first chain does not name its caller", ra);
	free(f2);
	f2 = init_frames(rb, &n);
	check(strstr(f2, " in origins_depth_wrap_b+") && !strstr(f2, "wrap_a"),
	      "the second chain (same stack depth) names the first's caller", rb);
	free(f1);
	free(f2);
	free(r1);
	free(r2);
	free(ra);
	free(rb);
	return failed;
}
