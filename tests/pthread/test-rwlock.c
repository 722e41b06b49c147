/* SPDX-License-Identifier: MIT */
/* pthread_rwlock, the built-in type: what odebug-pthread(7) says of rwlocks. */
#define _GNU_SOURCE
#include <stdio.h>

#include "pt.h"

int rdlock_225(pthread_rwlock_t *rw);
__asm__(".symver rdlock_225,pthread_rwlock_rdlock@GLIBC_2.2.5");

static void free_of_read_held_rwlock_is_free_active_with_its_readers(void **state)
{
	pthread_rwlock_t *rw = calloc(1, sizeof(*rw));

	(void)state;
	pthread_rwlock_init(rw, NULL);
	pthread_rwlock_rdlock(rw);
	rdlock_225(rw);		/* a second reader, through the 2.2.5 node */
	EXPECT_REPORT(free(rw), "ODEBUG: free active (read-held by 2 threads)", "pthread_rwlock");
}

static void free_of_write_held_rwlock_names_the_writer(void **state)
{
	pthread_rwlock_t *rw = calloc(1, sizeof(*rw));
	char owner[64];

	(void)state;
	pthread_rwlock_wrlock(rw);
	snprintf(owner, sizeof(owner), "ODEBUG: held by thread %d", tid());
	EXPECT_REPORT(free(rw), "ODEBUG: free active (write-held)", "pthread_rwlock", owner);
}

static void init_and_destroy_of_held_rwlock_are_reported(void **state)
{
	pthread_rwlock_t *rw = calloc(1, sizeof(*rw));

	(void)state;
	pthread_rwlock_rdlock(rw);
	EXPECT_REPORT(pthread_rwlock_destroy(rw), "ODEBUG: destroy active", "pthread_rwlock");
	EXPECT_REPORT(pthread_rwlock_init(rw, NULL), "ODEBUG: init active", "pthread_rwlock");
	EXPECT_SILENT((pthread_rwlock_wrlock(rw), pthread_rwlock_unlock(rw), free(rw)));
}

static void use_of_destroyed_rwlock_is_reported(void **state)
{
	pthread_rwlock_t *rw = calloc(1, sizeof(*rw));

	(void)state;
	pthread_rwlock_init(rw, NULL);
	pthread_rwlock_destroy(rw);
	EXPECT_REPORT((pthread_rwlock_rdlock(rw), pthread_rwlock_unlock(rw)),
		      "ODEBUG: activate destroyed", "pthread_rwlock");
	EXPECT_REPORT(pthread_rwlock_destroy(rw), "ODEBUG: destroy destroyed");
	free(rw);
}

static void lock_of_memory_that_holds_no_rwlock_is_reported(void **state)
{
	pthread_rwlock_t *rw = malloc(sizeof(*rw));

	(void)state;
	memset(rw, 0, sizeof(*rw));
	rw->__data.__flags = 77;	/* no flags glibc writes */
	EXPECT_REPORT((pthread_rwlock_wrlock(rw), pthread_rwlock_unlock(rw)),
		      "ODEBUG: activate not available", "pthread_rwlock");
	free(rw);
}

static pthread_rwlock_t shared = PTHREAD_RWLOCK_INITIALIZER;
static int inside;

static void *reader(void *arg)
{
	(void)arg;
	for (int i = 0; i < 2000; i++) {
		pthread_rwlock_rdlock(&shared);
		__atomic_add_fetch(&inside, 1, __ATOMIC_RELAXED);
		sched_yield();
		__atomic_sub_fetch(&inside, 1, __ATOMIC_RELAXED);
		pthread_rwlock_unlock(&shared);
		if (i % 100 == 0) {
			pthread_rwlock_wrlock(&shared);
			pthread_rwlock_unlock(&shared);
		}
	}
	return NULL;
}

static void many_concurrent_readers_and_trylock_failures_are_silent(void **state)
{
	pthread_t t[4];

	(void)state;
	EXPECT_SILENT({
		for (int i = 0; i < 4; i++)
			pthread_create(&t[i], NULL, reader, NULL);
		for (int i = 0; i < 4; i++)
			pthread_join(t[i], NULL);
		pthread_rwlock_rdlock(&shared);
		assert_int_equal(pthread_rwlock_trywrlock(&shared), EBUSY);
		pthread_rwlock_unlock(&shared);
		pthread_rwlock_wrlock(&shared);
		assert_int_equal(pthread_rwlock_tryrdlock(&shared), EBUSY);
		pthread_rwlock_unlock(&shared);
	});
	assert_int_equal(debug_object_get_state(&shared), ODEBUG_STATE_INACTIVE);
}

static void reinit_after_destroy_and_free_unlocked_are_silent(void **state)
{
	(void)state;
	EXPECT_SILENT({
		pthread_rwlock_t *rw = malloc(sizeof(*rw));

		pthread_rwlock_init(rw, NULL);
		pthread_rwlock_destroy(rw);
		pthread_rwlock_init(rw, NULL);
		pthread_rwlock_rdlock(rw);
		pthread_rwlock_unlock(rw);
		free(rw);
	});
}

/*
 * A read hold is glibc's (__readers): the tracker is not written by the
 * read lock (INACTIVE between checks), and the checks read the readers
 * glibc counts.  On the reader's own stack the tracker counts them.
 */
static void read_holds_live_in_glibcs_words(void **state)
{
	pthread_rwlock_t *rw = calloc(1, sizeof(*rw)), on_stack;

	(void)state;
	pthread_rwlock_init(rw, NULL);
	pthread_rwlock_wrlock(rw);	/* INIT -> ACTIVE -> INACTIVE */
	pthread_rwlock_unlock(rw);
	pthread_rwlock_rdlock(rw);
	pthread_rwlock_rdlock(rw);
	assert_int_equal(debug_object_get_state(rw), ODEBUG_STATE_INACTIVE);
	pthread_rwlock_unlock(rw);
	EXPECT_REPORT(debug_check_no_obj_freed(rw, sizeof(*rw)),
		      "ODEBUG: free active (read-held by 1 thread)", "pthread_rwlock");
	pthread_rwlock_unlock(rw);
	free(rw);

	pthread_rwlock_init(&on_stack, NULL);
	pthread_rwlock_rdlock(&on_stack);
	assert_int_equal(debug_object_get_state(&on_stack), ODEBUG_STATE_ACTIVE);
	pthread_rwlock_unlock(&on_stack);
	assert_int_equal(debug_object_get_state(&on_stack), ODEBUG_STATE_INACTIVE);
	pthread_rwlock_destroy(&on_stack);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(free_of_read_held_rwlock_is_free_active_with_its_readers),
		cmocka_unit_test(free_of_write_held_rwlock_names_the_writer),
		cmocka_unit_test(init_and_destroy_of_held_rwlock_are_reported),
		cmocka_unit_test(use_of_destroyed_rwlock_is_reported),
		cmocka_unit_test(lock_of_memory_that_holds_no_rwlock_is_reported),
		cmocka_unit_test(many_concurrent_readers_and_trylock_failures_are_silent),
		cmocka_unit_test(reinit_after_destroy_and_free_unlocked_are_silent),
		cmocka_unit_test(read_holds_live_in_glibcs_words),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
