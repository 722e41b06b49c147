/* SPDX-License-Identifier: MIT */
/* sem, the built-in type: what odebug-pthread(7) says of semaphores (check_sem). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <semaphore.h>
#include <stdio.h>

#include "pt.h"

int post_225(sem_t *s);
__asm__(".symver post_225,sem_post@GLIBC_2.2.5");

/* Waits in slices: a re-initialised semaphore forgets its waiters' wake-ups. */
static void *take(void *arg)
{
	for (;;) {
		struct timespec ts = in_ms(100);

		if (!sem_timedwait(arg, &ts))
			return NULL;
	}
}

static void *take_forever(void *arg)
{
	while (sem_wait(arg) && errno == EINTR)
		;
	return NULL;
}

static void free_init_destroy_with_a_waiter_are_reported(void **state)
{
	sem_t *s = calloc(1, sizeof(*s));
	pthread_t t;

	(void)state;
	sem_init(s, 0, 0);
	pthread_create(&t, NULL, take, s);
	wait_state(s, ODEBUG_STATE_ACTIVE);
	EXPECT_REPORT(debug_check_no_obj_freed(s, sizeof(*s)),
		      "ODEBUG: free active (1 waiter)", "object type: sem");
	post_225(s);
	pthread_join(t, NULL);
	pthread_create(&t, NULL, take, s);
	wait_state(s, ODEBUG_STATE_ACTIVE);
	EXPECT_REPORT(sem_destroy(s), "ODEBUG: destroy active", "object type: sem");
	/* glibc destroyed nothing: the waiter is still there; init again. */
	EXPECT_REPORT(sem_init(s, 0, 0), "ODEBUG: init active", "object type: sem");
	post_225(s);
	pthread_join(t, NULL);
	free(s);
}

static void use_of_destroyed_sem_is_reported(void **state)
{
	sem_t *s = calloc(1, sizeof(*s));
	int r = 0;

	(void)state;
	sem_init(s, 0, 1);
	sem_destroy(s);
	EXPECT_REPORT(sem_post(s), "ODEBUG: post destroyed", "object type: sem");
	EXPECT_REPORT(r = sem_trywait(s), "ODEBUG: activate destroyed");
	assert_int_equal(r, 0);
	free(s);
}

static void close_of_named_sem_still_waited_on_is_free_active(void **state)
{
	char name[64];
	sem_t *s, *again;
	pthread_t t;

	(void)state;
	snprintf(name, sizeof(name), "/odebug-test-%d", getpid());
	s = sem_open(name, O_CREAT | O_EXCL, 0600, 0);
	assert_true(s != SEM_FAILED);
	again = sem_open(name, 0);	/* the same mapping, a second reference */
	assert_ptr_equal(again, s);
	sem_unlink(name);
	pthread_create(&t, NULL, take, s);
	wait_state(s, ODEBUG_STATE_ACTIVE);
	EXPECT_REPORT(sem_close(again), "ODEBUG: free active", "object type: sem");
	/* Closed, but the waiter keeps its mapping alive until it is woken. */
	sem_post(s);
	pthread_join(t, NULL);
	sem_close(s);
}

static void post_then_destroy_cancelled_waiter_and_reopen_are_silent(void **state)
{
	sem_t *s = calloc(1, sizeof(*s));
	char name[64];
	pthread_t t;

	(void)state;
	EXPECT_SILENT({
		sem_init(s, 0, 0);
		pthread_create(&t, NULL, take, s);
		wait_state(s, ODEBUG_STATE_ACTIVE);
		sem_post(s);		/* the waiter is no longer blocked: */
		sem_destroy(s);		/* destroying it now is allowed */
		pthread_join(t, NULL);
		sem_init(s, 0, 0);
		pthread_create(&t, NULL, take_forever, s);
		wait_state(s, ODEBUG_STATE_ACTIVE);
		pthread_cancel(t);	/* cancelled inside sem_wait */
		pthread_join(t, NULL);
		sem_destroy(s);
		free(s);
		snprintf(name, sizeof(name), "/odebug-test2-%d", getpid());
		sem_t *a = sem_open(name, O_CREAT, 0600, 1);
		sem_t *b = sem_open(name, 0);
		sem_wait(a);
		sem_post(b);
		sem_close(b);
		sem_close(a);
		sem_unlink(name);
	});
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(free_init_destroy_with_a_waiter_are_reported),
		cmocka_unit_test(use_of_destroyed_sem_is_reported),
		cmocka_unit_test(close_of_named_sem_still_waited_on_is_free_active),
		cmocka_unit_test(post_then_destroy_cancelled_waiter_and_reopen_are_silent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
