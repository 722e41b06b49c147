/* SPDX-License-Identifier: MIT */
/* pthread_rwlock, the built-in type: what odebug-pthread(7) says of rwlocks. */
#define _GNU_SOURCE
#include <semaphore.h>
#include <stdio.h>
#include <sys/mman.h>

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

/*
 * A read lock that finds the rwlock settled seals it (glibc's unused
 * __pad2: the address xored with a key of ours), and later read locks and
 * unlocks read the seal instead of the table.  What the seal stands for
 * must hold whenever it is honoured.  (A core without lockless lookups,
 * the benchmarks' kernel-style one, seals nothing: the cases hold there
 * too, by the slow path.)
 */
static unsigned long seal_of(pthread_rwlock_t *rw)
{
	pthread_rwlock_rdlock(rw);	/* the first finds the tracker INIT: not sealed yet */
	pthread_rwlock_unlock(rw);
	pthread_rwlock_rdlock(rw);
	pthread_rwlock_unlock(rw);
	return rw->__data.__pad2;
}

static void use_of_destroyed_sealed_rwlock_is_reported(void **state)
{
	pthread_rwlock_t *rw = calloc(1, sizeof(*rw));

	(void)state;
	pthread_rwlock_init(rw, NULL);
	seal_of(rw);
	pthread_rwlock_destroy(rw);
	assert_int_equal(rw->__data.__pad2, 0);
	EXPECT_REPORT((pthread_rwlock_rdlock(rw), pthread_rwlock_unlock(rw)),
		      "ODEBUG: activate destroyed", "pthread_rwlock");
	free(rw);
}

/* A writer's lock and unlock of a cached rwlock still see a destroy. */
static void write_lock_of_destroyed_cached_rwlock_is_reported(void **state)
{
	pthread_rwlock_t *rw = calloc(1, sizeof(*rw));

	(void)state;
	pthread_rwlock_init(rw, NULL);
	for (int i = 0; i < 3; i++) {
		pthread_rwlock_wrlock(rw);
		assert_int_equal(debug_object_get_state(rw), ODEBUG_STATE_ACTIVE);
		pthread_rwlock_unlock(rw);
		assert_int_equal(debug_object_get_state(rw), ODEBUG_STATE_INACTIVE);
	}
	pthread_rwlock_destroy(rw);
	EXPECT_REPORT((pthread_rwlock_wrlock(rw), pthread_rwlock_unlock(rw)),
		      "ODEBUG: activate destroyed", "pthread_rwlock");
	free(rw);
}

/*
 * Memory released without a destroy (here unmapped) takes the tracker
 * away, and with it every seal: bytes that come back with the seal (a file
 * mapped again) are not an rwlock of ours.  Here they are no rwlock at all.
 */
static void seal_of_released_memory_is_not_honoured(void **state)
{
	pthread_rwlock_t *rw = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned long seal;

	(void)state;
	assert_true(rw != MAP_FAILED);
	pthread_rwlock_init(rw, NULL);
	seal = seal_of(rw);
	EXPECT_SILENT(munmap(rw, 4096));
	assert_true(mmap(rw, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
			 -1, 0) == rw);
	rw->__data.__flags = 77;	/* no flags glibc writes */
	rw->__data.__pad2 = seal;
	EXPECT_REPORT((pthread_rwlock_rdlock(rw), pthread_rwlock_unlock(rw)),
		      "ODEBUG: activate not available", "pthread_rwlock");
	munmap(rw, 4096);
}

/*
 * Another thread's read locks seal an rwlock on this thread's stack; this
 * thread's read holds of it are still counted in its tracker (its frame
 * may return holding one).
 */
static pthread_rwlock_t *handed;

static void *seal_handed(void *arg)
{
	(void)arg;
	seal_of(handed);
	return NULL;
}

static void seal_leaves_the_stack_owners_readers_counted(void **state)
{
	pthread_rwlock_t on_stack;
	pthread_t t;

	(void)state;
	pthread_rwlock_init(&on_stack, NULL);
	handed = &on_stack;
	assert_int_equal(pthread_create(&t, NULL, seal_handed, NULL), 0);
	pthread_join(t, NULL);
	pthread_rwlock_rdlock(&on_stack);
	assert_int_equal(debug_object_get_state(&on_stack), ODEBUG_STATE_ACTIVE);
	pthread_rwlock_unlock(&on_stack);
	assert_int_equal(debug_object_get_state(&on_stack), ODEBUG_STATE_INACTIVE);
	pthread_rwlock_destroy(&on_stack);
}

/*
 * The same from the other side: an rwlock on a new thread's stack, read
 * locked by the main thread while the new thread lives, then by its owner.
 */
static sem_t handed_over, checked;
static int owner_state_held, owner_state_released;

static void *owner_of_stack_rwlock(void *arg)
{
	pthread_rwlock_t on_stack;

	(void)arg;
	pthread_rwlock_init(&on_stack, NULL);
	handed = &on_stack;
	sem_post(&handed_over);
	sem_wait(&checked);
	pthread_rwlock_rdlock(&on_stack);
	owner_state_held = debug_object_get_state(&on_stack);
	pthread_rwlock_unlock(&on_stack);
	owner_state_released = debug_object_get_state(&on_stack);
	pthread_rwlock_destroy(&on_stack);
	return NULL;
}

static void seal_leaves_a_new_threads_stack_rwlock_counted(void **state)
{
	pthread_t t;

	(void)state;
	sem_init(&handed_over, 0, 0);
	sem_init(&checked, 0, 0);
	assert_int_equal(pthread_create(&t, NULL, owner_of_stack_rwlock, NULL), 0);
	sem_wait(&handed_over);
	seal_of(handed);
	sem_post(&checked);
	pthread_join(t, NULL);
	assert_int_equal(owner_state_held, ODEBUG_STATE_ACTIVE);
	assert_int_equal(owner_state_released, ODEBUG_STATE_INACTIVE);
	sem_destroy(&handed_over);
	sem_destroy(&checked);
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
		cmocka_unit_test(use_of_destroyed_sealed_rwlock_is_reported),
		cmocka_unit_test(write_lock_of_destroyed_cached_rwlock_is_reported),
		cmocka_unit_test(seal_of_released_memory_is_not_honoured),
		cmocka_unit_test(seal_leaves_the_stack_owners_readers_counted),
		cmocka_unit_test(seal_leaves_a_new_threads_stack_rwlock_counted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
