/* SPDX-License-Identifier: MIT */
/*
 * Torture of the report path (RELIABILITY.md, "The report path"): reports
 * printed and named from the places a report can find itself in.  Each
 * scenario loops for a bounded count and time; a watchdog ends a hung run
 * with a failure.  Prints "N passed, N failed".  Reports go to /dev/null
 * (the scenarios print thousands); the counters say what happened.
 *
 *   torture-report loader-lock	a dlclose() destructor that reports, while
 *				another thread reports (the loader's lock)
 *   torture-report audit-lock AUDIT_MODULE MODULE	under odebug --audit:
 *				la_objclose() reports and fixes up a module's
 *				object under the loader's lock, while another
 *				thread loops dlopen/dlclose of MODULE and a
 *				third reports
 *   torture-report signal-lock	a signal handler that reports, on a thread
 *				that is itself reporting (the report lock)
 *   torture-report signal-malloc	reports from a signal handler that
 *				interrupted malloc or free, in fresh processes
 *   torture-report signal-malloc-thread	the same in a second thread, whose
 *				first report it is (its lazily set-up state)
 *   torture-report signal-malloc-unseen	the same in a thread started by
 *				glibc's pthread_create, not libodebug's
 *   torture-report signal-localtime	JSON reports from a signal handler that
 *				interrupted localtime_r (the timezone lock)
 *   torture-report small-stack	whole reports on a 16 KiB sigaltstack, a
 *				64 KiB makecontext stack and a 32 KiB thread
 *				stack (started seen and unseen), each with a
 *				guard mapping below; prints
 *				the deepest stack use seen
 *   torture-report cost N	(not a test) the time of the first report and
 *				the mean of N more, for BENCHMARKS.md
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#define TORTURE_TYPE "torture_report"
#include "torture.h"
#include "harness.h"

static unsigned long warnings(void)
{
	struct debug_objects_stats s;

	debug_objects_get_stats(&s, sizeof(s));
	return s.warnings;
}

static void quiet_stderr(void)
{
	int fd = open("/dev/null", O_WRONLY);

	dup2(fd, 2);
	close(fd);
}

/* One "free active" report: an active object in a block that is freed. */
static void free_active(void)
{
	char *p = malloc(64);

	debug_object_init(p, &descr);
	debug_object_activate(p, &descr);
	free(p);
}

/*
 * glibc's pthread_create(), not the one the program sees (libodebug's): a
 * thread libodebug does not see start, as C11 threads and threads created
 * before it loaded.
 */
static int unseen_pthread_create(pthread_t *t, const pthread_attr_t *attr,
				 void *(*fn)(void *), void *arg)
{
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	int (*create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *) = NULL;

	if (libc)
		*(void **)&create = dlvsym(libc, "pthread_create", "GLIBC_2.34");
	if (!create)
		abort();
	return create(t, attr, fn, arg);
}

/* --- the loader's lock -------------------------------------------------- */

static volatile int stop;

static void *free_loop(void *arg)
{
	long *n = arg;

	while (!stop) {
		free_active();
		(*n)++;
	}
	return NULL;
}

/*
 * The module's destructor frees an active object (a report under the
 * loader's lock) while this thread's reports name frames: naming must not
 * wait for the loader's lock.
 */
static void loader_lock(const char *module)
{
	pthread_t t;
	long frees = 0, loops = 0;
	unsigned long before = warnings();
	double end = now() + 10;

	start_watchdog(60);
	pthread_create(&t, NULL, free_loop, &frees);
	for (loops = 0; loops < 200 && (loops < 20 || now() < end); loops++) {
		void *h = dlopen(module, RTLD_NOW | RTLD_LOCAL);

		CHECK(h != NULL, "dlopen %s: %s", module, dlerror());
		if (!h)
			break;
		dlclose(h);
	}
	stop = 1;
	pthread_join(t, NULL);
	CHECK(warnings() - before >= (unsigned long)(loops + frees),
	      "%lu reports for %ld dlcloses and %ld frees", warnings() - before, loops, frees);
	printf("loader-lock: %ld dlopen/dlclose with a reporting destructor, %ld frees\n",
	       loops, frees);
}

/*
 * Under odebug --audit: la_objclose() reports AUDIT_MODULE's active object
 * and runs its fixup with the loader's lock held, while a second thread
 * loops dlopen/dlclose of MODULE (waiting for that lock) and a third
 * reports: neither the audit path nor a report may wait for a lock that a
 * thread waiting for the loader holds.  Only la_objclose fixes up here,
 * so the fixup count proves the audit path ran at every unload.
 */
