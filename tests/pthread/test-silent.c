/* SPDX-License-Identifier: MIT */
/*
 * Correct uses next to the misuse classes of test-misuse.c, each silent:
 * zero-filled memory as a default mutex and condition variable, a mutex
 * re-initialised after destroy, glibc's internal rwlocks, many readers
 * with recursive read locks, a reader that upgrades by unlocking and
 * taking the write lock, and a robust mutex's EOWNERDEAD path through
 * every lock call.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <locale.h>
#include <netdb.h>
#include <pwd.h>
#include <stdio.h>
#include <time.h>

#include "pt.h"

static void zero_filled_memory_is_a_default_mutex_and_cond(void **state)
{
	struct { pthread_mutex_t m; pthread_cond_t c; } *z = calloc(1, sizeof(*z));

	(void)state;
	EXPECT_SILENT({
		struct timespec ts = in_ms(1);

		assert_int_equal(pthread_cond_signal(&z->c), 0);
		assert_int_equal(pthread_cond_broadcast(&z->c), 0);
		assert_int_equal(pthread_mutex_trylock(&z->m), 0);
		assert_int_equal(pthread_cond_timedwait(&z->c, &z->m, &ts), ETIMEDOUT);
		assert_int_equal(pthread_mutex_unlock(&z->m), 0);
		ts = in_ms(1);
		assert_int_equal(pthread_mutex_timedlock(&z->m, &ts), 0);
		assert_int_equal(pthread_cond_signal(&z->c), 0);
		assert_int_equal(pthread_mutex_unlock(&z->m), 0);
		pthread_cond_destroy(&z->c);
		pthread_mutex_destroy(&z->m);
		free(z);
	});
}

static void mutex_reinitialised_after_destroy_is_silent(void **state)
{
	pthread_mutex_t *m = calloc(1, sizeof(*m));

	(void)state;
	EXPECT_SILENT({
		pthread_mutexattr_t a;
		struct timespec ts = in_ms(10);

		pthread_mutex_init(m, NULL);
		pthread_mutex_lock(m);
		pthread_mutex_unlock(m);
		pthread_mutex_destroy(m);	/* glibc's kind is -1 now: no mutex */
		pthread_mutexattr_init(&a);
		pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
		pthread_mutex_init(m, &a);
		assert_int_equal(pthread_mutex_trylock(m), 0);
		assert_int_equal(pthread_mutex_unlock(m), 0);
		assert_int_equal(pthread_mutex_timedlock(m, &ts), 0);
		assert_int_equal(pthread_mutex_unlock(m), 0);
		pthread_mutex_destroy(m);
		free(m);
	});
}

static int phdr_seen(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)info, (void)size;
	++*(int *)arg;
	return 0;
}

/* glibc's own rwlocks (the locale lock, the loader's): none passes us. */
static void *glibc_rwlock_user(void *arg)
{
	(void)arg;
	for (int i = 0; i < 200; i++) {
		locale_t l = newlocale(LC_ALL_MASK, "C", (locale_t)0);
		int n = 0;

		freelocale(l);
		setlocale(LC_ALL, NULL);
		dl_iterate_phdr(phdr_seen, &n);
		getpwuid(0);
		if (i % 50 == 0)
			dlclose(dlopen("libm.so.6", RTLD_NOW));
	}
	return NULL;
}

static void glibc_internal_rwlocks_are_silent(void **state)
{
	pthread_t t[3];

	(void)state;
	EXPECT_SILENT({
		for (int i = 0; i < 3; i++)
			pthread_create(&t[i], NULL, glibc_rwlock_user, NULL);
		for (int i = 0; i < 3; i++)
			pthread_join(t[i], NULL);
	});
}

static pthread_rwlock_t shared = PTHREAD_RWLOCK_INITIALIZER;

/* Recursive read locks: each reader holds it three times at once. */
static void *recursive_reader(void *arg)
{
	(void)arg;
	for (int i = 0; i < 2000; i++) {
		pthread_rwlock_rdlock(&shared);
		pthread_rwlock_tryrdlock(&shared);
		pthread_rwlock_rdlock(&shared);
		sched_yield();
		for (int j = 0; j < 3; j++)
			pthread_rwlock_unlock(&shared);
	}
	return NULL;
}

static void many_readers_with_recursive_read_locks_are_silent(void **state)
{
	pthread_t t[6];

	(void)state;
	EXPECT_SILENT({
		for (int i = 0; i < 6; i++)
			pthread_create(&t[i], NULL, recursive_reader, NULL);
		for (int i = 0; i < 6; i++)
			pthread_join(t[i], NULL);
	});
	assert_true(debug_object_get_state(&shared) == ODEBUG_STATE_INACTIVE ||
		    debug_object_get_state(&shared) == ODEBUG_STATE_INIT);
}

static pthread_rwlock_t upgraded = PTHREAD_RWLOCK_INITIALIZER;
static int value;

/* Read, then upgrade by unlocking and taking the write lock, then read again. */
static void *upgrader(void *arg)
{
	(void)arg;
	for (int i = 0; i < 2000; i++) {
		int seen;

		pthread_rwlock_rdlock(&upgraded);
		seen = value;
		pthread_rwlock_unlock(&upgraded);
		pthread_rwlock_wrlock(&upgraded);
		if (value == seen)
			value++;
		pthread_rwlock_unlock(&upgraded);
	}
	return NULL;
}

static void reader_upgrading_by_unlock_and_wrlock_is_silent(void **state)
{
	pthread_t t[4];

	(void)state;
	EXPECT_SILENT({
		for (int i = 0; i < 4; i++)
			pthread_create(&t[i], NULL, upgrader, NULL);
		for (int i = 0; i < 4; i++)
			pthread_join(t[i], NULL);
		pthread_rwlock_destroy(&upgraded);
	});
}

static void *die_holding(void *arg)
{
	pthread_mutex_lock(arg);
	return NULL;
}

/* EOWNERDEAD from lock, trylock and timedlock: the dead owner's hold is ours. */
static void robust_owner_died_through_every_lock_call_is_silent(void **state)
{
	pthread_mutex_t *m = calloc(1, sizeof(*m));

	(void)state;
	EXPECT_SILENT({
		pthread_mutexattr_t a;

		pthread_mutexattr_init(&a);
		pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
		pthread_mutex_init(m, &a);
		for (int i = 0; i < 3; i++) {
			struct timespec ts = in_ms(100);
			pthread_t t;
			int r;

			pthread_create(&t, NULL, die_holding, m);
			pthread_join(t, NULL);
			r = i == 0 ? pthread_mutex_lock(m) :
			    i == 1 ? pthread_mutex_trylock(m) : pthread_mutex_timedlock(m, &ts);
			assert_int_equal(r, EOWNERDEAD);
			pthread_mutex_consistent(m);
			pthread_mutex_unlock(m);
		}
		pthread_mutex_destroy(m);
		free(m);
	});
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(zero_filled_memory_is_a_default_mutex_and_cond),
		cmocka_unit_test(mutex_reinitialised_after_destroy_is_silent),
		cmocka_unit_test(glibc_internal_rwlocks_are_silent),
		cmocka_unit_test(many_readers_with_recursive_read_locks_are_silent),
		cmocka_unit_test(reader_upgrading_by_unlock_and_wrlock_is_silent),
		cmocka_unit_test(robust_owner_died_through_every_lock_call_is_silent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
