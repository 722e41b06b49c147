/* SPDX-License-Identifier: MIT */
/* pthread_barrier, the built-in type: what odebug-pthread(7) says of barriers. */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/wait.h>

#include "pt.h"

int barrier_wait_225(pthread_barrier_t *b);
__asm__(".symver barrier_wait_225,pthread_barrier_wait@GLIBC_2.2.5");

static void *arrive(void *arg)
{
	pthread_barrier_wait(arg);
	return NULL;
}

static void free_and_init_with_a_waiter_are_reported(void **state)
{
	pthread_barrier_t *b = calloc(1, sizeof(*b));
	pthread_t t;

	(void)state;
	pthread_barrier_init(b, NULL, 2);
	pthread_create(&t, NULL, arrive, b);
	wait_state(b, ODEBUG_STATE_ACTIVE);
	EXPECT_REPORT(debug_check_no_obj_freed(b, sizeof(*b)),
		      "ODEBUG: free active (1 of 2 threads waiting)", "pthread_barrier", "ODEBUG: blocked on it: thread ");
	/* Untracked now; the last arrival (through the 2.2.5 node) releases it. */
	barrier_wait_225(b);
	pthread_join(t, NULL);
	pthread_create(&t, NULL, arrive, b);
	wait_state(b, ODEBUG_STATE_ACTIVE);
	EXPECT_REPORT(debug_check_no_obj_freed(b, sizeof(*b)), "ODEBUG: free active");
	pthread_barrier_wait(b);
	pthread_join(t, NULL);
	free(b);
}

static void init_with_a_waiter_is_reported(void **state)
{
	pthread_barrier_t *b = calloc(1, sizeof(*b));
	pthread_t t;

	(void)state;
	pthread_barrier_init(b, NULL, 2);
	pthread_create(&t, NULL, arrive, b);
	wait_state(b, ODEBUG_STATE_ACTIVE);
	EXPECT_REPORT(pthread_barrier_init(b, NULL, 2), "ODEBUG: init active", "pthread_barrier");
	/* The re-initialised barrier strands the waiter: arrive twice more. */
	pthread_create(&t, NULL, arrive, b);
	pthread_barrier_wait(b);
	pthread_join(t, NULL);
	free(b);
}

/*
 * glibc's destroy waits for the waiters, and a wait on a destroyed barrier
 * may never return: those run in a child, ended once its report holds
 * @want (a symboliser's start may take seconds on a loaded machine), or
 * after 60 s.
 */
static char *in_child(void (*fn)(pthread_barrier_t *), pthread_barrier_t *b, const char *want)
{
	int status, i;
	pid_t pid;

	capture_start();
	pid = fork();
	if (pid == 0) {
		alarm(60);
		fn(b);
		_exit(0);
	}
	for (i = 0; i < 6000 && !capture_has(want); i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return capture_stop();
		usleep(10000);
	}
	usleep(100000);		/* the report's last lines */
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return capture_stop();
}

static void destroy_it(pthread_barrier_t *b) { pthread_barrier_destroy(b); }
static void wait_on_it(pthread_barrier_t *b) { pthread_barrier_wait(b); }

static void destroy_with_a_waiter_and_wait_after_destroy_are_reported(void **state)
{
	pthread_barrier_t *b = calloc(1, sizeof(*b));
	pthread_t t;
	char *out;

	(void)state;
	pthread_barrier_init(b, NULL, 2);
	pthread_create(&t, NULL, arrive, b);
	wait_state(b, ODEBUG_STATE_ACTIVE);
	/* The tracker is ACTIVE in the child too. */
	out = in_child(destroy_it, b, "object type: pthread_barrier");
	assert_non_null(strstr(out, "ODEBUG: destroy active (1 of 2 threads waiting)"));
	assert_non_null(strstr(out, "object type: pthread_barrier"));
	free(out);
	pthread_barrier_wait(b);
	pthread_join(t, NULL);
	pthread_barrier_destroy(b);
	out = in_child(wait_on_it, b, "ODEBUG: wait destroyed");
	assert_non_null(strstr(out, "ODEBUG: wait destroyed"));
	free(out);
	free(b);
}

static void use_of_destroyed_barrier_is_reported(void **state)
{
	pthread_barrier_t *b = calloc(1, sizeof(*b));

	(void)state;
	pthread_barrier_init(b, NULL, 1);
	pthread_barrier_wait(b);
	pthread_barrier_destroy(b);
	EXPECT_REPORT(pthread_barrier_destroy(b), "ODEBUG: destroy destroyed", "pthread_barrier");
	free(b);
}

static void destroy_and_free_right_after_the_last_wait_are_silent(void **state)
{
	(void)state;
	for (int round = 0; round < 20; round++) {
		pthread_barrier_t *b = malloc(sizeof(*b));
		pthread_t t[3];

		EXPECT_SILENT({
			pthread_barrier_init(b, NULL, 4);
			for (int i = 0; i < 3; i++)
				pthread_create(&t[i], NULL, arrive, b);
			pthread_barrier_wait(b);
			pthread_barrier_destroy(b);	/* glibc waits for the others to leave */
			free(b);
			for (int i = 0; i < 3; i++)
				pthread_join(t[i], NULL);
		});
	}
}

/*
 * Two threads arriving at once, round after round, the barrier destroyed
 * and initialised again after each: glibc's arrival count, if read before
 * the wait, misses the other thread's arrival, so both are counted first
 * and the destroy says "destroy active" (a count read so failed 2 runs in
 * 7 of 20,000 rounds; this runs up to 100,000, at most 5 s).
 */
static pthread_barrier_t racing, lockstep;
static volatile int racing_stop;

static void *race_arrivals(void *arg)
{
	(void)arg;
	for (;;) {
		pthread_barrier_wait(&lockstep);
		if (racing_stop)
			return NULL;
		pthread_barrier_wait(&racing);
		pthread_barrier_wait(&lockstep);
	}
}

static void simultaneous_arrivals_then_destroy_are_silent(void **state)
{
	struct timespec t0, t;
	pthread_t th;
	int i;

	(void)state;
	racing_stop = 0;
	pthread_barrier_init(&lockstep, NULL, 2);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	EXPECT_SILENT({
		pthread_create(&th, NULL, race_arrivals, NULL);
		for (i = 0; i < 100000; i++) {
			pthread_barrier_init(&racing, NULL, 2);
			pthread_barrier_wait(&lockstep);
			pthread_barrier_wait(&racing);
			pthread_barrier_wait(&lockstep);	/* both have left it */
			pthread_barrier_destroy(&racing);
			clock_gettime(CLOCK_MONOTONIC, &t);
			if (t.tv_sec - t0.tv_sec >= 5)
				break;
		}
		racing_stop = 1;
		pthread_barrier_wait(&lockstep);
		pthread_join(th, NULL);
	});
	pthread_barrier_destroy(&lockstep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(free_and_init_with_a_waiter_are_reported),
		cmocka_unit_test(init_with_a_waiter_is_reported),
		cmocka_unit_test(destroy_with_a_waiter_and_wait_after_destroy_are_reported),
		cmocka_unit_test(use_of_destroyed_barrier_is_reported),
		cmocka_unit_test(destroy_and_free_right_after_the_last_wait_are_silent),
		cmocka_unit_test(simultaneous_arrivals_then_destroy_are_silent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