static const struct debug_obj_descr plain_descr = { .name = "torture_plain" };

static void *plain_free_loop(void *arg)
{
	long *n = arg;

	while (!stop) {
		char *p = malloc(64);

		debug_object_init(p, &plain_descr);
		debug_object_activate(p, &plain_descr);
		free(p);	/* "free active", no fixup */
		(*n)++;
	}
	return NULL;
}

struct dl_loop {
	const char *module;
	long n;
	bool ok;
};

static void *dl_loop(void *arg)
{
	struct dl_loop *d = arg;

	while (!stop) {
		void *h = dlopen(d->module, RTLD_NOW | RTLD_LOCAL);

		if (!h) {
			d->ok = false;
			break;
		}
		dlclose(h);
		d->n++;
	}
	return NULL;
}

static unsigned long fixups(void)
{
	struct debug_objects_stats s;

	debug_objects_get_stats(&s, sizeof(s));
	return s.fixups;
}

static void audit_lock(const char *audit_module, const char *module)
{
	pthread_t t[2];
	struct dl_loop other = { module, 0, true };
	long frees = 0, loops;
	unsigned long fixed = fixups(), before = warnings();
	double end = now() + 10;

	start_watchdog(60);
	pthread_create(&t[0], NULL, plain_free_loop, &frees);
	pthread_create(&t[1], NULL, dl_loop, &other);
	for (loops = 0; loops < 200 && (loops < 20 || now() < end); loops++) {
		void *h = dlopen(audit_module, RTLD_NOW | RTLD_LOCAL);

		CHECK(h != NULL, "dlopen %s: %s", audit_module, dlerror());
		if (!h)
			break;
		dlclose(h);
	}
	stop = 1;
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	CHECK(other.ok, "dlopen %s failed", module);
	CHECK(fixups() - fixed == (unsigned long)loops,
	      "%lu fixups for %ld unloads: la_objclose did not check each (run under odebug --audit)",
	      fixups() - fixed, loops);
	CHECK(warnings() - before >= (unsigned long)(loops + frees),
	      "%lu reports for %ld unloads and %ld frees", warnings() - before, loops, frees);
	printf("audit-lock: %ld unloads checked by la_objclose, %ld dlopen/dlclose beside them,"
	       " %ld frees\n", loops, other.n, frees);
}

/* --- a signal handler that reports on a reporting thread ----------------- */

static char sig_obj[64];
static volatile long sig_reports;

static void report_in_handler(int sig)
{
	(void)sig;
	debug_object_init(sig_obj, &descr);
	debug_object_activate(sig_obj, &descr);
	debug_check_no_obj_freed(sig_obj, sizeof(sig_obj));
	sig_reports++;
}

/* With a suppressions file, every report takes the report lock. */
static void signal_lock(void)
{
	double end = now() + 10;
	long frees;

	start_watchdog(60);
	signal(SIGALRM, report_in_handler);
	every(1000);
	for (frees = 0; frees < 100000000 && sig_reports < 2000 && now() < end; frees++)
		free_active();
	every(0);
	signal(SIGALRM, SIG_DFL);
	CHECK(sig_reports >= 200, "only %ld reports from the handler", sig_reports);
	printf("signal-lock: %ld reports from the handler during %ld frees\n", sig_reports, frees);
}

/* --- a signal handler that interrupted malloc ---------------------------- */

/*
 * In a fresh process each time: the first report is the one that would
 * load a library (and allocate) inside the interrupted allocator if the
 * constructor had not loaded it already.  Blocks
 * of @min bytes and more: with @min above 24, no free() fills the tcache
 * bin a 16-byte malloc() would take from without the arena's lock.
 */
static int malloc_loop(size_t min)
{
	void *keep[64] = { 0 };
	double end = now() + 1;
	unsigned int i;

	signal(SIGALRM, report_in_handler);
	every(500);
	for (i = 0; sig_reports < 5 && now() < end + 10; i++) {
		size_t k = i % 64;

		free(keep[k]);
		keep[k] = malloc(min + (i * 7919) % 4000);
		memset(keep[k], 1, 16);
	}
	every(0);
	return sig_reports >= 5 ? 0 : 3;
}

static void malloc_child(void)
{
	_exit(malloc_loop(16));
}

