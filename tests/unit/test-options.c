/* SPDX-License-Identifier: MIT */
/*
 * ODEBUG and ODEBUG_OPTIONS.  Both are read once per process, so every case
 * runs this program again as a child with its own environment.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

static const char *argv0;

/* 7 types: 7 distinct causes from one line. */
static const struct debug_obj_descr seven[7] = {
	[0 ... 6] = { .name = "test_seven" },
};

__attribute__((noinline)) static void make_reports(void)
{
	static char objs[7][8];
	int i;

	for (i = 0; i < 7; i++)
		debug_object_deactivate(objs[i], &seven[i]);
}

static void child(const char *name)
{
	if (!strcmp(name, "reports"))
		make_reports();
	fprintf(stderr, "enabled=%d\n", debug_objects_enabled());
}

static char *run(int *status, const char *odebug, const char *options)
{
	char *env_on, *env_opt;
	char *out;

	if (asprintf(&env_on, "ODEBUG=%s", odebug) < 0 ||
	    asprintf(&env_opt, "ODEBUG_OPTIONS=%s", options) < 0)
		fail();
	out = run_child(argv0, "reports", status, env_on, env_opt, (char *)NULL);
	free(env_on);
	free(env_opt);
	assert_true(WIFEXITED(*status));
	assert_int_equal(WEXITSTATUS(*status), 0);
	return out;
}

static void defaults_print_five_reports(void **state)
{
	int status;
	char *out = run(&status, "1", "");

	(void)state;
	assert_int_equal(count_lines_with(out, "deactivate not available"), 5);
	assert_int_equal(count_lines_with(out, "enabled=1"), 1);
	free(out);
}

static void unknown_key_warns_once_and_is_ignored(void **state)
{
	int status;
	char *out = run(&status, "1", "bogus=1:max_reports=1");

	(void)state;
	assert_int_equal(count_lines_with(out, "ODEBUG: unknown option 'bogus' in ODEBUG_OPTIONS ignored"), 1);
	assert_int_equal(count_lines_with(out, "deactivate not available"), 1);
	assert_int_equal(count_lines_with(out, "enabled=1"), 1);
	free(out);
}

static void bad_value_warns_and_keeps_the_default(void **state)
{
	int status;
	char *out = run(&status, "1", "max_reports=abc:stack_depth=0:pool_size=");

	(void)state;
	assert_int_equal(count_lines_with(out, "bad value 'abc' for option max_reports (a number from 0 to"), 1);
	assert_int_equal(count_lines_with(out, "keeping the default 5"), 1);
	assert_int_equal(count_lines_with(out, "bad value '0' for option stack_depth"), 1);
	assert_int_equal(count_lines_with(out, "bad value '' for option pool_size"), 1);
	assert_int_equal(count_lines_with(out, "deactivate not available"), 5);
	free(out);
}

static void quoted_value_may_hold_colons(void **state)
{
	int status;
	char *out = run(&status, "1", "max_reports=\"1:2\":stack_depth=1:max_reports=2:dedup=0");

	(void)state;
	/* The quoted value is one (bad) value; parsing resumes after it. */
	assert_int_equal(count_lines_with(out, "bad value '1:2' for option max_reports"), 1);
	assert_int_equal(count_lines_with(out, "deactivate not available"), 2);
	/* stack_depth=1: one frame per report. */
	assert_int_equal(count_lines_with(out, "    #0 "), 2);
	assert_int_equal(count_lines_with(out, "    #1 "), 0);
	free(out);
}

/* Single quotes too (a value may then hold '"'); the value is kept whole. */
static void single_quoted_value_may_hold_colons(void **state)
{
	int status;
	char *out = run(&status, "1",
			"max_reports='1:2':log_path='/nonexistent-odebug:\"x\"/log':max_reports=1");

	(void)state;
	assert_int_equal(count_lines_with(out, "bad value '1:2' for option max_reports"), 1);
	assert_int_equal(count_lines_with(out, "cannot open log file /nonexistent-odebug:\"x\"/log."), 1);
	assert_int_equal(count_lines_with(out, "unknown option"), 0);
	assert_int_equal(count_lines_with(out, "deactivate not available"), 1);
	free(out);
}

static void suffixes_scale_numbers(void **state)
{
	int status;
	char *out = run(&status, "1", "pool_size=2k:pool_max=1m:help=1");

	(void)state;
	assert_non_null(strstr(out, "ODEBUG:   pool_size "));
	assert_non_null(strstr(out, " default 1024, now 2048: trackers made ready"));
	assert_non_null(strstr(out, " default 16777216, now 1048576: hard cap"));
	free(out);
}

