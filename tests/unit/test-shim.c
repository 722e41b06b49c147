/* SPDX-License-Identifier: MIT */
/* The shim writer's API: rearm, on_stack, init_auto. */
#include <errno.h>
#include <stdlib.h>

#include "helpers.h"

static void rearm_accepts_an_active_object(void **state)
{
	char *obj = malloc(32), *out;

	(void)state;
	stats_mark();
	capture_start();
	debug_object_init(obj, &bare_descr);
	assert_int_equal(debug_object_rearm(obj, &bare_descr), 0);	/* INIT -> ACTIVE */
	assert_int_equal(debug_object_get_state(obj), ODEBUG_STATE_ACTIVE);
	assert_int_equal(debug_object_rearm(obj, &bare_descr), 0);	/* again: silent */
	assert_int_equal(debug_object_get_state(obj), ODEBUG_STATE_ACTIVE);
	out = capture_stop();
	assert_string_equal(out, "");
	assert_int_equal(stats_delta().warnings, 0);
	free(out);
	/* the plain activate still reports it */
	capture_start();
	debug_object_activate(obj, &bare_descr);
	free(capture_stop());
	assert_int_equal(stats_delta().warnings, 1);
	debug_object_deactivate(obj, &bare_descr);
	debug_object_free(obj, &bare_descr);
	free(obj);
}

static void rearm_reports_a_destroyed_object(void **state)
{
	char *obj = malloc(32), *out;

	(void)state;
	debug_object_init(obj, &bare_descr);
	debug_object_destroy(obj, &bare_descr);
	stats_mark();
	capture_start();
	assert_int_equal(debug_object_rearm(obj, &bare_descr), -EINVAL);
	out = capture_stop();
	assert_int_equal(count_lines_with(out, "ODEBUG: activate destroyed"), 1);
	assert_int_equal(stats_delta().warnings, 1);
	free(out);
	debug_object_free(obj, &bare_descr);
	free(obj);
}

static void on_stack_and_init_auto(void **state)
{
	char local[16] = "", *heap = malloc(16), *out;

	(void)state;
	assert_true(debug_object_on_stack(local));
	assert_false(debug_object_on_stack(heap));
	capture_start();
	debug_object_init_auto(local, &bare_descr);	/* no "NOT annotated" notice */
	debug_object_init_auto(heap, &bare_descr);	/* no "annotated" notice */
	out = capture_stop();
	assert_string_equal(out, "");
	assert_int_equal(debug_object_get_state(local), ODEBUG_STATE_INIT);
	assert_int_equal(debug_object_get_state(heap), ODEBUG_STATE_INIT);
	debug_object_free(local, &bare_descr);
	debug_object_free(heap, &bare_descr);
	free(out);
	free(heap);
}

static void the_executable_is_never_skipped(void **state)
{
	(void)state;
	assert_false(debug_objects_skip_module((void *)on_stack_and_init_auto));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rearm_accepts_an_active_object),
		cmocka_unit_test(rearm_reports_a_destroyed_object),
		cmocka_unit_test(on_stack_and_init_auto),
		cmocka_unit_test(the_executable_is_never_skipped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