static void *malloc_thread(void *arg)
{
	sigset_t alrm;

	(void)arg;
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	pthread_sigmask(SIG_UNBLOCK, &alrm, NULL);
	return (void *)(intptr_t)malloc_loop(64);
}

/*
 * The same in a thread other than the one that started libodebug: its
 * first report is its first unwind, whose per-thread state in libunwind
 * (a dlopen'ed library's TLS: glibc allocates it with malloc() on first
 * use) must not be set up inside the interrupted allocator.
 */
static void malloc_thread_child(bool unseen)
{
	sigset_t alrm;
	pthread_t t;
	void *rc = (void *)(intptr_t)4;

	free_active();		/* started here, in the main thread */
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &alrm, NULL);
	if ((unseen ? unseen_pthread_create : pthread_create)(&t, NULL, malloc_thread, NULL) == 0)
		pthread_join(t, &rc);
	_exit((int)(intptr_t)rc);
}

/* @in_thread: 0 the main thread, 1 a thread, 2 a thread started unseen. */
static void signal_malloc(int in_thread)
{
	int i, ok = 0, status;

	start_watchdog(120);
	for (i = 0; i < 20; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			if (in_thread)
				malloc_thread_child(in_thread == 2);
			malloc_child();
		}
		wait_bounded(pid, &status, 20);
		ok += WIFEXITED(status) && WEXITSTATUS(status) == 0;
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			printf("child %d: status %#x\n", i, status);
	}
	CHECK(ok == 20, "%d of 20 processes survived", ok);
	printf("signal-malloc%s: %d processes, 5 reports each from a handler interrupting malloc\n",
	       in_thread == 2 ? "-unseen" : in_thread ? "-thread" : "", ok);
}

/* --- a signal handler that interrupted localtime_r ----------------------- */

static void signal_localtime(void)
{
	double end = now() + 10;
	long calls = 0;

	start_watchdog(60);
	setenv("TZ", "Europe/Paris", 1);
	tzset();
	signal(SIGALRM, report_in_handler);
	every(500);
	while (calls < 50000000 && (sig_reports < 20 || now() < end) && now() < end + 5) {
		struct tm tm;
		time_t t = (time_t)calls * 3600;

		localtime_r(&t, &tm);
		calls++;
	}
	every(0);
	signal(SIGALRM, SIG_DFL);
	CHECK(sig_reports >= 20, "only %ld reports from the handler", sig_reports);
	printf("signal-localtime: %ld JSON reports from a handler during %ld localtime_r\n",
	       sig_reports, calls);
}

/* --- small stacks -------------------------------------------------------- */

#define GUARD 65536	/* below each stack: an overflow faults there */
#define PAINT 0xa5

struct stack {
	char *map, *lo;
	size_t size;
};

static struct stack stack_new(size_t size)
{
	struct stack s = { .size = size };

	/*
	 * A guard below (the stack grows down into it) and one above: nothing
	 * of ours may read past either end, whatever the memory beside it.
	 */
	s.map = mmap(NULL, GUARD + size + GUARD, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s.map == MAP_FAILED)
		abort();
	mprotect(s.map, GUARD, PROT_NONE);
	mprotect(s.map + GUARD + size, GUARD, PROT_NONE);
	s.lo = s.map + GUARD;
	memset(s.lo, PAINT, size);
	return s;
}

/* Bytes of @s ever written, from its top down. */
static size_t stack_used(const struct stack *s)
{
	size_t i;

	for (i = 0; i < s->size && (unsigned char)s->lo[i] == PAINT; i++)
		;
	return s->size - i;
}

static void stack_free(struct stack *s)
{
	munmap(s->map, GUARD + s->size + GUARD);
}

static volatile int reported;

static void report_twice(void)
{
	unsigned long before = warnings();

	free_active();	/* the first report of the process on this stack */
	free_active();
	reported = warnings() - before == 2;
}

static void on_altstack(int sig)
{
	(void)sig;
	report_twice();
}

static ucontext_t main_ctx, co_ctx;

static void coroutine(void)
{
	report_twice();
}

static void *thread_main(void *arg)
{
	(void)arg;
	report_twice();
	return NULL;
}

