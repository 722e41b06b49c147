/* SPDX-License-Identifier: MIT */
/*
 * pthread_mutex: the hold lives in glibc's words, not in the tracker
 * (lib/checks/builtin/builtin.c's header).  Each case warms the lock path first, so the
 * locks and unlocks checked are the ones that write nothing of ours (the
 * per-thread cache hits), then asserts that what the table decides from
 * the synced state is right both ways: a hold it never saw written is
 * reported, a hold that ended unseen is not.
 */
#define _GNU_SOURCE
#include <stdio.h>

#include "pt.h"

static void warm(pthread_mutex_t *m)
{
	for (int i = 0; i < 100; i++) {
		assert_int_equal(pthread_mutex_lock(m), 0);
		assert_int_equal(pthread_mutex_unlock(m), 0);
	}
}

struct box {
	long id;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int go, waiting;
};

static struct box *shared;
static int holder;

static void *hold_until_go(void *arg)
{
	struct box *b = arg;

	warm(&b->lock);
	pthread_mutex_lock(&b->lock);
	__atomic_store_n(&holder, tid(), __ATOMIC_RELEASE);
	while (!__atomic_load_n(&b->go, __ATOMIC_ACQUIRE))
		usleep(1000);
	pthread_mutex_unlock(&b->lock);
	return NULL;
}

/* Another thread's hold, taken on the write-free path: free active, with its owner. */
static void free_while_another_thread_holds_is_reported_with_owner(void **state)
{
	char owner[64];
	pthread_t t;

	(void)state;
	shared = calloc(1, sizeof(*shared));
	pthread_mutex_init(&shared->lock, NULL);
	holder = 0;
	pthread_create(&t, NULL, hold_until_go, shared);
	while (!__atomic_load_n(&holder, __ATOMIC_ACQUIRE))
		usleep(1000);
	snprintf(owner, sizeof(owner), "ODEBUG: held by thread %d", holder);
	EXPECT_REPORT(debug_check_no_obj_freed(shared, sizeof(*shared)),
		      "ODEBUG: free active", "object type: pthread_mutex", owner);
	__atomic_store_n(&shared->go, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	/* Released since (unseen by the table): the next free is silent. */
	pthread_mutex_init(&shared->lock, NULL);
	warm(&shared->lock);
	EXPECT_SILENT(free(shared));
}

/*
 * The table said ACTIVE (destroy of a held mutex syncs it), then the
 * unlock wrote nothing: the free that follows syncs back to INACTIVE and
 * is silent; so is a second unlock's report ("unlock inactive").
 */
static void hold_that_ended_unseen_is_not_reported(void **state)
{
	pthread_mutex_t *m = calloc(1, sizeof(*m)), *n = calloc(1, sizeof(*n));
	int r = 0;

	(void)state;
	pthread_mutex_init(m, NULL);
	warm(m);
	pthread_mutex_lock(m);
	EXPECT_REPORT(r = pthread_mutex_destroy(m), "ODEBUG: destroy active");
	assert_int_equal(r, EBUSY);
	assert_int_equal(debug_object_get_state(m), ODEBUG_STATE_ACTIVE);
	pthread_mutex_unlock(m);
	EXPECT_SILENT(free(m));

	warm(n);
	pthread_mutex_lock(n);
	EXPECT_REPORT(pthread_mutex_destroy(n), "ODEBUG: destroy active");
	pthread_mutex_unlock(n);
	EXPECT_REPORT(pthread_mutex_unlock(n), "ODEBUG: unlock inactive");
	free(n);
}

static void held_at_init_and_destroyed_then_locked_after_warm_locks(void **state)
{
	pthread_mutex_t *m = calloc(1, sizeof(*m));
	int r = 0;

	(void)state;
	warm(m);
	pthread_mutex_lock(m);
	EXPECT_REPORT(pthread_mutex_init(m, NULL), "ODEBUG: init active", "pthread_mutex");
	warm(m);
	pthread_mutex_destroy(m);
	EXPECT_REPORT(r = pthread_mutex_lock(m), "ODEBUG: activate destroyed");
	assert_int_equal(r, EINVAL);
	EXPECT_REPORT(pthread_mutex_unlock(m), "ODEBUG: unlock destroyed");
	pthread_mutex_init(m, NULL);	/* POSIX allows it */
	EXPECT_SILENT(warm(m));
	pthread_mutex_lock(m);
	EXPECT_REPORT(free(m), "ODEBUG: free active");
}

static void recursive_hold_is_reported_until_the_last_unlock(void **state)
{
	pthread_mutex_t *m = calloc(1, sizeof(*m));
	pthread_mutexattr_t a;

	(void)state;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(m, &a);
	warm(m);
	for (int i = 0; i < 3; i++)
		pthread_mutex_lock(m);
	EXPECT_REPORT(debug_check_no_obj_freed(m, sizeof(*m)), "ODEBUG: free active");
	pthread_mutex_init(m, &a);	/* the check above dropped its tracker */
	for (int i = 0; i < 3; i++)
		pthread_mutex_lock(m);
	for (int i = 0; i < 2; i++)
		pthread_mutex_unlock(m);
	EXPECT_REPORT(debug_check_no_obj_freed(m, sizeof(*m)), "ODEBUG: free active");
	pthread_mutex_init(m, &a);
	for (int i = 0; i < 3; i++)
		pthread_mutex_lock(m);
	for (int i = 0; i < 3; i++)
		pthread_mutex_unlock(m);
	EXPECT_SILENT(free(m));
}

/*
 * A released mutex's tracker goes; a new mutex at the same address
 * (zeroed, never initialised: a default mutex) must be tracked again, not
 * pass on the old tracker's cache entry.  The memory is released as a
 * custom allocator does it, so that the address is the same for sure.
 */
static void new_mutex_at_a_released_ones_address_is_tracked_again(void **state)
{
	pthread_mutex_t *m = calloc(1, sizeof(*m));

	(void)state;
	pthread_mutex_init(m, NULL);
	warm(m);
	EXPECT_SILENT(debug_check_no_obj_freed(m, sizeof(*m)));
	memset(m, 0, sizeof(*m));
	assert_int_equal(debug_object_get_state(m), ODEBUG_STATE_NOTAVAILABLE);
	EXPECT_SILENT(warm(m));
	assert_int_equal(debug_object_get_state(m), ODEBUG_STATE_INACTIVE);
	pthread_mutex_lock(m);
	EXPECT_REPORT(free(m), "ODEBUG: free active");
}

static pthread_mutex_t *reinit;
static int c_warm, c_lock, c_held, c_go;

static void *warm_then_hold(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&c_warm, __ATOMIC_ACQUIRE))
		usleep(1000);
	warm(reinit);
	__atomic_store_n(&c_warm, 2, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&c_lock, __ATOMIC_ACQUIRE))
		usleep(1000);
	pthread_mutex_lock(reinit);
	__atomic_store_n(&c_held, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&c_go, __ATOMIC_ACQUIRE))
		usleep(1000);
	pthread_mutex_unlock(reinit);
	return NULL;
}