static void help_lists_every_option(void **state)
{
	static const char *const names[] = {
		"max_reports", "pool_size", "pool_max", "stack_depth",
		"selftest", "check_free", "origins", "log_path", "log_format",
		"suppressions", "exitcode", "abort_on_error", "halt_on_error",
		"report_active_at_exit", "print_stats", "help", "dedup",
	};
	int status;
	size_t i;
	char *out = run(&status, "1", "help=1");

	(void)state;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char line[64];

		snprintf(line, sizeof(line), "ODEBUG:   %s ", names[i]);
		assert_non_null(strstr(out, line));
	}
	free(out);
}

/* A switch takes the words the sanitizers' options take; ',' separates too. */
static void switches_take_words_and_commas_separate(void **state)
{
	int status;
	char *out = run(&status, "1", "dedup=false,max_reports=3:selftest=yes,print_stats=off");

	(void)state;
	assert_int_equal(count_lines_with(out, "bad value"), 0);
	assert_int_equal(count_lines_with(out, "unknown option"), 0);
	/* dedup=false and max_reports=3: three of the seven reports printed. */
	assert_int_equal(count_lines_with(out, "deactivate not available"), 3);
	assert_int_equal(count_lines_with(out, "warnings      :"), 0);
	free(out);
	out = run(&status, "1", "dedup=maybe");
	assert_int_equal(count_lines_with(out, "bad value 'maybe' for option dedup"), 1);
	free(out);
}

/* Options without ODEBUG=1 check nothing: one line says so. */
static void options_without_odebug_warn(void **state)
{
	int status;
	char *out = run(&status, "", "max_reports=1");

	(void)state;
	assert_int_equal(count_lines_with(out,
		"ODEBUG: ODEBUG_OPTIONS is set but ODEBUG is not; libodebug stays disabled"), 1);
	assert_int_equal(count_lines_with(out, "enabled=0"), 1);
	free(out);
}

static void odebug_other_than_0_or_1_warns_and_stays_off(void **state)
{
	int status;
	char *out = run(&status, "yes", "");

	(void)state;
	assert_int_equal(count_lines_with(out, "ODEBUG: ODEBUG='yes' is not 0 or 1; libodebug stays disabled"), 1);
	assert_int_equal(count_lines_with(out, "deactivate not available"), 0);
	assert_int_equal(count_lines_with(out, "enabled=0"), 1);
	free(out);
}

static void odebug_0_is_off_and_silent(void **state)
{
	int status;
	char *out = run(&status, "0", "max_reports=junk");

	(void)state;
	assert_string_equal(out, "enabled=0\n");
	free(out);
}

static void print_stats_prints_the_table_at_exit(void **state)
{
	int status;
	char *out = run(&status, "1", "print_stats=1:max_reports=0");

	(void)state;
	assert_int_equal(count_lines_with(out, "warnings      : 7"), 1);
	assert_int_equal(count_lines_with(out, "deactivate not available"), 0);
	free(out);
}

static void selftest_can_be_skipped(void **state)
{
	int status;
	char *out = run(&status, "1", "selftest=0:max_reports=0");

	(void)state;
	assert_int_equal(count_lines_with(out, "enabled=1"), 1);
	free(out);
}

static void garbage_options_do_not_crash(void **state)
{
	char *garbage = malloc(65537);
	int status;
	size_t i;
	char *out;

	(void)state;
	srand(7);
	for (i = 0; i < 65536; i++) {
		char c = (char)(1 + rand() % 255);

		garbage[i] = (i % 97 == 0) ? ':' : (i % 89 == 0) ? '=' : (i % 83 == 0) ? '"' : c;
	}
	garbage[65536] = '\0';
	out = run(&status, "1", garbage);
	assert_int_equal(count_lines_with(out, "enabled=1"), 1);
	free(out);
	free(garbage);
}

/* The maximum a message names is accepted. */
static void max_reports_accepts_the_maximum_it_names(void **state)
{
	int status;
	char *out = run(&status, "1", "max_reports=18446744073709551615");

	(void)state;
	assert_int_equal(count_lines_with(out, "bad value"), 0);
	assert_int_equal(count_lines_with(out, "deactivate not available"), 7);
	free(out);
	out = run(&status, "1", "max_reports=18446744073709551616:stack_depth=99999999999999999999");
	assert_int_equal(count_lines_with(out, "bad value"), 2);
	free(out);
}

/* A pool that cannot be indexed is refused in one line, not switched off later. */
static void pool_beyond_the_index_space_is_refused_at_parse_time(void **state)
{
	int status;
	char *out = run(&status, "1", "pool_size=4g:pool_max=4g");

	(void)state;
	assert_int_equal(count_lines_with(out, "bad value '4g' for option pool_size (a number from 1 to 4294967294)"), 1);
	assert_int_equal(count_lines_with(out, "bad value '4g' for option pool_max (a number from 1 to 4294967294)"), 1);
	assert_int_equal(count_lines_with(out, "Out of memory"), 0);
	assert_int_equal(count_lines_with(out, "enabled=1"), 1);
	free(out);
}

