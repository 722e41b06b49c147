/* SPDX-License-Identifier: MIT */
/* debug_objects_get_stats and debug_objects_print_stats. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"

static void get_stats_copies_at_most_size_and_returns_its_size(void **state)
{
	unsigned long buf[2 + 32];
	size_t n;

	(void)state;
	memset(buf, 0xa5, sizeof(buf));
	/* An older caller that knows only the first two members. */
	n = debug_objects_get_stats((struct debug_objects_stats *)buf, 2 * sizeof(unsigned long));
	assert_int_equal(n, sizeof(struct debug_objects_stats));
	assert_int_equal(buf[0], 0);	/* warnings */
	assert_true(buf[2] == 0xa5a5a5a5a5a5a5a5UL);	/* untouched */
	assert_int_equal(debug_objects_get_stats(NULL, 0), sizeof(struct debug_objects_stats));
}

static void print_stats_writes_every_counter(void **state)
{
	static char obj[8];
	char *out;

	(void)state;
	debug_object_deactivate(obj, &bare_descr);	/* one warning */
	capture_start();
	debug_objects_print_stats(2);
	out = capture_stop();
	assert_non_null(strstr(out, "max_chain     : "));
	assert_non_null(strstr(out, "max_checked   : "));
	assert_non_null(strstr(out, "warnings      : 1\n"));
	assert_non_null(strstr(out, "suppressed    : 0\n"));
	assert_non_null(strstr(out, "fixups        : 0\n"));
	assert_non_null(strstr(out, "pool_free     : "));
	assert_non_null(strstr(out, "pool_min_free : "));
	assert_non_null(strstr(out, "pool_used     : 0\n"));
	assert_non_null(strstr(out, "pool_max_used : "));
	assert_non_null(strstr(out, "objs_allocated: "));
	assert_non_null(strstr(out, "objs_freed    : "));
	free(out);
}

static void walks_record_their_length(void **state)
{
	char *page = aligned_alloc(4096, 4096);
	int i;

	(void)state;
	for (i = 0; i < 10; i++)
		debug_object_init(page + 16 * i, &bare_descr);
	/* The free check walks every tracker of the page's bucket: 10. */
	debug_check_no_obj_freed(page, 4096);
	assert_true(stats_now().max_chain >= 10);
	assert_true(stats_now().max_checked >= 10);
	assert_int_equal(debug_object_get_state(page), ODEBUG_STATE_NOTAVAILABLE);
	free(page);
}

int test_main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(get_stats_copies_at_most_size_and_returns_its_size),
		cmocka_unit_test(print_stats_writes_every_counter),
		cmocka_unit_test(walks_record_their_length),
	};

	(void)argc, (void)argv;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
