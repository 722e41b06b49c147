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
 * The peaks survive a burst that never reaches a fold:
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

/*
 * debug_object_free() leaves the tracker linked, FREED (table.c): the next
 * init of the address must take it back, not make a second one.
 */
static void free_and_init_at_one_address_reuse_a_tracker(void **state)
{
	static char obj[8];
	struct debug_objects_stats before, after;
	int i;

	(void)state;
	before = stats_now();
	/* More cycles than the pool holds after the tests above: a leak shows. */
	for (i = 0; i < 5 * N; i++) {
		debug_object_init(obj, &bare_descr);
		assert_int_equal(debug_object_activate(obj, &bare_descr), 0);
		debug_object_deactivate(obj, &bare_descr);
		debug_object_free(obj, &bare_descr);
		assert_int_equal(debug_object_get_state(obj), ODEBUG_STATE_NOTAVAILABLE);
	}
	after = stats_now();
	assert_int_equal(after.pool_used, before.pool_used);
	assert_int_equal(after.objs_allocated - before.objs_allocated, 5 * N);
	assert_int_equal(after.objs_freed - before.objs_freed, 5 * N);
	/* No tracker left behind per cycle: the pool did not grow. */
	assert_true(after.pool_free + after.pool_used <= before.pool_free + before.pool_used + 128);
}

/*
 * The FREED trackers of released memory go back to the pool with the
 * free check: 100 rounds of 1000 objects, each round at fresh addresses,
 * freed and then released, need no more than a round's worth.
 */
static void freed_objects_trackers_return_with_their_memory(void **state)
{
	enum { ROUNDS = 100, PER = 1000 };
	char *block = malloc(ROUNDS * PER * 8);
	struct debug_objects_stats before, after;
	int r, i;

	(void)state;
	assert_non_null(block);
	before = stats_now();
	for (r = 0; r < ROUNDS; r++) {
		char *objs = block + (size_t)r * PER * 8;

		for (i = 0; i < PER; i++)
			debug_object_init(objs + 8 * i, &bare_descr);
		for (i = 0; i < PER; i++)
			debug_object_free(objs + 8 * i, &bare_descr);
		debug_check_no_obj_freed(objs, PER * 8);
	}
	after = stats_now();
	assert_int_equal(after.pool_used, before.pool_used);
	assert_true(after.pool_free + after.pool_used <
		    before.pool_free + before.pool_used + 4 * PER);
	free(block);
}

/*
 * Objects whose memory no free check sees (static here, or any memory in a
 * build without the free() interposer), freed and never initialised again:
 * a thread keeps one FREED tracker at most, so the pool does not grow
 * with each round.
 */
static void freed_trackers_stay_bounded_without_a_free_check(void **state)
{
	static char objs[5][N][8];
	struct debug_objects_stats before, after;
	int r, i;

	(void)state;
	before = stats_now();
	for (r = 0; r < 5; r++) {
		for (i = 0; i < N; i++)
			debug_object_init(objs[r][i], &bare_descr);
		for (i = 0; i < N; i++)
			debug_object_free(objs[r][i], &bare_descr);
	}
	after = stats_now();
	assert_int_equal(after.pool_used, before.pool_used);
	assert_true(after.pool_free + after.pool_used < before.pool_free + before.pool_used + 2 * N);
}

int test_main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pool_starts_at_pool_size),
		cmocka_unit_test(peaks_survive_a_short_burst),
		cmocka_unit_test(pool_grows_to_track_many_objects),
		cmocka_unit_test(freed_trackers_are_reused),
		cmocka_unit_test(free_and_init_at_one_address_reuse_a_tracker),
		cmocka_unit_test(freed_objects_trackers_return_with_their_memory),
		cmocka_unit_test(freed_trackers_stay_bounded_without_a_free_check),
	};

	(void)argc, (void)argv;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
