/* SPDX-License-Identifier: MIT */
/* The tracker pool (pool_size=64): it grows before it runs dry. */
#include <stdlib.h>

#include "helpers.h"

#define N 20000

static void pool_starts_at_pool_size(void **state)
{
	struct debug_objects_stats s;

	(void)state;
	/* Nothing is carved before the first API call starts libodebug. */
	s = stats_now();
	assert_int_equal(s.pool_free, 0);
	assert_true(debug_objects_enabled());
	s = stats_now();
	/* Slabs are whole pages: 64 trackers round up to 128 (4 KiB). */
	assert_true(s.pool_free >= 64);
	assert_true(s.pool_free <= 128);
	assert_int_equal(s.pool_used, 0);
}

/*
 * The peaks survive a burst that never reaches a fold (issue 12 item 13):
 * 20 trackers in one thread, then freed.
 */
static void peaks_survive_a_short_burst(void **state)
{
	static char objs[20][8];
	struct debug_objects_stats before = stats_now(), after;
	int i;

	(void)state;
	for (i = 0; i < 20; i++)
		debug_object_init(objs[i], &bare_descr);
	for (i = 0; i < 20; i++)
		debug_object_free(objs[i], &bare_descr);
	after = stats_now();
	assert_int_equal(after.pool_used, before.pool_used);
	assert_true(after.pool_max_used >= before.pool_used + 20);
	assert_true(after.pool_min_free + 20 <= before.pool_free);
}

static void pool_grows_to_track_many_objects(void **state)
{
	char *objs = malloc(N * 8);
	struct debug_objects_stats s;
	int i;

	(void)state;
	for (i = 0; i < N; i++)
		debug_object_init(objs + 8 * i, &bare_descr);
	s = stats_now();
	assert_int_equal(s.pool_used, N);
	assert_true(s.pool_max_used >= N);
	assert_true(s.objs_allocated >= N);
	assert_true(debug_objects_enabled());
	for (i = 0; i < N; i++)
		assert_int_equal(debug_object_get_state(objs + 8 * i), ODEBUG_STATE_INIT);
	for (i = 0; i < N; i++)
		debug_object_free(objs + 8 * i, &bare_descr);
	s = stats_now();
	assert_int_equal(s.pool_used, 0);
	assert_int_equal(s.objs_allocated - s.objs_freed, 0);
	assert_true(s.pool_free >= N);
	free(objs);
}

static void freed_trackers_are_reused(void **state)
{
	char *objs = malloc(N * 8);
	struct debug_objects_stats before, after;
	int i;

	(void)state;
	before = stats_now();
	for (i = 0; i < N; i++)
		debug_object_init(objs + 8 * i, &bare_descr);
	debug_check_no_obj_freed(objs, N * 8);
	after = stats_now();
	/* The freed trackers served: the pool grew by less than N. */
	assert_true(after.pool_free + after.pool_used - before.pool_free - before.pool_used < N);
	assert_int_equal(after.pool_used, 0);
	free(objs);
}

int test_main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pool_starts_at_pool_size),
		cmocka_unit_test(peaks_survive_a_short_burst),
		cmocka_unit_test(pool_grows_to_track_many_objects),
		cmocka_unit_test(freed_trackers_are_reused),
	};

	(void)argc, (void)argv;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
