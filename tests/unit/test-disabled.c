/* SPDX-License-Identifier: MIT */
/* ODEBUG=0: nothing is tracked, nothing reported, activate returns 0. */
#include <stdlib.h>

#include "helpers.h"

static void disabled_library_tracks_nothing(void **state)
{
	static char obj[16];
	char *out, *block;
	struct debug_objects_stats s;

	(void)state;
	assert_false(debug_objects_enabled());
	capture_start();
	debug_object_init(obj, &bare_descr);
	assert_int_equal(debug_object_get_state(obj), ODEBUG_STATE_NOTAVAILABLE);
	assert_int_equal(debug_object_activate(obj, &bare_descr), 0);
	assert_int_equal(debug_object_activate(obj, &bare_descr), 0);
	debug_object_deactivate(obj + 1, &bare_descr);
	debug_object_assert_init(obj, &bare_descr);
	debug_object_active_state(obj, &bare_descr, 1, 2);
	debug_object_init(NULL, NULL);
	block = malloc(64);
	debug_object_init(block, &bare_descr);
	debug_object_activate(block, &bare_descr);
	free(block);
	debug_check_no_obj_freed(obj, sizeof(obj));
	out = capture_stop();
	assert_string_equal(out, "");
	s = stats_now();
	assert_int_equal(s.warnings, 0);
	assert_int_equal(s.fixups, 0);
	assert_int_equal(s.pool_used, 0);
	assert_int_equal(s.objs_allocated, 0);
	free(out);
}

int test_main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(disabled_library_tracks_nothing),
	};

	(void)argc, (void)argv;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
