/* SPDX-License-Identifier: MIT */
/* pthread_spinlock, the built-in type: what odebug-pthread(7) says of spinlocks. */
#define _GNU_SOURCE
#include "pt.h"

int spin_lock_225(pthread_spinlock_t *l);
__asm__(".symver spin_lock_225,pthread_spin_lock@GLIBC_2.2.5");
int spin_unlock_225(pthread_spinlock_t *l);
__asm__(".symver spin_unlock_225,pthread_spin_unlock@GLIBC_2.2.5");

struct counter {
	pthread_spinlock_t lock;
	long n;
};

static void free_init_destroy_of_held_spinlock_are_reported(void **state)
{
	struct counter *c = calloc(1, sizeof(*c));

	(void)state;
	pthread_spin_init(&c->lock, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_lock(&c->lock);
	EXPECT_REPORT(pthread_spin_destroy(&c->lock), "ODEBUG: destroy active", "pthread_spinlock");
	EXPECT_REPORT(pthread_spin_init(&c->lock, 0), "ODEBUG: init active", "pthread_spinlock");
	spin_lock_225(&c->lock);	/* the 2.2.5 node is checked too */
	EXPECT_REPORT(free(c), "ODEBUG: free active", "pthread_spinlock");
}

static void use_of_destroyed_spinlock_is_reported(void **state)
{
	pthread_spinlock_t *l = calloc(1, sizeof(*l));

	(void)state;
	pthread_spin_init(l, 0);
	pthread_spin_destroy(l);
	EXPECT_REPORT(pthread_spin_lock(l), "ODEBUG: activate destroyed", "pthread_spinlock");
	EXPECT_REPORT(pthread_spin_unlock(l), "ODEBUG: unlock destroyed");
	free((void *)l);
}

static struct counter shared;

static void *count(void *arg)
{
	(void)arg;
	for (int i = 0; i < 20000; i++) {
		if (pthread_spin_trylock(&shared.lock))
			pthread_spin_lock(&shared.lock);
		shared.n++;
		pthread_spin_unlock(&shared.lock);
	}
	return NULL;
}

static void contended_use_trylock_failures_and_reinit_are_silent(void **state)
{
	pthread_t t[3];

	(void)state;
	EXPECT_SILENT({
		pthread_spin_init(&shared.lock, 0);
		for (int i = 0; i < 3; i++)
			pthread_create(&t[i], NULL, count, NULL);
		for (int i = 0; i < 3; i++)
			pthread_join(t[i], NULL);
		pthread_spin_lock(&shared.lock);
		assert_int_equal(pthread_spin_trylock(&shared.lock), EBUSY);
		spin_unlock_225(&shared.lock);
		pthread_spin_destroy(&shared.lock);
		pthread_spin_init(&shared.lock, 0);
	});
	assert_int_equal(shared.n, 60000);
	assert_int_equal(debug_object_get_state((void *)&shared.lock), ODEBUG_STATE_INIT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(free_init_destroy_of_held_spinlock_are_reported),
		cmocka_unit_test(use_of_destroyed_spinlock_is_reported),
		cmocka_unit_test(contended_use_trylock_failures_and_reinit_are_silent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
