/* SPDX-License-Identifier: MIT */
/*
 * Torture: the library under load, faults and hostile timing.  Each
 * scenario is a subcommand; the program prints "N passed, N failed" and
 * exits non-zero on failure.  Counters come from debug_objects_get_stats.
 *
 *   torture oom-threads	pool exhaustion while 4 threads hammer the table
 *   torture forks N	N forks from a process with 2 busy threads
 *   torture threads N	N short-lived threads, each leaving an active
 *			on-stack object behind
 *   torture signal	a signal handler that frees tracked memory while the
 *			interrupted thread is inside the free check
 *   torture huge	a munmap of more than a terabyte, really scanned, whose
 *			walk of every bucket reads only the buckets' pages
 *			ever used
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#define TORTURE_TYPE "torture"
#include "torture.h"

/* A pointer is looked up after free() on purpose. */
#pragma GCC diagnostic ignored "-Wuse-after-free"


static struct debug_objects_stats stats(void)
{
	struct debug_objects_stats s;

	debug_objects_get_stats(&s, sizeof(s));
	return s;
}

/* --- pool exhaustion under load ----------------------------------------- */

static void *hammer_until_off(void *arg)
{
	char *objs = malloc(100000 * 16);
	long i;

	(void)arg;
	for (i = 0; i < 100000 && debug_objects_enabled(); i++) {
		debug_object_init(objs + 16 * i, &descr);
		debug_object_activate(objs + 16 * i, &descr);
		if (i % 3 == 0)
			debug_object_deactivate(objs + 16 * i, &descr);
	}
	/* Tracking is off now: the host's own memory is untouched. */
	memset(objs, 0x5a, 100000 * 16);
	free(objs);
	return NULL;
}

static void oom_threads(void)
{
	char path[] = "/tmp/odebug-torture-XXXXXX", text[4096] = "", *p;
	int i, fd = mkstemp(path), saved = dup(2), lines = 0;
	pthread_t t[4];
	ssize_t n;

	unlink(path);
	dup2(fd, 2);
	for (i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, hammer_until_off, NULL);
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	dup2(saved, 2);
	n = pread(fd, text, sizeof(text) - 1, 0);
	text[n > 0 ? n : 0] = '\0';
	close(fd);
	for (p = text; (p = strstr(p, "ODEBUG: Out of memory. ODEBUG disabled\n")); p++)
		lines++;
	CHECK(lines == 1, "%d out-of-memory lines", lines);
	CHECK(!debug_objects_enabled(), "tracking still on after pool_max");
	CHECK(stats().pool_used == 0, "%lu trackers left after the drain", stats().pool_used);
}

/* --- forks with busy threads -------------------------------------------- */

static volatile int stop;

/* Never touched: only its addresses are annotated, to reach every bucket. */
static char spread[4096 << 12];

static void *busy(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)&arg;

	while (!stop) {
		char *b = malloc(256), *far = spread + ((size_t)rand_r(&seed) % 4096 << 12);

		/* A bucket page first used while the main thread forks. */
		debug_object_init(far, &descr);
		debug_object_free(far, &descr);

		debug_object_init(b, &descr);
		debug_object_activate(b, &descr);
		debug_object_deactivate(b, &descr);
		debug_object_init(b + 64, &descr);
		free(b);
	}
	return NULL;
}

static void forks(long n)
{
	pthread_t t[2];
	long i, bad = 0;

	stop = 0;
	for (i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, busy, NULL);
	for (i = 0; i < n; i++) {
		pid_t pid = fork();
		int status;

		if (pid == 0) {
			char *b = malloc(64);

			debug_object_init(b, &descr);
			debug_object_activate(b, &descr);
			free(b);	/* reported and fixed in the child */
			_exit(debug_object_get_state(b) == ODEBUG_STATE_NOTAVAILABLE ? 0 : 3);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid ||
		    !WIFEXITED(status) || WEXITSTATUS(status))
			bad++;
	}
	stop = 1;
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	CHECK(bad == 0, "%ld of %ld forked children failed", bad, n);
}

/* --- short-lived threads leaving active on-stack objects ----------------- */

static void *leave_active(void *arg)
{
	char obj[32];

	(void)arg;
	debug_object_init_on_stack(obj, &descr);
	debug_object_activate(obj, &descr);
	return NULL;	/* never freed: the exit check catches it */
}

static void threads(long n)
{
	struct debug_objects_stats before = stats(), after;
	long i, started = 0;

	for (i = 0; i < n; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, leave_active, NULL) == 0) {
			pthread_join(t, NULL);
			started++;
		}
	}
	after = stats();
	CHECK(started == n, "%ld of %ld threads started", started, n);
	CHECK(after.warnings - before.warnings == (unsigned long)n,
	      "%lu reports for %ld threads", after.warnings - before.warnings, n);
	/* Dead stack memory: reported from the tracker, never fixed up. */
	CHECK(after.fixups - before.fixups == 0,
	      "%lu fixups for %ld threads", after.fixups - before.fixups, n);
	CHECK(after.pool_used == before.pool_used, "%lu trackers leaked",
	      after.pool_used - before.pool_used);
}

