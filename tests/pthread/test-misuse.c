/* SPDX-License-Identifier: MIT */
/*
 * Built-in objects used where there is none, through every entry point:
 * memory that was never initialised as a mutex (a non-zero pattern glibc
 * refuses), a condition variable that is neither initialised nor a valid
 * static initializer (PTHREAD_COND_INITIALIZER with one byte changed), an
 * rwlock unlocked while nobody holds it.  Each case expects one report,
 * in the kernel's words, whose frame #0 is the function that made the
 * call, and glibc's result unchanged.  Every case here is a report: with
 * check_pthread=0 each one fails (meson.build runs the suite so too).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <time.h>

#include "pt.h"

#define NOINLINE __attribute__((noinline, noclone))
#define PATTERN 0xa5	/* a kind glibc never writes: it says EINVAL */

int trylock_225(pthread_mutex_t *m);
__asm__(".symver trylock_225,pthread_mutex_trylock@GLIBC_2.2.5");

/*
 * @code makes one report with every line of @... in it, and frame #0 of
 * its stack is @func.
 */
#define EXPECT_AT(func, code, ...) do {						\
	const char *want_[] = { __VA_ARGS__ };					\
	struct stats_delta d_;							\
	char *out_, *f0_;							\
										\
	stats_mark();								\
	capture_start();							\
	code;									\
	out_ = capture_stop();							\
	d_ = stats_delta();							\
	for (size_t i_ = 0; i_ < sizeof(want_) / sizeof(want_[0]); i_++)	\
		if (!strstr(out_, want_[i_]))					\
			fail_msg("missing \"%s\" in:\n%s", want_[i_], out_);	\
	if (d_.warnings != 1)							\
		fail_msg("%ld warnings, not 1:\n%s", d_.warnings, out_);	\
	f0_ = strstr(out_, "    #0 ");						\
	if (!f0_ || !strstr(f0_, " in " func "+") ||				\
	    (strchr(f0_, '\n') && strstr(f0_, " in " func "+") > strchr(f0_, '\n'))) \
		fail_msg("frame #0 is not %s:\n%s", func, out_);		\
	free(out_);								\
} while (0)

/* The culprits: one call each, in a frame of its own. */
static NOINLINE int mutex_lock_here(pthread_mutex_t *m)
{
	int r = pthread_mutex_lock(m);

	__asm__ volatile("" : : : "memory");
	return r;
}

static NOINLINE int mutex_trylock_here(pthread_mutex_t *m)
{
	int r = pthread_mutex_trylock(m);

	__asm__ volatile("" : : : "memory");
	return r;
}

static NOINLINE int mutex_trylock_225_here(pthread_mutex_t *m)
{
	int r = trylock_225(m);

	__asm__ volatile("" : : : "memory");
	return r;
}

static NOINLINE int mutex_timedlock_here(pthread_mutex_t *m)
{
	struct timespec ts = in_ms(10);
	int r = pthread_mutex_timedlock(m, &ts);

	__asm__ volatile("" : : : "memory");
	return r;
}

static NOINLINE int mutex_clocklock_here(pthread_mutex_t *m)
{
	struct timespec ts = in_ms(10);
	int r = pthread_mutex_clocklock(m, CLOCK_REALTIME, &ts);

	__asm__ volatile("" : : : "memory");
	return r;
}

static NOINLINE int mutex_unlock_here(pthread_mutex_t *m)
{
	int r = pthread_mutex_unlock(m);

	__asm__ volatile("" : : : "memory");
	return r;
}

/* Never initialised: heap memory filled with a pattern. */
static pthread_mutex_t *pattern_mutex(void)
{
	pthread_mutex_t *m = malloc(sizeof(*m));

	memset(m, PATTERN, sizeof(*m));
	return m;
}

#define MUTEX_CASE(name, fn, op)						\
	static void name(void **state)						\
	{									\
		pthread_mutex_t *m = pattern_mutex();				\
		int r = 0;							\
										\
		(void)state;							\
		errno = 4321;							\
		EXPECT_AT(#fn, r = fn(m), "ODEBUG: " op " not available",	\
			  "object type: pthread_mutex");			\
		assert_int_equal(r, EINVAL);					\
		assert_int_equal(errno, 4321);					\
		free(m);							\
	}
MUTEX_CASE(lock_of_pattern_memory_is_reported, mutex_lock_here, "activate")
MUTEX_CASE(trylock_of_pattern_memory_is_reported, mutex_trylock_here, "activate")
MUTEX_CASE(trylock_225_of_pattern_memory_is_reported, mutex_trylock_225_here, "activate")
MUTEX_CASE(timedlock_of_pattern_memory_is_reported, mutex_timedlock_here, "activate")
MUTEX_CASE(clocklock_of_pattern_memory_is_reported, mutex_clocklock_here, "activate")
MUTEX_CASE(unlock_of_pattern_memory_is_reported, mutex_unlock_here, "unlock")

