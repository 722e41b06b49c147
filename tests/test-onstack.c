/* SPDX-License-Identifier: MIT */
/* On-stack annotation: a notice (not a warning) when it is wrong. */
#include <stdlib.h>

#include "helpers.h"

static void stack_object_annotated_on_stack_is_silent(void **state)
{
	char obj[16];
	char *out;

	(void)state;
	stats_mark();
	capture_start();
	debug_object_init_on_stack(obj, &bare_descr);
	debug_object_free(obj, &bare_descr);
	out = capture_stop();
	assert_string_equal(out, "");
	assert_int_equal(stats_delta().warnings, 0);
	free(out);
}

static void stack_object_not_annotated_gets_a_notice(void **state)
{
	char obj[16];
	char *out;

	(void)state;
	stats_mark();
	capture_start();
	debug_object_init(obj, &bare_descr);
	out = capture_stop();
	assert_int_equal(count_lines_with(out, "is on stack 0x"), 1);
	assert_int_equal(count_lines_with(out, ", but NOT annotated."), 1);
	/* Tracked anyway, and not a warning (as in the kernel). */
	assert_int_equal(debug_object_get_state(obj), ODEBUG_STATE_INIT);
	assert_int_equal(stats_delta().warnings, 0);
	debug_object_free(obj, &bare_descr);
	free(out);
}

static void heap_object_annotated_on_stack_gets_a_notice(void **state)
{
	char *obj = malloc(16);
	char *out;

	(void)state;
	capture_start();
	debug_object_init_on_stack(obj, &bare_descr);
	out = capture_stop();
	assert_int_equal(count_lines_with(out, "is NOT on stack 0x"), 1);
	assert_int_equal(count_lines_with(out, ", but annotated."), 1);
	debug_object_free(obj, &bare_descr);
	free(obj);
	free(out);
}

static void reinit_of_tracked_object_is_not_checked_again(void **state)
{
	char obj[16];
	char *out;

	(void)state;
	debug_object_init_on_stack(obj, &bare_descr);
	capture_start();
	debug_object_init(obj, &bare_descr);
	out = capture_stop();
	assert_string_equal(out, "");
	debug_object_free(obj, &bare_descr);
	free(out);
}

static void notices_stop_after_five(void **state)
{
	char objs[8][16];
	char *out;
	int i;

	(void)state;
	capture_start();
	for (i = 0; i < 8; i++)
		debug_object_init(objs[i], &bare_descr);
	out = capture_stop();
	/* Earlier tests printed two notices: three of five remain. */
	assert_int_equal(count_lines_with(out, "but NOT annotated"), 3);
	for (i = 0; i < 8; i++)
		debug_object_free(objs[i], &bare_descr);
	free(out);
}

int test_main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(stack_object_annotated_on_stack_is_silent),
		cmocka_unit_test(stack_object_not_annotated_gets_a_notice),
		cmocka_unit_test(heap_object_annotated_on_stack_gets_a_notice),
		cmocka_unit_test(reinit_of_tracked_object_is_not_checked_again),
		cmocka_unit_test(notices_stop_after_five),
	};

	(void)argc, (void)argv;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
