/* SPDX-License-Identifier: MIT */
/*
 * Built-in trackers are bounded: with pool_max=4000, the first 2000 are
 * for built-in objects, one line says when that is reached, and user
 * annotations still find trackers.  Then check_pthread=0 tracks nothing.
 */
#define _GNU_SOURCE
#include "pt.h"

#define N 5000

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
		cmocka_unit_test(builtin_objects_stop_at_half_the_pool_with_one_line),
	};

	(void)argc;
	(void)argv;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