/*
 * A mutex another thread knows (its cache has the tracker) re-initialised
 * process-shared: that thread's hold is now kept in the tracker, and seen.
 */
static void reinitialised_process_shared_is_tracked_in_every_thread(void **state)
{
	pthread_mutexattr_t a;
	pthread_t t;

	(void)state;
	reinit = calloc(1, sizeof(*reinit));
	pthread_mutex_init(reinit, NULL);
	pthread_create(&t, NULL, warm_then_hold, NULL);
	__atomic_store_n(&c_warm, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&c_warm, __ATOMIC_ACQUIRE) != 2)
		usleep(1000);
	pthread_mutex_destroy(reinit);
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutex_init(reinit, &a);
	warm(reinit);
	__atomic_store_n(&c_lock, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&c_held, __ATOMIC_ACQUIRE))
		usleep(1000);
	EXPECT_REPORT(debug_check_no_obj_freed(reinit, sizeof(*reinit)), "ODEBUG: free active");
	__atomic_store_n(&c_go, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	free(reinit);
}

static void *wait_in_box(void *arg)
{
	struct box *b = arg;

	pthread_mutex_lock(&b->lock);
	__atomic_store_n(&b->waiting, 1, __ATOMIC_RELEASE);
	while (!b->go)
		pthread_cond_wait(&b->cond, &b->lock);
	pthread_mutex_unlock(&b->lock);
	return NULL;
}

