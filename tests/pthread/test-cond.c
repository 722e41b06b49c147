/* SPDX-License-Identifier: MIT */
/* pthread_cond, the built-in type: what odebug-pthread(7) says of condition variables. */
#define _GNU_SOURCE
#include <stdio.h>

#include "pt.h"

struct box {
	pthread_mutex_t lock;
	pthread_cond_t ready;
	int go, waiting;
};

/* Waits (in slices, so that a broken condvar cannot hang the suite). */
static void *waiter(void *arg)
{
	struct box *b = arg;

	pthread_mutex_lock(&b->lock);
	b->waiting++;
	while (!b->go) {
		struct timespec ts = in_ms(200);

		pthread_cond_timedwait(&b->ready, &b->lock, &ts);
	}
	b->waiting--;
	pthread_mutex_unlock(&b->lock);
	return NULL;
}

static void release_all(struct box *b, pthread_t *t, int n)
{
	pthread_mutex_lock(&b->lock);
	b->go = 1;
	pthread_cond_broadcast(&b->ready);
	pthread_mutex_unlock(&b->lock);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
}

static void free_init_destroy_with_a_waiter_are_reported(void **state)
{
	struct box *b = calloc(1, sizeof(*b));
	pthread_t t;

	(void)state;
	pthread_cond_init(&b->ready, NULL);
	pthread_create(&t, NULL, waiter, b);
	wait_state(&b->ready, ODEBUG_STATE_ACTIVE);
	EXPECT_REPORT(debug_check_no_obj_freed(&b->ready, sizeof(b->ready)),
		      "ODEBUG: free active (1 waiter)", "pthread_cond");
	/* The check dropped the tracker: the waiter's next wait tracks it again. */
	wait_state(&b->ready, ODEBUG_STATE_ACTIVE);
	EXPECT_REPORT(pthread_cond_init(&b->ready, NULL), "ODEBUG: init active", "pthread_cond");
	wait_state(&b->ready, ODEBUG_STATE_ACTIVE);
	pthread_mutex_lock(&b->lock);
	b->go = 1;
	pthread_mutex_unlock(&b->lock);
	/* glibc's destroy waits for the waiter to leave (its timed wait ends). */
	EXPECT_REPORT(pthread_cond_destroy(&b->ready), "ODEBUG: destroy active", "pthread_cond");
	pthread_join(t, NULL);
	free(b);
}

/* Waits without a timeout, named, its thread id published. */
static int sleeper_tid;
static void *sleeper(void *arg)
{
	struct box *b = arg;

	pthread_setname_np(pthread_self(), "cond-sleeper");
	pthread_mutex_lock(&b->lock);
	__atomic_store_n(&sleeper_tid, tid(), __ATOMIC_RELEASE);
	while (!b->go)
		pthread_cond_wait(&b->ready, &b->lock);
	pthread_mutex_unlock(&b->lock);
	return NULL;
}

/*
 * The report of a cond freed with a waiter says "1 waiter" (not "active
 * state 1") and names the thread asleep on it, as the kernel shows it;
 * no "hint: 0x0" for a type without a hint.
 */
static void freed_cond_names_its_waiting_thread(void **state)
{
	struct box *b = calloc(1, sizeof(*b));
	char line[96];
	pthread_t t;

	(void)state;
	pthread_cond_init(&b->ready, NULL);
	pthread_create(&t, NULL, sleeper, b);
	wait_state(&b->ready, ODEBUG_STATE_ACTIVE);
	for (int i = 0; i < 200; i++)	/* until it sleeps in the kernel */
		usleep(1000);
	snprintf(line, sizeof(line), "ODEBUG: blocked on it: thread %d (cond-sleeper)\n",
		 __atomic_load_n(&sleeper_tid, __ATOMIC_ACQUIRE));
	capture_start();
	debug_check_no_obj_freed(&b->ready, sizeof(b->ready));
	{
		char *out = capture_stop();

		if (!strstr(out, "ODEBUG: free active (1 waiter) object: ") ||
		    !strstr(out, line) || strstr(out, "active state") || strstr(out, "hint:"))
			fail_msg("want \"(1 waiter)\" and \"%s\", no active state, no hint:\n%s",
				 line, out);
		free(out);
	}
	release_all(b, &t, 1);
	free(b);
}