/* --- a signal handler freeing tracked memory during the check ----------- */

#define SIG_BLOCKS 4096
static char *sig_blocks[SIG_BLOCKS];
static volatile long sig_next, sig_frees;

static void on_alarm(int sig)
{
	int saved = errno;

	(void)sig;
	if (sig_next < SIG_BLOCKS) {
		free(sig_blocks[sig_next++]);	/* holds an armed object */
		sig_frees++;
	}
	errno = saved;
}

static void signal_during_check(void)
{
	struct itimerval tv = { { 0, 200 }, { 0, 200 } };
	char *area = mmap(NULL, 1 << 24, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct sigaction sa;
	long i, rounds = 0;

	for (i = 0; i < SIG_BLOCKS; i++) {
		sig_blocks[i] = malloc(48);
		debug_object_init(sig_blocks[i], &descr);
		debug_object_activate(sig_blocks[i], &descr);
	}
	/* Many trackers in the area, so the check holds bucket locks a while. */
	for (i = 0; i < (1 << 24); i += 512)
		debug_object_init(area + i, &descr);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &tv, NULL);
	/* The main loop never enters malloc: only our check can be interrupted. */
	while (sig_next < SIG_BLOCKS && rounds < 200000) {
		debug_check_no_obj_freed(area, 1 << 24);	/* drops every tracker */
		for (i = 0; i < (1 << 24); i += 512 * 64)
			debug_object_init(area + i, &descr);
		rounds++;
	}
	tv.it_value.tv_usec = tv.it_interval.tv_usec = 0;
	setitimer(ITIMER_REAL, &tv, NULL);
	signal(SIGALRM, SIG_DFL);
	CHECK(sig_frees > 0, "no signal arrived");
	CHECK(rounds > 0, "no check ran");
	printf("signal: %ld frees from the handler during %ld checks\n", sig_frees, rounds);
	debug_check_no_obj_freed(area, 1 << 24);
	munmap(area, 1 << 24);
	while (sig_next < SIG_BLOCKS)
		free(sig_blocks[sig_next++]);
}

/* --- a munmap of more than a terabyte ----------------------------------- */

/* Reserve more than a terabyte with a small writable window at its end. */
static char *reserve_huge(size_t *sizep)
{
	size_t size = (size_t)2 << 40;
	char *p = MAP_FAILED;

	for (; size > ((size_t)1 << 40) && p == MAP_FAILED; size -= (size_t)1 << 38)
		p = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (mprotect(p + size - (1 << 20), 1 << 20, PROT_READ | PROT_WRITE)) {
		munmap(p, size);
		CHECK(0, "mprotect");
		return NULL;
	}
	*sizep = size;
	return p;
}

static long minor_faults(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

static void huge(void)
{
	size_t size;
	char *p = reserve_huge(&size);
	unsigned long before;
	long faults;

	if (!p) {
		printf("huge: no terabyte of address space here; skipped\n");
		return;
	}
	/*
	 * The process's first walk of every bucket, with one inactive object:
	 * the bucket array is 4.5 MiB, and reading each bucket's count would
	 * fault in its 1,152 pages; the pages of buckets never locked are
	 * passed over.
	 */
	debug_object_init(p + size - 4096, &descr);
	faults = minor_faults();
	CHECK(munmap(p, size) == 0, "munmap");
	faults = minor_faults() - faults;
	CHECK(faults < 300, "a walk of every bucket faulted in %ld pages", faults);
	printf("huge: a silent munmap of %zu GiB: %ld page faults\n", size >> 30, faults);

	/* A small writable window deep inside holds the objects. */
	if (!(p = reserve_huge(&size)))
		return;
	debug_object_init(p + size - 4096, &descr);
	debug_object_activate(p + size - 4096, &descr);
	debug_object_init(p + size - 8192, &descr);
	before = stats().warnings;
	CHECK(munmap(p, size) == 0, "munmap");
	CHECK(stats().warnings - before == 1, "the active object was not found");
	CHECK(debug_object_get_state(p + size - 8192) == ODEBUG_STATE_NOTAVAILABLE,
	      "the inactive object's tracker survived");
	printf("huge: munmap of %zu GiB scanned\n", size >> 30);
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";
	long n = argc > 2 ? atol(argv[2]) : 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!debug_objects_enabled()) {
		printf("torture needs ODEBUG=1\n0 passed, 1 failed\n");
		return 1;
	}
	if (!strcmp(what, "oom-threads"))	/* fixes its own stderr */
		oom_threads();
	else if (!strcmp(what, "forks"))
		forks(n ? n : 1000);
	else if (!strcmp(what, "threads"))
		threads(n ? n : 10000);
	else if (!strcmp(what, "signal"))
		signal_during_check();
	else if (!strcmp(what, "huge"))
		huge();
	else
		CHECK(0, "unknown scenario '%s'", what);
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
