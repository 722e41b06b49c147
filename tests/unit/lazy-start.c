/* SPDX-License-Identifier: MIT */
/*
 * With ODEBUG=1, libodebug maps its table and pool and runs its selftest on
 * the first API call, not at process start: a process that annotates
 * nothing pays for none of it.  The start itself makes no loader call and
 * no allocation; a report needs nothing loaded either: on x86-64 its
 * frames come from the call-frame information (lib/report/unwind.c), elsewhere
 * from libunwind, which the constructor loads.  Run with ODEBUG=1.
 *
 *   1. before any call: no tracker carved; libunwind not loaded on x86-64,
 *      already loaded elsewhere;
 *   2. a child forked before the start starts on its own and reports;
 *   3. the first call is a misuse, and its report still has the caller's
 *      frames (the start ran before the report, outside it), and on
 *      x86-64 libunwind is still not loaded;
 *   4. now started: trackers carved; a child forked
 *      after the start reports too.
 *
 * lazy-start threads: 4 threads make the first API calls at once; one
 * starts, the others wait for it, and every object is tracked.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "odebug.h"

static const struct debug_obj_descr descr = { .name = "lazy" };
static int failed;

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "lazy-start: FAILED: %s\n", what);
		failed = 1;
	}
}

static int unwinder_loaded(void)
{
	void *h = dlopen("libunwind.so.8", RTLD_LAZY | RTLD_NOLOAD);

	if (h)
		dlclose(h);
	return h != NULL;
}

static unsigned long carved(void)
{
	struct debug_objects_stats s;

	debug_objects_get_stats(&s, sizeof(s));
	return s.pool_free + s.pool_used;
}

/* Run @fn with stderr in a pipe; returns what it printed (static buffer). */
static const char *captured(void (*fn)(void))
{
	static char out[8192];
	int fds[2], saved = dup(2);
	ssize_t n, got = 0;

	if (pipe(fds))
		abort();
	dup2(fds[1], 2);
	fn();
	dup2(saved, 2);
	close(saved);
	close(fds[1]);
	while ((n = read(fds[0], out + got, sizeof(out) - 1 - (size_t)got)) > 0)
		got += n;
	close(fds[0]);
	out[got] = '\0';
	return out;
}

static long untracked[4];

__attribute__((noinline)) void lazy_start_culprit(void);
__attribute__((noinline)) void lazy_start_culprit(void)
{
	debug_object_activate(&untracked[0], &descr);
	__asm__ volatile("" ::: "memory");
}

static void double_activate(void)
{
	debug_object_init(&untracked[2], &descr);
	debug_object_activate(&untracked[2], &descr);
	debug_object_activate(&untracked[2], &descr);
}

/* A child must be able to start (or go on) and report on its own. */
static void child_reports(const char *when)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		const char *out = captured(double_activate);

		_exit(strstr(out, "ODEBUG: activate active") ? 0 : 1);
	}
	check(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0, when);
}

static pthread_barrier_t together;
static long thread_objs[4];

static void *first_call(void *arg)
{
	long *obj = arg;

	pthread_barrier_wait(&together);
	debug_object_init(obj, &descr);
	debug_object_activate(obj, &descr);
	return (void *)(long)(debug_object_get_state(obj) == ODEBUG_STATE_ACTIVE);
}

static int threads_start_once(void)
{
	pthread_t t[4];
	struct debug_objects_stats s;
	void *ok;
	int i;

	check(carved() == 0, "trackers carved before the first API call");
	pthread_barrier_init(&together, NULL, 4);
	for (i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, first_call, &thread_objs[i]);
	for (i = 0; i < 4; i++) {
		pthread_join(t[i], &ok);
		check(ok != NULL, "an object of a concurrent first call is not active");
	}
	debug_objects_get_stats(&s, sizeof(s));
	check(s.pool_used == 4, "not 4 objects tracked after 4 concurrent first calls");
	return failed;
}

int main(int argc, char **argv)
{
	const char *out;

	if (argc > 1 && !strcmp(argv[1], "threads"))
		return threads_start_once();

	check(carved() == 0, "trackers carved before the first API call");
#if defined(__x86_64__)
	check(!unwinder_loaded(), "libunwind loaded by a process that made no report");
#else
	check(unwinder_loaded(), "libunwind not loaded by the constructor");
#endif
	child_reports("a child forked before the start did not report");
	check(carved() == 0, "the child's start showed in the parent");

	out = captured(lazy_start_culprit);
	check(strstr(out, "ODEBUG: activate not available") != NULL,
	      "the first call's misuse was not reported");
	check(strstr(out, "    #0 0x") != NULL, "the first report has no frames");
	check(strstr(out, " in lazy_start_culprit+0x") != NULL,
	      "the first report does not name its caller");
#if defined(__x86_64__)
	check(!unwinder_loaded(), "the first report loaded libunwind");
#endif

	check(debug_objects_enabled(), "not enabled after the start");
	check(carved() > 0, "no trackers after the start");
	child_reports("a child forked after the start did not report");
	if (failed)
		fprintf(stderr, "the first report was:\n%s", out);
	return failed;
}
