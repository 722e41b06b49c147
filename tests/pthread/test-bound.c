/* SPDX-License-Identifier: MIT */
/*
 * Built-in trackers are bounded: with pool_max=4000, the first 2000 are
 * for built-in objects, one line says when that is reached, and user
 * annotations still find trackers; trackers that hold no object (cached,
 * FREED) do not count.  Then check_pthread=0 tracks nothing.
 */
#define _GNU_SOURCE
#include "pt.h"

#define N 5000
#define THREADS 80

static int parked, go_home;

/* One mutex in use, one annotation FREED, a cache of trackers: then wait. */
static void *track_little(void *arg)
{
	pthread_mutex_t *m = arg;
	static __thread long obj;

	pthread_mutex_init(m, NULL);
	debug_object_init(&obj, &bare_descr);
	debug_object_free(&obj, &bare_descr);
	__atomic_add_fetch(&parked, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&go_home, __ATOMIC_ACQUIRE))
		usleep(1000);
	pthread_mutex_destroy(m);
	return NULL;
}

/*
 * The bound counts trackers that hold an object: not those in threads'
 * caches (a batch of 32 each) nor FREED ones.  80 threads hold 80
 * mutexes, far below 2000, so one more mutex is tracked and nothing is said.
 */
static void cached_and_freed_trackers_do_not_count_against_the_bound(void **state)
{
	pthread_mutex_t *m = calloc(THREADS + 1, sizeof(*m));
	pthread_t t[THREADS];
	char *out;

	(void)state;
	capture_start();
	for (int i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, track_little, &m[i]);
	while (__atomic_load_n(&parked, __ATOMIC_ACQUIRE) < THREADS)
		usleep(1000);
	pthread_mutex_init(&m[THREADS], NULL);
	assert_int_equal(debug_object_get_state(&m[THREADS]), ODEBUG_STATE_INIT);
	__atomic_store_n(&go_home, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	out = capture_stop();
	assert_int_equal(count_lines_with(out, "built-in objects use half of pool_max"), 0);
	pthread_mutex_destroy(&m[THREADS]);
	free(m);
	free(out);
}

static void builtin_objects_stop_at_half_the_pool_with_one_line(void **state)
{
	pthread_mutex_t *m = calloc(N, sizeof(*m));
	static long user[64];
	char *out;

	(void)state;
	capture_start();
	for (int i = 0; i < N; i++) {
		pthread_mutex_init(&m[i], NULL);
		pthread_mutex_lock(&m[i]);
		pthread_mutex_unlock(&m[i]);
	}
	out = capture_stop();
	assert_int_equal(count_lines_with(out, "built-in objects use half of pool_max"), 1);
	assert_true(stats_now().pool_used <= 2100);
	assert_int_equal(debug_object_get_state(&m[0]), ODEBUG_STATE_INACTIVE);
	assert_int_equal(debug_object_get_state(&m[N - 1]), ODEBUG_STATE_NOTAVAILABLE);
	for (int i = 0; i < 64; i++) {
		debug_object_init(&user[i], &bare_descr);
		assert_int_equal(debug_object_activate(&user[i], &bare_descr), 0);
		assert_int_equal(debug_object_get_state(&user[i]), ODEBUG_STATE_ACTIVE);
		debug_object_deactivate(&user[i], &bare_descr);
		debug_object_free(&user[i], &bare_descr);
	}
	assert_true(debug_objects_enabled());
	free(m);
	free(out);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cached_and_freed_trackers_do_not_count_against_the_bound),
		cmocka_unit_test(builtin_objects_stop_at_half_the_pool_with_one_line),
	};

	(void)argc;
	(void)argv;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
