/* SPDX-License-Identifier: MIT */
/*
 * pool_max=200: the kernel's out-of-memory path.  One line, tracking off,
 * the table drained, the program carries on.
 */
#include <errno.h>
#include <stdlib.h>

#include "helpers.h"

static void oom_disables_tracking_and_keeps_running(void **state)
{
	static char freed[10][16];
	char *objs = malloc(300 * 16);
	struct debug_objects_stats s;
	char *out;
	int i;

	(void)state;
	assert_true(debug_objects_enabled());
	/* Ten FREED trackers, still linked when the table is drained. */
	for (i = 0; i < 10; i++) {
		debug_object_init(freed[i], &bare_descr);
		debug_object_free(freed[i], &bare_descr);
	}
	capture_start();
	for (i = 0; i < 300; i++)
		debug_object_init(objs + 16 * i, &bare_descr);
	out = capture_stop();
	assert_int_equal(count_lines_with(out, "ODEBUG: Out of memory. ODEBUG disabled"), 1);
	assert_int_equal(count_lines_with(out, "ODEBUG"), 1);
	assert_false(debug_objects_enabled());
	s = stats_now();
	/* Exact, FREED trackers and all (the drain must not count their frees twice). */
	assert_int_equal(s.pool_used, 0);
	/* The ten hand-outs, and each FREED one's return counted as one more. */
	assert_true(s.objs_allocated <= 200 + 2 * 10);
	/* Everything is a no-op now; activate says success. */
	assert_int_equal(debug_object_get_state(objs), ODEBUG_STATE_NOTAVAILABLE);
	assert_int_equal(debug_object_activate(objs, &bare_descr), 0);
	capture_start();
	debug_object_deactivate(objs + 8, &bare_descr);
	debug_check_no_obj_freed(objs, 300 * 16);
	free(out);
	out = capture_stop();
	assert_string_equal(out, "");
	assert_int_equal(stats_now().warnings, 0);
	free(out);
	free(objs);
}

int test_main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(oom_disables_tracking_and_keeps_running),
	};

	(void)argc, (void)argv;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
