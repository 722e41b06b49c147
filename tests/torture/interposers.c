/* SPDX-License-Identifier: MIT */
/*
 * Torture of the interposers: jumps out of handlers, foreign operator
 * delete, replaced memory (RELIABILITY.md, "Signal handlers, small stacks
 * and cancellation", "Missed reports: misuse that must be reported").  Each scenario
 * loops for a bounded count and time; a watchdog ends a hung run with a
 * failure.  Prints "N passed, N failed".
 *
 *   torture-interposers sem-siglongjmp	a timer signal at a high rate
 *				interrupts sem_post() and its handler
 *				siglongjmps out; another thread waits on and
 *				posts the same semaphore; both must keep
 *				making progress, and the main thread's
 *				checks must still work afterwards
 *   torture-interposers map-fixed	mmap(MAP_FIXED) over destroyed mutexes
 *				(a zero-filled mutex there is then silent)
 *				and over active objects (reported)
 *   torture-interposers madvise	the same with madvise(MADV_DONTNEED)
 *				and MADV_FREE on private memory; on shared
 *				memory, whose contents MADV_DONTNEED keeps,
 *				nothing is released
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define TORTURE_TYPE "torture_interposers"
#include "torture.h"

static unsigned long warnings(void)
{
	struct debug_objects_stats s;

	debug_objects_get_stats(&s, sizeof(s));
	return s.warnings;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* --- the watchdog: progress, not only an end --------------------------- */

static volatile unsigned long progress[2];
static volatile int watching = 1;

/* A run that hangs (a lock left held) is a failure, not a stuck CI job. */
static void *watchdog(void *arg)
{
	unsigned int limit = (unsigned int)(uintptr_t)arg, still = 0;
	unsigned long last[2] = { 0, 0 };

	while (watching && still < limit) {
		sleep(1);
		if (progress[0] == last[0] || progress[1] == last[1])
			still++;
		else
			still = 0;
		last[0] = progress[0];
		last[1] = progress[1];
	}
	if (!watching)
		return NULL;
	printf("FAIL: no progress for %u s (a lock left held): %lu, %lu\n", limit,
	       progress[0], progress[1]);
	printf("%d passed, %d failed\n", passed, failed + 1);
	fflush(stdout);
	_exit(1);
	return NULL;
}

static pthread_t start_watchdog(unsigned int seconds)
{
	pthread_t t;
	sigset_t all, old;

	/* Created with every signal blocked: the timer's go to the others. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pthread_create(&t, NULL, watchdog, (void *)(uintptr_t)seconds);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return t;
}

static void stop_watchdog(pthread_t t)
{
	watching = 0;
	pthread_join(t, NULL);
}

/* --- siglongjmp out of sem_post ----------------------------------------- */

static sigjmp_buf jump;
static volatile sig_atomic_t armed;
static volatile unsigned long jumps;
static volatile int stop;
static sem_t sem;

static void leave(int sig)
{
	(void)sig;
	if (!armed)
		return;
	armed = 0;
	jumps++;
	siglongjmp(jump, 1);
}

/* Waits on and posts the semaphore the main thread posts: same tracker, same bucket. */
static void *sem_other(void *arg)
{
	(void)arg;
	while (!stop) {
		struct timespec t;

		clock_gettime(CLOCK_REALTIME, &t);
		t.tv_nsec += 1000000;
		if (t.tv_nsec >= 1000000000) {
			t.tv_sec++;
			t.tv_nsec -= 1000000000;
		}
		sem_timedwait(&sem, &t);
		sem_post(&sem);
		sem_trywait(&sem);
		progress[1]++;
	}
	return NULL;
}

/* A timer signal to this thread alone, every @usec. */
static timer_t thread_timer(long usec)
{
	struct sigevent ev = { 0 };
	struct itimerspec it = { { 0, usec * 1000 }, { 0, usec * 1000 } };
	timer_t timer;

	ev.sigev_notify = SIGEV_THREAD_ID;
	ev.sigev_signo = SIGALRM;
	ev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	if (timer_create(CLOCK_MONOTONIC, &ev, &timer))
		abort();
	timer_settime(timer, 0, &it, NULL);
	return timer;
}

static void sem_siglongjmp(void)
{
	struct sigaction sa = { .sa_handler = leave };
	static volatile unsigned long rounds, posts;
	unsigned long before;
	pthread_t t, dog;
	timer_t timer;
	double end;
	sem_t gone;
	sigset_t alrm;

	sem_init(&sem, 0, 0);
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &alrm, NULL);	/* the other thread never takes it */
	pthread_create(&t, NULL, sem_other, NULL);
	pthread_sigmask(SIG_UNBLOCK, &alrm, NULL);
	dog = start_watchdog(5);
	sigaction(SIGALRM, &sa, NULL);
	timer = thread_timer(20);
	end = now() + 3;
	for (rounds = 0; rounds < 20 || (now() < end && rounds < 100000); rounds++) {
		if (sigsetjmp(jump, 1) == 0) {
			armed = 1;
			for (;;) {
				sem_post(&sem);
				posts++;
				progress[0]++;
			}
		}
	}
	armed = 0;
	timer_delete(timer);
	stop = 1;
	pthread_join(t, NULL);
	stop_watchdog(dog);

	/* This thread's checks still work: nothing of ours was left set. */
	before = warnings();
	sem_init(&gone, 0, 0);
	sem_destroy(&gone);
	sem_post(&gone);
	CHECK(warnings() == before + 1, "post after destroy: %lu reports, expected 1",
	      warnings() - before);
	CHECK(jumps >= 20, "only %lu jumps out of the handler", jumps);
	sem_destroy(&sem);
	printf("sem-siglongjmp: %lu rounds, %lu posts, %lu jumps out of the handler,"
	       " %lu waits and posts in the other thread\n", rounds, posts, jumps, progress[1]);
}

