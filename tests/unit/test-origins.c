/* SPDX-License-Identifier: MIT */
/*
 * origins=1: where a reported object was initialised and activated.  Each case runs this program
 * again as a child (scenarios.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "scenarios.h"

static void origins_print_where_the_object_came_from(void **state)
{
	int status;
	char *out = run(&status, "one", "origins=1");
	char *init_at, *act_at;

	(void)state;
	init_at = strstr(out, "ODEBUG: object initialised at:\n    #0 ");
	act_at = strstr(out, "ODEBUG: object activated at:\n    #0 ");
	assert_non_null(init_at);
	assert_non_null(act_at);
	assert_true(init_at < act_at);
	/* #0 of each origin is the annotating caller, not libodebug. */
	assert_non_null(strstr(init_at, " in sinks_arm+"));
	assert_non_null(strstr(act_at, " in sinks_arm+"));
	free(out);
	out = run(&status, "one", "");
	assert_null(strstr(out, "initialised at"));
	free(out);
}

/* An object tracked by its first activate was initialised there, as far as is known. */
static void static_object_is_initialised_where_first_activated(void **state)
{
	int status;
	char *out = run(&status, "static", "origins=1");
	char *init_at = strstr(out, "ODEBUG: object initialised at:\n    #0 ");
	char *act_at = strstr(out, "ODEBUG: object activated at:\n    #0 ");

	(void)state;
	assert_non_null(init_at);
	assert_non_null(act_at);
	assert_non_null(strstr(init_at, " in sinks_arm_static+"));
	assert_non_null(strstr(act_at, " in sinks_arm_static+"));
	free(out);
}

int test_main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(origins_print_where_the_object_came_from),
		cmocka_unit_test(static_object_is_initialised_where_first_activated),
	};

	return run_scenario_tests(argc, argv, "origins", tests, sizeof(tests) / sizeof(tests[0]));
}
