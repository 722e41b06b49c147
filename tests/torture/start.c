/* SPDX-License-Identifier: MIT */
/*
 * Torture of the start (RELIABILITY.md, "The start"): the first API call of
 * a process, made from the places the start can find itself in.  Each
 * scenario runs in fresh processes (the start happens once a process),
 * bounded in count and time, with a watchdog.  Prints "N passed, N failed".
 * The parent never calls the API, so every child starts on its own.
 *
 *   torture-start handler-malloc	the first call in a signal handler that
 *				interrupted malloc() or free()
 *   torture-start dlopen MODULE	the first call while another thread's
 *				dlopen() runs a constructor that locks a
 *				mutex and annotates (the loader's lock)
 *   torture-start altstack	the first call, and its report, on a 16 KiB
 *				sigaltstack with a guard below; prints the
 *				deepest stack use seen
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define TORTURE_TYPE "torture_start"
#include "torture.h"
#include "harness.h"

#define RUNS 20

static unsigned long warnings(void)
{
	struct debug_objects_stats s;

	debug_objects_get_stats(&s, sizeof(s));
	return s.warnings;
}

/* The first API calls of the process, and a report ("free active"). */
static void free_active(void)
{
	char *p = malloc(64);

	debug_object_init(p, &descr);
	debug_object_activate(p, &descr);
	free(p);
}

/* The same without malloc(), for a handler that may have interrupted it. */
static void release_active(void)
{
	static char object[64];

	debug_object_init(object, &descr);
	debug_object_activate(object, &descr);
	debug_check_no_obj_freed(object, sizeof(object));
}

/*
 * Run @child in RUNS fresh processes; each must exit 0 within @seconds.
 * Returns how many did.
 */
static int in_fresh_processes(void (*child)(void), const char *what, int seconds)
{
	int i, ok = 0, status;

	for (i = 0; i < RUNS; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			child();
			_exit(0);
		}
		wait_bounded(pid, &status, seconds);
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
			ok++;
		else
			printf("%s: child %d: status %#x\n", what, i, status);
	}
	return ok;
}

/* --- the first call in a handler that interrupted malloc ----------------- */

static volatile sig_atomic_t first_done;

static void first_call_in_handler(int sig)
{
	(void)sig;
	if (first_done)
		return;
	release_active();
	first_done = 1;
}

static void handler_malloc_child(void)
{
	void *keep[64] = { 0 };
	double end = now() + 5;
	unsigned int i;

	signal(SIGALRM, first_call_in_handler);
	every(500);
	for (i = 0; !first_done && now() < end; i++) {
		size_t k = i % 64;

		free(keep[k]);
		keep[k] = malloc(16 + (i * 7919) % 4000);
		memset(keep[k], 1, 16);
	}
	every(0);
	/* The allocator must still work, and the start must have happened. */
	for (i = 0; i < 64; i++)
		free(keep[i]);
	free(malloc(100));
	if (!first_done || !debug_objects_enabled() || warnings() != 1)
		_exit(3);
}

static void handler_malloc(void)
{
	int ok;

	start_watchdog(150);
	ok = in_fresh_processes(handler_malloc_child, "handler-malloc", 5);
	CHECK(ok == RUNS, "%d of %d processes survived a first call in a handler", ok, RUNS);
	printf("handler-malloc: %d processes, each started from a handler interrupting malloc\n", ok);
}

/* --- the first call beside a dlopen() ------------------------------------ */

static const char *module_path;

/*
 * Set by the module's constructor (found with dlsym(RTLD_DEFAULT)) while it
 * holds the loader's lock; it then waits a little and locks a mutex.
 */
__attribute__((visibility("default"))) volatile int torture_start_in_constructor;

static void *load_module(void *arg)
{
	(void)arg;
	return dlopen(module_path, RTLD_NOW);
}

static void dlopen_child(void)
{
	pthread_t t;
	void *handle = NULL;
	double end = now() + 5;

	if (pthread_create(&t, NULL, load_module, NULL))
		_exit(4);
	while (!torture_start_in_constructor && now() < end)
		;
	free_active();	/* the first call: the start, under the loader's lock elsewhere */
	pthread_join(t, &handle);
	if (!handle || !debug_objects_enabled() || warnings() != 1)
		_exit(3);
}

static void dlopen_race(const char *module)
{
	int ok;

	module_path = module;
	start_watchdog(150);
	ok = in_fresh_processes(dlopen_child, "dlopen", 5);
	CHECK(ok == RUNS, "%d of %d processes started beside a dlopen()", ok, RUNS);
	printf("dlopen: %d processes, each started while a constructor held the loader's lock\n", ok);
}

/* --- the first call on a small stack ------------------------------------- */

#define GUARD (64 * 1024)
#define ALTSTACK (16 * 1024)
#define PAINT 0xa5

static char *alt_lo;

static void first_call_on_altstack(int sig)
{
	(void)sig;
	release_active();
	first_done = 1;
}

/* Writes the deepest stack use to the pipe @fd. */
static int used_fd;

static void altstack_child(void)
{
	char *map = mmap(NULL, GUARD + ALTSTACK, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct sigaction sa = { .sa_handler = first_call_on_altstack, .sa_flags = SA_ONSTACK };
	stack_t ss;
	size_t used;

	if (map == MAP_FAILED)
		_exit(4);
	mprotect(map, GUARD, PROT_NONE);
	alt_lo = map + GUARD;
	memset(alt_lo, PAINT, ALTSTACK);
	ss.ss_sp = alt_lo;
	ss.ss_size = ALTSTACK;
	ss.ss_flags = 0;
	sigaltstack(&ss, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	raise(SIGUSR1);
	for (used = 0; used < ALTSTACK && (unsigned char)alt_lo[used] == PAINT; used++)
		;
	used = ALTSTACK - used;
	if (write(used_fd, &used, sizeof(used)) != sizeof(used))
		_exit(5);
	if (!first_done || warnings() != 1)
		_exit(3);
}

static void altstack(void)
{
	int fd[2], ok;
	size_t used, deepest = 0;

	start_watchdog(150);
	if (pipe(fd))
		abort();
	used_fd = fd[1];
	ok = in_fresh_processes(altstack_child, "altstack", 5);
	close(fd[1]);
	while (read(fd[0], &used, sizeof(used)) == sizeof(used))
		deepest = used > deepest ? used : deepest;
	close(fd[0]);
	CHECK(ok == RUNS, "%d of %d processes started and reported on a 16 KiB sigaltstack", ok, RUNS);
	printf("altstack: %d processes, deepest use %zu of %d bytes\n", ok, deepest, ALTSTACK);
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";

	if (!getenv("ODEBUG") || strcmp(getenv("ODEBUG"), "1")) {
		printf("run with ODEBUG=1\n");
		return 1;
	}
	/* Reports go nowhere: the counters say what happened. */
	if (!freopen("/dev/null", "w", stderr))
		return 1;
	if (!strcmp(what, "handler-malloc"))
		handler_malloc();
	else if (!strcmp(what, "dlopen") && argc > 2)
		dlopen_race(argv[2]);
	else if (!strcmp(what, "altstack"))
		altstack();
	else {
		printf("usage: torture-start handler-malloc | dlopen MODULE | altstack\n");
		return 2;
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