/* --- memory replaced in place --------------------------------------------- */

#define PAGES	(2 * 4096)

static bool active(void *obj)
{
	return debug_object_get_state(obj) == ODEBUG_STATE_ACTIVE;
}

/* A mutex used and destroyed at @m, an active object at @obj. */
static void leave_objects(pthread_mutex_t *m, void *obj)
{
	pthread_mutex_init(m, NULL);
	pthread_mutex_lock(m);
	pthread_mutex_unlock(m);
	pthread_mutex_destroy(m);
	debug_object_init(obj, &descr);
	debug_object_activate(obj, &descr);
}

/*
 * After @replace(@p): the destroyed mutex's memory is a zero-filled mutex
 * (PTHREAD_MUTEX_INITIALIZER), used silently; the active object was
 * reported once and fixed up (untracked now).
 */
static void check_replaced(const char *how, char *p, void (*replace)(char *))
{
	pthread_mutex_t *m = (pthread_mutex_t *)(p + 64);
	void *obj = p + 4096 + 256;
	unsigned long before;

	leave_objects(m, obj);
	before = warnings();
	replace(p);
	CHECK(warnings() == before + 1, "%s over an active object: %lu reports, expected 1",
	      how, warnings() - before);
	CHECK(!active(obj), "%s: the active object is still tracked", how);
	before = warnings();
	CHECK(pthread_mutex_lock(m) == 0 && pthread_mutex_unlock(m) == 0 &&
	      pthread_mutex_destroy(m) == 0, "%s: the zero-filled mutex", how);
	CHECK(warnings() == before, "%s: the zero-filled mutex where a destroyed one was:"
	      " %lu reports", how, warnings() - before);
}

/* After @keep(@p), nothing was released: no report, the object still active. */
static void check_kept(const char *how, char *p, void (*keep)(char *))
{
	void *obj = p + 4096 + 256;
	unsigned long before;

	debug_object_init(obj, &descr);
	debug_object_activate(obj, &descr);
	before = warnings();
	keep(p);
	CHECK(warnings() == before, "%s: %lu reports, expected none", how, warnings() - before);
	CHECK(active(obj), "%s: the active object was forgotten", how);
	debug_object_deactivate(obj, &descr);
	debug_object_free(obj, &descr);
}