/*
 * The same memory through each entry point in turn, refilled before each
 * (as a misuse suite plants it): the first report's fixup tracks the
 * memory, and every later call is reported all the same.
 */
static void each_entry_point_on_the_same_memory_is_reported(void **state)
{
	pthread_mutex_t *m = pattern_mutex();
	int (*fns[])(pthread_mutex_t *) = {
		mutex_lock_here, mutex_trylock_here, mutex_timedlock_here,
		mutex_clocklock_here, mutex_unlock_here,
	};

	(void)state;
	EXPECT_REPORTS(5, for (size_t i = 0; i < 5; i++) {
		memset(m, PATTERN, sizeof(*m));
		assert_int_equal(fns[i](m), EINVAL);
	}, "ODEBUG: activate not available", "ODEBUG: unlock not available");
	free(m);
}

/* An initialised mutex overwritten by a pattern: no mutex any more. */
static void initialised_then_overwritten_mutex_is_reported(void **state)
{
	pthread_mutex_t *m = calloc(1, sizeof(*m));

	(void)state;
	pthread_mutex_init(m, NULL);
	pthread_mutex_lock(m);
	pthread_mutex_unlock(m);
	memset(m, PATTERN, sizeof(*m));
	EXPECT_AT("mutex_trylock_here", mutex_trylock_here(m), "ODEBUG: activate not available");
	EXPECT_AT("mutex_unlock_here", mutex_unlock_here(m), "ODEBUG: unlock not available");
	free(m);
}

/* --- condition variables ------------------------------------------------ */

static pthread_mutex_t cm = PTHREAD_MUTEX_INITIALIZER;

/* PTHREAD_COND_INITIALIZER with one byte changed (of __wseq): glibc still works. */
static pthread_cond_t *corrupt_cond(void)
{
	static const pthread_cond_t init = PTHREAD_COND_INITIALIZER;
	pthread_cond_t *c = malloc(sizeof(*c));

	memcpy(c, &init, sizeof(*c));
	((unsigned char *)c)[3] ^= 0x10;
	return c;
}

static NOINLINE int cond_signal_here(pthread_cond_t *c)
{
	int r = pthread_cond_signal(c);

	__asm__ volatile("" : : : "memory");
	return r;
}

static NOINLINE int cond_broadcast_here(pthread_cond_t *c)
{
	int r = pthread_cond_broadcast(c);

	__asm__ volatile("" : : : "memory");
	return r;
}

static NOINLINE int cond_timedwait_here(pthread_cond_t *c)
{
	struct timespec ts = in_ms(1);
	int r;

	pthread_mutex_lock(&cm);
	r = pthread_cond_timedwait(c, &cm, &ts);
	pthread_mutex_unlock(&cm);
	__asm__ volatile("" : : : "memory");
	return r;
}

static NOINLINE int cond_clockwait_here(pthread_cond_t *c)
{
	struct timespec ts;
	int r;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	pthread_mutex_lock(&cm);
	r = pthread_cond_clockwait(c, &cm, CLOCK_MONOTONIC, &ts);
	pthread_mutex_unlock(&cm);
	__asm__ volatile("" : : : "memory");
	return r;
}

static int woken;
static int waiting;	/* cond_wait_here holds cm, about to wait */

/* pthread_cond_wait, until the main thread's broadcasts end it. */
static NOINLINE void *cond_wait_here(void *arg)
{
	int r;

	pthread_mutex_lock(&cm);
	__atomic_store_n(&waiting, 1, __ATOMIC_RELEASE);
	r = pthread_cond_wait(arg, &cm);
	__atomic_store_n(&woken, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&cm);
	__asm__ volatile("" : : : "memory");
	return (void *)(intptr_t)r;
}

static int wait_in_thread(pthread_cond_t *c)
{
	pthread_t t;
	void *r;

	woken = 0;
	waiting = 0;
	pthread_create(&t, NULL, cond_wait_here, c);
	/*
	 * The first broadcast only once the thread is in its wait (it holds
	 * cm until the wait releases it): a broadcast before the wait would
	 * be the first use of the corrupt cond, and reported instead.
	 */
	while (!__atomic_load_n(&waiting, __ATOMIC_ACQUIRE))
		usleep(1000);
	for (int i = 0; i < 2000 && !__atomic_load_n(&woken, __ATOMIC_ACQUIRE); i++) {
		usleep(2000);
		pthread_mutex_lock(&cm);
		pthread_cond_broadcast(c);
		pthread_mutex_unlock(&cm);
	}
	pthread_join(t, &r);
	return (int)(intptr_t)r;
}

#define COND_CASE(name, fn, op, want)						\
	static void name(void **state)						\
	{									\
		pthread_cond_t *c = corrupt_cond();				\
		int r = -1;							\
										\
		(void)state;							\
		EXPECT_AT(#fn, r = fn(c), "ODEBUG: " op " not available",	\
			  "object type: pthread_cond");				\
		assert_int_equal(r, want);					\
		free(c);							\
	}