/* Two reports (origins, JSON) on a painted stack of @which kind. */
static size_t small_stack_child(int which)
{
	struct stack s = stack_new(which == 0 ? 16384 : which == 1 ? 65536 : 32768);
	size_t used;

	reported = 0;
	if (which == 0) {
		stack_t ss = { .ss_sp = s.lo, .ss_size = s.size };
		struct sigaction sa = { .sa_handler = on_altstack, .sa_flags = SA_ONSTACK };

		sigaltstack(&ss, NULL);
		sigaction(SIGUSR1, &sa, NULL);
		raise(SIGUSR1);
	} else if (which == 1) {
		getcontext(&co_ctx);
		co_ctx.uc_stack.ss_sp = s.lo;
		co_ctx.uc_stack.ss_size = s.size;
		co_ctx.uc_link = &main_ctx;
		makecontext(&co_ctx, coroutine, 0);
		swapcontext(&main_ctx, &co_ctx);
	} else {
		pthread_attr_t attr;
		pthread_t t;

		pthread_attr_init(&attr);
		pthread_attr_setstack(&attr, s.lo, s.size);
		if (which == 2)
			pthread_create(&t, &attr, thread_main, NULL);
		else	/* it unwinds step by step (lib/core/thread.c) */
			unseen_pthread_create(&t, &attr, thread_main, NULL);
		pthread_join(t, NULL);
	}
	used = stack_used(&s);
	stack_free(&s);
	return reported ? used : 0;
}

/*
 * Each context in a fresh process whose first run makes the process's first
 * report (which starts the symboliser), then 19 more on fresh stacks.
 */
static void small_stack(void)
{
	static const char *const names[] = {
		"16 KiB sigaltstack", "64 KiB makecontext stack", "32 KiB thread stack",
		"32 KiB thread stack, started unseen",
	};
	int which;

	start_watchdog(120);
	for (which = 0; which < 4; which++) {
		size_t res[2] = { 0, 0 };	/* runs that reported; deepest use */
		int fd[2], status;
		pid_t pid;

		if (pipe(fd))
			abort();
		pid = fork();
		if (pid == 0) {
			int round;

			for (round = 0; round < 20; round++) {
				size_t used = small_stack_child(which);

				res[0] += used != 0;
				if (used > res[1])
					res[1] = used;
			}
			if (write(fd[1], res, sizeof(res)) != sizeof(res))
				_exit(4);
			_exit(0);
		}
		close(fd[1]);
		/* (a hung child: the watchdog ends the read) */
		if (read(fd[0], res, sizeof(res)) != sizeof(res))
			res[0] = 0;
		close(fd[0]);
		wait_bounded(pid, &status, 20);
		CHECK(WIFEXITED(status) && !WEXITSTATUS(status) && res[0] == 20,
		      "%s: status %#x, %zu of 20 runs reported", names[which], status, res[0]);
		printf("small-stack: %s: 20 runs, deepest use %zu bytes\n", names[which], res[1]);
	}
}

/* --- what a report costs (BENCHMARKS.md) ------------------------------- */

static void cost(long n)
{
	double t0 = now(), t1, t2;
	long i;

	free_active();
	t1 = now();
	for (i = 0; i < n; i++)
		free_active();
	t2 = now();
	printf("cost: first report %.1f ms, then %.3f ms per report (%ld reports)\n",
	       (t1 - t0) * 1e3, (t2 - t1) * 1e3 / (double)(n ? n : 1), n);
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";

	if (!debug_objects_enabled()) {
		printf("run with ODEBUG=1\n");
		return 1;
	}
	quiet_stderr();
	if (!strcmp(what, "loader-lock") && argc > 2)
		loader_lock(argv[2]);
	else if (!strcmp(what, "audit-lock") && argc > 3)
		audit_lock(argv[2], argv[3]);
	else if (!strcmp(what, "signal-lock"))
		signal_lock();
	else if (!strcmp(what, "signal-malloc"))
		signal_malloc(0);
	else if (!strcmp(what, "signal-malloc-thread"))
		signal_malloc(1);
	else if (!strcmp(what, "signal-malloc-unseen"))
		signal_malloc(2);
	else if (!strcmp(what, "signal-localtime"))
		signal_localtime();
	else if (!strcmp(what, "small-stack"))
		small_stack();
	else if (!strcmp(what, "cost") && argc > 2)
		cost(atol(argv[2]));
	else {
		printf("usage: torture-report loader-lock MODULE |"
		       " audit-lock AUDIT_MODULE MODULE | signal-lock | signal-malloc |"
		       " signal-malloc-thread | signal-malloc-unseen |"
		       " signal-localtime | small-stack\n");
		return 2;
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