/* A bad value is echoed bounded, with its control bytes escaped. */
static void bad_values_are_echoed_bounded_and_escaped(void **state)
{
	char *big = malloc(100001);
	char *opt = malloc(100001 + 16);
	int status;
	char *out;

	(void)state;
	memset(big, 'x', 100000);
	memcpy(big, "\x1b[31m\n\r", 7);
	big[100000] = '\0';
	out = run(&status, big, "");
	assert_int_equal(count_lines_with(out, "ODEBUG: ODEBUG='\\x1b[31m\\x0a\\x0dxxx"), 1);
	assert_int_equal(count_lines_with(out, "xxx...' is not 0 or 1; libodebug stays disabled"), 1);
	assert_null(strchr(out, '\x1b'));
	assert_true(strlen(out) < 400);
	free(out);
	sprintf(opt, "max_reports=%s", big);
	out = run(&status, "1", opt);
	assert_int_equal(count_lines_with(out, "bad value '\\x1b[31m\\x0a\\x0dxxx"), 1);
	assert_null(strchr(out, '\x1b'));
	assert_true(strchr(strstr(out, "bad value"), '\n') - strstr(out, "bad value") < 400);
	free(out);
	free(opt);
	free(big);
}

/* A symbolizer that cannot run is said once, at start, before any report. */
static void unusable_symbolizer_warns_at_start(void **state)
{
	int status;
	char *out = run(&status, "1", "symbolizer=/nonexistent/llvm-symbolizer");
	const char *warn = strstr(out, "ODEBUG: symbolizer=/nonexistent/llvm-symbolizer is not an executable file");

	(void)state;
	assert_int_equal(count_lines_with(out, "symbolizer="), 1);
	assert_non_null(warn);
	assert_true(warn < strstr(out, "ODEBUG: deactivate"));
	free(out);
	out = run(&status, "1", "symbolizer=no-such-symbolizer-here");
	assert_int_equal(count_lines_with(out, "symbolizer=no-such-symbolizer-here is not found in PATH"), 1);
	free(out);
}

/*
 * The first report of a run, and only it, ends with the next step; it
 * names only options not set.  JSON: the "next_step" field.
 */
static void first_report_ends_with_the_next_step(void **state)
{
	int status;
	char *out = run(&status, "1", "");

	(void)state;
	assert_int_equal(count_lines_with(out, "ODEBUG: deactivate"), 5);
	assert_int_equal(count_lines_with(out, "ODEBUG: next step: origins=1 shows where it was "
					  "initialised and activated; exitcode=1"), 1);
	free(out);
	out = run(&status, "1", "origins=1:print_suppressions=1");
	assert_int_equal(count_lines_with(out, "ODEBUG: next step: exitcode=1"), 1);
	assert_int_equal(count_lines_with(out, "origins=1 shows"), 0);
	assert_int_equal(count_lines_with(out, "ODEBUG: suppression: type:test_seven op:deactivate"), 5);
	free(out);
	out = run(&status, "1", "log_format=json");
	assert_int_equal(count_lines_with(out, "\"next_step\":\"origins=1 shows"), 1);
	assert_int_equal(count_lines_with(out, "\"hint\":null"), 5);
	free(out);
}

int test_main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(defaults_print_five_reports),
		cmocka_unit_test(unknown_key_warns_once_and_is_ignored),
		cmocka_unit_test(bad_value_warns_and_keeps_the_default),
		cmocka_unit_test(quoted_value_may_hold_colons),
		cmocka_unit_test(single_quoted_value_may_hold_colons),
		cmocka_unit_test(suffixes_scale_numbers),
		cmocka_unit_test(help_lists_every_option),
		cmocka_unit_test(switches_take_words_and_commas_separate),
		cmocka_unit_test(options_without_odebug_warn),
		cmocka_unit_test(odebug_other_than_0_or_1_warns_and_stays_off),
		cmocka_unit_test(odebug_0_is_off_and_silent),
		cmocka_unit_test(print_stats_prints_the_table_at_exit),
		cmocka_unit_test(selftest_can_be_skipped),
		cmocka_unit_test(garbage_options_do_not_crash),
		cmocka_unit_test(max_reports_accepts_the_maximum_it_names),
		cmocka_unit_test(pool_beyond_the_index_space_is_refused_at_parse_time),
		cmocka_unit_test(bad_values_are_echoed_bounded_and_escaped),
		cmocka_unit_test(unusable_symbolizer_warns_at_start),
		cmocka_unit_test(first_report_ends_with_the_next_step),
	};

	argv0 = argv[0];
	child_dispatch(argc, argv, child);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