static char *map(int flags)
{
	char *p = mmap(NULL, PAGES, PROT_READ | PROT_WRITE, flags | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		abort();
	return p;
}

static void fixed_anon(char *p)
{
	if (mmap(p, PAGES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
		 -1, 0) != p)
		abort();
}

static void fixed_file(char *p)
{
	int fd = open("/dev/zero", O_RDONLY);

	if (mmap(p, PAGES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, fd, 0) != p)
		abort();
	close(fd);
}

static void fixed_noreplace(char *p)
{
	CHECK(mmap(p, PAGES, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0) == MAP_FAILED,
	      "MAP_FIXED_NOREPLACE replaced a mapping");
}

static void fixed_bad_fd(char *p)
{
	CHECK(mmap(p, PAGES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, -1, 0) ==
	      MAP_FAILED && errno == EBADF, "MAP_FIXED with no descriptor");
}

static void fixed_unaligned(char *p)
{
	CHECK(mmap(p + 1, PAGES, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED,
	      "MAP_FIXED at an unaligned address");
}

static void map_fixed(void)
{
	double end = now() + 10;
	int i;

	for (i = 0; i < 20 || (i < 200 && now() < end); i++) {
		char *p = map(MAP_PRIVATE);

		check_replaced("mmap(MAP_FIXED) anonymous", p, fixed_anon);
		check_replaced("mmap(MAP_FIXED) of /dev/zero", p, fixed_file);
		check_kept("mmap(MAP_FIXED_NOREPLACE)", p, fixed_noreplace);
		check_kept("mmap(MAP_FIXED) refused (EBADF)", p, fixed_bad_fd);
		check_kept("mmap(MAP_FIXED) refused (EINVAL)", p, fixed_unaligned);
		munmap(p, PAGES);
	}
	printf("map-fixed: %d rounds\n", i);
}

static void dontneed(char *p)
{
	CHECK(madvise(p, PAGES, MADV_DONTNEED) == 0, "MADV_DONTNEED: %s", strerror(errno));
}

static void dontneed_part(char *p)
{
	CHECK(madvise(p, 4096, MADV_DONTNEED) == 0, "MADV_DONTNEED: %s", strerror(errno));
}

/* Freed pages read as before until reclaimed: the program writes before it reads. */
static void madv_free(char *p)
{
	CHECK(madvise(p, PAGES, MADV_FREE) == 0, "MADV_FREE: %s", strerror(errno));
	memset(p, 0, PAGES);
}

static void madv_remove(char *p)
{
	CHECK(madvise(p, PAGES, MADV_REMOVE) == 0, "MADV_REMOVE: %s", strerror(errno));
}

/* MADV_REMOVE needs a shared mapping: refused (EINVAL) on a private one. */
static void madv_remove_private(char *p)
{
	CHECK(madvise(p, PAGES, MADV_REMOVE) != 0, "MADV_REMOVE of private memory");
}

static void dontneed_unaligned(char *p)
{
	CHECK(madvise(p + 1, PAGES, MADV_DONTNEED) != 0, "MADV_DONTNEED unaligned");
}

/* glibc ignores POSIX_MADV_DONTNEED: the contents stay. */
static void posix_dontneed(char *p)
{
	p[4096] = 1;
	CHECK(posix_madvise(p, PAGES, POSIX_MADV_DONTNEED) == 0, "posix_madvise");
	CHECK(p[4096] == 1, "POSIX_MADV_DONTNEED discarded the contents");
}

/* A shared mapping keeps its contents: the held mutex is still held, then unlocked. */
static void shared_dontneed(char *p)
{
	pthread_mutex_t *m = (pthread_mutex_t *)(p + 64);
	unsigned long before;

	pthread_mutex_init(m, NULL);
	pthread_mutex_lock(m);
	before = warnings();
	dontneed(p);
	CHECK(pthread_mutex_unlock(m) == 0 && pthread_mutex_destroy(m) == 0,
	      "the shared mutex after MADV_DONTNEED");
	CHECK(warnings() == before, "MADV_DONTNEED of shared memory: %lu reports",
	      warnings() - before);
}

static void advise(void)
{
	double end = now() + 10;
	int i;

	for (i = 0; i < 20 || (i < 200 && now() < end); i++) {
		char *p = map(MAP_PRIVATE), *s = map(MAP_SHARED);

		check_replaced("MADV_DONTNEED", p, dontneed);
		check_replaced("MADV_FREE", p, madv_free);
		check_replaced("MADV_REMOVE of shared memory", s, madv_remove);
		check_kept("MADV_DONTNEED of another page", p, dontneed_part);
		check_kept("MADV_DONTNEED refused (EINVAL)", p, dontneed_unaligned);
		check_kept("MADV_DONTNEED of shared memory", s, dontneed);
		check_kept("MADV_REMOVE of private memory", p, madv_remove_private);
		check_kept("posix_madvise(POSIX_MADV_DONTNEED)", p, posix_dontneed);
		shared_dontneed(s);
		munmap(p, PAGES);
		munmap(s, PAGES);
	}
	printf("madvise: %d rounds\n", i);
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";

	if (!debug_objects_enabled()) {
		printf("run with ODEBUG=1\n");
		return 1;
	}
	if (!strcmp(what, "sem-siglongjmp"))
		sem_siglongjmp();
	else if (!strcmp(what, "map-fixed"))
		map_fixed();
	else if (!strcmp(what, "madvise"))
		advise();
	else {
		printf("usage: torture-interposers sem-siglongjmp | map-fixed | madvise\n");
		return 2;
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