static void use_of_destroyed_cond_is_reported(void **state)
{
	struct box *b = calloc(1, sizeof(*b));
	struct timespec ts = { 0, 0 };

	(void)state;
	pthread_cond_init(&b->ready, NULL);
	pthread_cond_destroy(&b->ready);
	EXPECT_REPORT(pthread_cond_signal(&b->ready), "ODEBUG: signal destroyed", "pthread_cond");
	EXPECT_REPORT(pthread_cond_broadcast(&b->ready), "ODEBUG: broadcast destroyed");
	pthread_mutex_lock(&b->lock);
	EXPECT_REPORT(pthread_cond_timedwait(&b->ready, &b->lock, &ts), "ODEBUG: wait destroyed");
	pthread_mutex_unlock(&b->lock);
	free(b);
}

static void wait_without_holding_the_mutex_is_reported(void **state)
{
	struct box *b = calloc(1, sizeof(*b));
	struct timespec ts = { 0, 0 };

	(void)state;
	EXPECT_REPORT(pthread_cond_timedwait(&b->ready, &b->lock, &ts),
		      "ODEBUG: cond_wait non-owner", "pthread_mutex");
	free(b);
}

/* --- silent ------------------------------------------------------------ */

static struct box st = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0 };

static void static_cond_and_internal_unlock_relock_are_silent(void **state)
{
	pthread_t t[2];

	(void)state;
	EXPECT_SILENT({
		for (int i = 0; i < 2; i++)
			pthread_create(&t[i], NULL, waiter, &st);
		wait_state(&st.ready, ODEBUG_STATE_ACTIVE);
		/* The waiters hold no mutex while they wait: locking it is fine. */
		for (int i = 0; i < 50; i++) {
			pthread_mutex_lock(&st.lock);
			pthread_cond_signal(&st.ready);
			pthread_mutex_unlock(&st.lock);
		}
		release_all(&st, t, 2);
	});
}

static void destroy_and_free_right_after_broadcast_are_silent(void **state)
{
	for (int round = 0; round < 20; round++) {
		struct box *b = calloc(1, sizeof(*b));
		pthread_t t[3];

		(void)state;
		pthread_mutex_init(&b->lock, NULL);
		pthread_cond_init(&b->ready, NULL);
		for (int i = 0; i < 3; i++)
			pthread_create(&t[i], NULL, waiter, b);
		wait_state(&b->ready, ODEBUG_STATE_ACTIVE);
		EXPECT_SILENT({
			pthread_mutex_lock(&b->lock);
			b->go = 1;
			pthread_cond_broadcast(&b->ready);
			pthread_mutex_unlock(&b->lock);
			/* POSIX's example: the waiters are no longer blocked. */
			pthread_cond_destroy(&b->ready);
		});
		for (int i = 0; i < 3; i++)
			pthread_join(t[i], NULL);
		free(b);
	}
}

static void cleanup_unlock(void *m)
{
	pthread_mutex_unlock(m);
}

static void *cancellable_waiter(void *arg)
{
	struct box *b = arg;

	pthread_mutex_lock(&b->lock);
	pthread_cleanup_push(cleanup_unlock, &b->lock);
	while (!b->go)
		pthread_cond_wait(&b->ready, &b->lock);
	pthread_cleanup_pop(1);
	return NULL;
}

static void waiter_cancelled_inside_cond_wait_is_silent(void **state)
{
	struct box *b = calloc(1, sizeof(*b));
	pthread_t t;

	(void)state;
	EXPECT_SILENT({
		pthread_create(&t, NULL, cancellable_waiter, b);
		wait_state(&b->ready, ODEBUG_STATE_ACTIVE);
		pthread_cancel(t);
		pthread_join(t, NULL);
		pthread_mutex_lock(&b->lock);
		pthread_mutex_unlock(&b->lock);
		pthread_cond_destroy(&b->ready);
		pthread_mutex_destroy(&b->lock);
		free(b);
	});
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(free_init_destroy_with_a_waiter_are_reported),
		cmocka_unit_test(freed_cond_names_its_waiting_thread),
		cmocka_unit_test(use_of_destroyed_cond_is_reported),
		cmocka_unit_test(wait_without_holding_the_mutex_is_reported),
		cmocka_unit_test(static_cond_and_internal_unlock_relock_are_silent),
		cmocka_unit_test(destroy_and_free_right_after_broadcast_are_silent),
		cmocka_unit_test(waiter_cancelled_inside_cond_wait_is_silent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
