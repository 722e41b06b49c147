/* SPDX-License-Identifier: MIT */
/*
 * C11 <threads.h>: glibc implements mtx_* and cnd_* with internal calls,
 * so they have interposers of their own, with the pthread descriptors.
 * Also the nodes: mtx_lock@GLIBC_2.28 is checked, and the pre-2.3.2
 * condition variable ABI (pthread_cond_*@GLIBC_2.2.5) is left alone.
 */
#define _GNU_SOURCE
#include <threads.h>

#include "pt.h"

int mtx_lock_228(mtx_t *m);
__asm__(".symver mtx_lock_228,mtx_lock@GLIBC_2.28");
int old_cond_init(pthread_cond_t *c, const pthread_condattr_t *a);
__asm__(".symver old_cond_init,pthread_cond_init@GLIBC_2.2.5");
int old_cond_destroy(pthread_cond_t *c);
__asm__(".symver old_cond_destroy,pthread_cond_destroy@GLIBC_2.2.5");

static void free_init_destroy_of_held_mtx_are_reported(void **state)
{
	mtx_t *m = calloc(1, sizeof(*m));

	(void)state;
	mtx_init(m, mtx_plain);
	mtx_lock(m);
	EXPECT_REPORT(mtx_init(m, mtx_plain), "ODEBUG: init active", "pthread_mutex");
	mtx_lock_228(m);
	EXPECT_REPORT(mtx_destroy(m), "ODEBUG: destroy active", "pthread_mutex");
	EXPECT_REPORT(free(m), "ODEBUG: free active", "pthread_mutex", "ODEBUG: held by thread");
}

static void use_of_destroyed_mtx_and_unlock_of_unlocked_are_reported(void **state)
{
	mtx_t *m = calloc(1, sizeof(*m));

	(void)state;
	mtx_init(m, mtx_plain);
	EXPECT_REPORT(mtx_unlock(m), "ODEBUG: unlock initialized", "pthread_mutex");
	mtx_init(m, mtx_plain);	/* glibc's unlock of it broke its count */
	mtx_destroy(m);
	EXPECT_REPORT(mtx_lock(m), "ODEBUG: activate destroyed", "pthread_mutex");
	free(m);
}

struct box {
	mtx_t lock;
	cnd_t ready;
	int go;
};

static int waiter(void *arg)
{
	struct box *b = arg;

	mtx_lock(&b->lock);
	while (!b->go) {
		struct timespec ts = in_ms(200);

		cnd_timedwait(&b->ready, &b->lock, &ts);
	}
	mtx_unlock(&b->lock);
	return 0;
}

/* (init and destroy with waiters: the pthread_cond suite, same code.) */
static void cnd_with_a_waiter_and_after_destroy_are_reported(void **state)
{
	struct box *b = calloc(1, sizeof(*b));
	thrd_t t;

	(void)state;
	mtx_init(&b->lock, mtx_plain);
	cnd_init(&b->ready);
	thrd_create(&t, waiter, b);
	wait_state(&b->ready, ODEBUG_STATE_ACTIVE);
	EXPECT_REPORT(debug_check_no_obj_freed(&b->ready, sizeof(b->ready)),
		      "ODEBUG: free active (1 waiter)", "pthread_cond");
	wait_state(&b->ready, ODEBUG_STATE_ACTIVE);	/* its next slice tracks it again */
	mtx_lock(&b->lock);
	b->go = 1;
	cnd_broadcast(&b->ready);
	mtx_unlock(&b->lock);
	thrd_join(t, NULL);
	cnd_destroy(&b->ready);
	EXPECT_REPORT(cnd_signal(&b->ready), "ODEBUG: signal destroyed", "pthread_cond");
	free(b);
}

static void correct_c11_use_is_silent(void **state)
{
	struct box *b = calloc(1, sizeof(*b));
	thrd_t t[2];

	(void)state;
	EXPECT_SILENT({
		mtx_init(&b->lock, mtx_recursive);
		cnd_init(&b->ready);
		for (int i = 0; i < 2; i++)
			thrd_create(&t[i], waiter, b);
		wait_state(&b->ready, ODEBUG_STATE_ACTIVE);
		mtx_lock(&b->lock);
		mtx_lock(&b->lock);	/* recursive */
		b->go = 1;
		cnd_broadcast(&b->ready);
		cnd_destroy(&b->ready);
		mtx_unlock(&b->lock);
		mtx_unlock(&b->lock);
		for (int i = 0; i < 2; i++)
			thrd_join(t[i], NULL);
		assert_int_equal(mtx_trylock(&b->lock), thrd_success);
		mtx_unlock(&b->lock);
		mtx_destroy(&b->lock);
		free(b);
	});
}

static void old_condvar_abi_is_left_alone(void **state)
{
	pthread_cond_t *c = calloc(1, sizeof(*c));

	(void)state;
	EXPECT_SILENT({
		old_cond_init(c, NULL);
		assert_int_equal(debug_object_get_state(c), ODEBUG_STATE_NOTAVAILABLE);
		old_cond_destroy(c);
		free(c);
	});
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(free_init_destroy_of_held_mtx_are_reported),
		cmocka_unit_test(use_of_destroyed_mtx_and_unlock_of_unlocked_are_reported),
		cmocka_unit_test(cnd_with_a_waiter_and_after_destroy_are_reported),
		cmocka_unit_test(correct_c11_use_is_silent),
		cmocka_unit_test(old_condvar_abi_is_left_alone),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