/* Inside pthread_cond_wait glibc released the mutex: it is not held. */
static void mutex_released_inside_cond_wait_is_not_held(void **state)
{
	struct box *b = calloc(1, sizeof(*b));
	pthread_t t;

	(void)state;
	pthread_mutex_init(&b->lock, NULL);
	pthread_cond_init(&b->cond, NULL);
	warm(&b->lock);
	pthread_create(&t, NULL, wait_in_box, b);
	while (!__atomic_load_n(&b->waiting, __ATOMIC_ACQUIRE))
		usleep(1000);
	wait_state(&b->cond, ODEBUG_STATE_ACTIVE);
	/* The mutex only (the condition variable has a waiter). */
	EXPECT_SILENT(debug_check_no_obj_freed(&b->lock, sizeof(b->lock)));
	pthread_mutex_init(&b->lock, NULL);	/* its tracker went with the check */
	pthread_mutex_lock(&b->lock);
	b->go = 1;
	pthread_cond_signal(&b->cond);
	pthread_mutex_unlock(&b->lock);
	pthread_join(t, NULL);
	EXPECT_SILENT(free(b));
}

/* A stack mutex keeps its hold in the tracker: its frame is dead at thread exit. */
static void *hold_on_stack_and_exit(void *arg)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

	(void)arg;
	warm(&m);
	pthread_mutex_lock(&m);
	return NULL;
}

static void stack_mutex_held_at_thread_exit_after_warm_locks(void **state)
{
	pthread_t t;

	(void)state;
	EXPECT_REPORT((pthread_create(&t, NULL, hold_on_stack_and_exit, NULL),
		       pthread_join(t, NULL)), "active", "pthread_mutex");
}

/*
 * A mutex never destroyed (glibc's destroy does nothing, std::mutex's is
 * trivial), its memory reused for other data: at its free, or at a new
 * init over it, the tracker is INACTIVE and the kernel's rule is silence.
 * The data is read as the mutex's words there, so data that looks like a
 * lock word (1) beside an owner id must not pass for a hold: glibc's user
 * count (__nusers) is 0, or the owner is no thread of this process.
 * (On 6c240c6 the first and third cases printed "free active" and
 * "init active ... held by thread 42".)
 */
struct record {
	int refcount;
	unsigned int flags;
	int id;
	unsigned int users;
	int type;
	int pad[5];
};

static void *tid_of_thread(void *arg)
{
	*(int *)arg = (int)syscall(SYS_gettid);
	return NULL;
}

static void reused_memory_is_not_a_held_mutex(void **state)
{
	static char arena[sizeof(pthread_mutex_t)] __attribute__((aligned(64)));
	pthread_mutex_t *m = malloc(sizeof(*m)), *slot = (pthread_mutex_t *)arena;
	struct record *r = (struct record *)m;
	pthread_t t;
	int gone = 0;

	(void)state;
	/* Freed: a lock word and an owner id, no user count. */
	pthread_mutex_init(m, NULL);
	warm(m);
	memset(r, 0, sizeof(*r));
	r->refcount = 1;
	r->id = 42;
	EXPECT_SILENT(free(m));

	/* Freed: a user count too, but the owner is a thread that has gone. */
	pthread_create(&t, NULL, tid_of_thread, &gone);
	pthread_join(t, NULL);
	m = malloc(sizeof(*m));
	r = (struct record *)m;
	pthread_mutex_init(m, NULL);
	warm(m);
	memset(r, 0, sizeof(*r));
	r->refcount = 1;
	r->id = gone;
	r->users = 1;
	EXPECT_SILENT(free(m));

	/* Initialised again over the record (a custom allocator's slot). */
	pthread_mutex_init(slot, NULL);
	warm(slot);
	r = (struct record *)(void *)arena;
	memset(r, 0, sizeof(*r));
	r->refcount = 1;
	r->id = 42;
	EXPECT_SILENT(pthread_mutex_init(slot, NULL));
	pthread_mutex_destroy(slot);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(free_while_another_thread_holds_is_reported_with_owner),
		cmocka_unit_test(hold_that_ended_unseen_is_not_reported),
		cmocka_unit_test(held_at_init_and_destroyed_then_locked_after_warm_locks),
		cmocka_unit_test(recursive_hold_is_reported_until_the_last_unlock),
		cmocka_unit_test(new_mutex_at_a_released_ones_address_is_tracked_again),
		cmocka_unit_test(reinitialised_process_shared_is_tracked_in_every_thread),
		cmocka_unit_test(mutex_released_inside_cond_wait_is_not_held),
		cmocka_unit_test(stack_mutex_held_at_thread_exit_after_warm_locks),
		cmocka_unit_test(reused_memory_is_not_a_held_mutex),
	};

	(void)argc;
	(void)argv;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