COND_CASE(signal_of_corrupt_cond_is_reported, cond_signal_here, "signal", 0)
COND_CASE(broadcast_of_corrupt_cond_is_reported, cond_broadcast_here, "broadcast", 0)
COND_CASE(timedwait_on_corrupt_cond_is_reported, cond_timedwait_here, "wait", ETIMEDOUT)
COND_CASE(clockwait_on_corrupt_cond_is_reported, cond_clockwait_here, "wait", ETIMEDOUT)

static void wait_on_corrupt_cond_is_reported(void **state)
{
	pthread_cond_t *c = corrupt_cond();
	int r = -1;

	(void)state;
	/* The broadcasts that end the wait find it tracked now: one report. */
	EXPECT_AT("cond_wait_here", r = wait_in_thread(c), "ODEBUG: wait not available",
		  "object type: pthread_cond");
	assert_int_equal(r, 0);
	free(c);
}

/* --- rwlocks ------------------------------------------------------------ */

static NOINLINE int rwlock_unlock_here(pthread_rwlock_t *rw)
{
	int r = pthread_rwlock_unlock(rw);

	__asm__ volatile("" : : : "memory");
	return r;
}

static void unlock_of_initialised_unheld_rwlock_is_reported(void **state)
{
	pthread_rwlock_t *rw = calloc(1, sizeof(*rw));

	(void)state;
	pthread_rwlock_init(rw, NULL);
	EXPECT_AT("rwlock_unlock_here", rwlock_unlock_here(rw), "ODEBUG: unlock initialized",
		  "object type: pthread_rwlock");
	free(rw);
}

static void unlock_of_static_never_locked_rwlock_is_reported(void **state)
{
	static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;

	(void)state;
	EXPECT_AT("rwlock_unlock_here", rwlock_unlock_here(&rw), "ODEBUG: unlock not available",
		  "object type: pthread_rwlock");
}

/* A reader's second unlock: glibc's rdunlock would wrap the reader count. */
static void second_read_unlock_is_reported(void **state)
{
	pthread_rwlock_t *rw = calloc(1, sizeof(*rw));

	(void)state;
	pthread_rwlock_init(rw, NULL);
	pthread_rwlock_rdlock(rw);
	pthread_rwlock_unlock(rw);
	EXPECT_AT("rwlock_unlock_here", rwlock_unlock_here(rw), "ODEBUG: unlock inactive",
		  "object type: pthread_rwlock");
	free(rw);
}

/* A writer's second unlock: __cur_writer is 0, so glibc takes it for a reader's. */
static void second_write_unlock_is_reported(void **state)
{
	pthread_rwlock_t *rw = calloc(1, sizeof(*rw));

	(void)state;
	pthread_rwlock_init(rw, NULL);
	pthread_rwlock_wrlock(rw);
	pthread_rwlock_unlock(rw);
	EXPECT_AT("rwlock_unlock_here", rwlock_unlock_here(rw), "ODEBUG: unlock inactive",
		  "object type: pthread_rwlock");
	free(rw);
}

static void unlock_of_destroyed_rwlock_is_reported(void **state)
{
	pthread_rwlock_t *rw = calloc(1, sizeof(*rw));

	(void)state;
	pthread_rwlock_init(rw, NULL);
	pthread_rwlock_destroy(rw);
	EXPECT_AT("rwlock_unlock_here", rwlock_unlock_here(rw), "ODEBUG: unlock destroyed",
		  "object type: pthread_rwlock");
	free(rw);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(lock_of_pattern_memory_is_reported),
		cmocka_unit_test(trylock_of_pattern_memory_is_reported),
		cmocka_unit_test(trylock_225_of_pattern_memory_is_reported),
		cmocka_unit_test(timedlock_of_pattern_memory_is_reported),
		cmocka_unit_test(clocklock_of_pattern_memory_is_reported),
		cmocka_unit_test(unlock_of_pattern_memory_is_reported),
		cmocka_unit_test(each_entry_point_on_the_same_memory_is_reported),
		cmocka_unit_test(initialised_then_overwritten_mutex_is_reported),
		cmocka_unit_test(signal_of_corrupt_cond_is_reported),
		cmocka_unit_test(broadcast_of_corrupt_cond_is_reported),
		cmocka_unit_test(wait_on_corrupt_cond_is_reported),
		cmocka_unit_test(timedwait_on_corrupt_cond_is_reported),
		cmocka_unit_test(clockwait_on_corrupt_cond_is_reported),
		cmocka_unit_test(unlock_of_initialised_unheld_rwlock_is_reported),
		cmocka_unit_test(unlock_of_static_never_locked_rwlock_is_reported),
		cmocka_unit_test(second_read_unlock_is_reported),
		cmocka_unit_test(second_write_unlock_is_reported),
		cmocka_unit_test(unlock_of_destroyed_rwlock_is_reported),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
