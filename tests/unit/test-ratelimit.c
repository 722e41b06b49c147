/* SPDX-License-Identifier: MIT */
/* max_reports=2: every report is counted, only the first two printed. */
#include <stdlib.h>

#include "helpers.h"

static void deactivate(void *obj)
{
	debug_object_deactivate(obj, &bare_descr);
}

static void reports_beyond_max_reports_are_counted_not_printed(void **state)
{
	static char objs[5][16];
	char *out;
	int i;

	(void)state;
	stats_mark();
	capture_start();
	for (i = 0; i < 5; i++)
		at_depth(i, deactivate, objs[i]);	/* 5 distinct causes */
	out = capture_stop();
	assert_int_equal(stats_delta().warnings, 5);
	assert_int_equal(count_lines_with(out, "ODEBUG: deactivate not available"), 2);
	assert_int_equal(count_lines_with(out, "ODEBUG: in thread"), 2);
	free(out);
}

static void fixups_still_run_after_the_limit(void **state)
{
	static char obj[16];
	char *out;

	(void)state;
	calls_reset();
	fixup_result[FIX_ACTIVATE] = true;
	stats_mark();
	capture_start();
	assert_int_equal(debug_object_activate(obj, &rec_descr), 0);
	out = capture_stop();
	assert_string_equal(out, "");
	assert_int_equal(ncalls, 1);
	assert_int_equal(calls[0].state, ODEBUG_STATE_NOTAVAILABLE);
	assert_int_equal(stats_delta().warnings, 1);
	assert_int_equal(stats_delta().fixups, 1);
	free(out);
}

int test_main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reports_beyond_max_reports_are_counted_not_printed),
		cmocka_unit_test(fixups_still_run_after_the_limit),
	};

	(void)argc, (void)argv;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
