/* SPDX-License-Identifier: MIT */
/*
 * suppressions=FILE: what it hides, what it counts, its bad lines.  Each case runs this program
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

static void suppressions_hide_reports_and_count_them(void **state)
{
	char file[128], opts[200];
	int status;
	FILE *f;
	char *out;

	(void)state;
	snprintf(file, sizeof(file), "%s/supp", tmpdir);
	f = fopen(file, "w");
	assert_non_null(f);
	fprintf(f, "# a comment\n\n  func:sinks_cul*  \nbogus line\ntype:\n");
	fclose(f);
	snprintf(opts, sizeof(opts), "suppressions=%s:print_stats=1", file);
	out = run(&status, "one", opts);
	assert_int_equal(count_lines_with(out, "ODEBUG: free active"), 0);
	assert_int_equal(count_lines_with(out, ":4: 'bogus line' is not type:NAME, op:OP or func:NAME (line ignored)"), 1);
	assert_int_equal(count_lines_with(out, ":5: 'type:' has an empty pattern"), 1);
	assert_int_equal(count_lines_with(out, "suppressed    : 1"), 1);
	assert_int_equal(count_lines_with(out, "warnings      : 1"), 1);
	free(out);

	f = fopen(file, "w");
	fprintf(f, "type:sinks_*\n");
	fclose(f);
	out = run(&status, "one", opts);
	assert_int_equal(count_lines_with(out, "ODEBUG: free active"), 0);
	assert_int_equal(count_lines_with(out, "suppressed    : 1"), 1);
	free(out);

	f = fopen(file, "w");
	fprintf(f, "op:activate\nfunc:nothing_like_this\n");
	fclose(f);
	out = run(&status, "one", opts);	/* "free" is not suppressed */
	assert_int_equal(count_lines_with(out, "ODEBUG: free active"), 1);
	assert_int_equal(count_lines_with(out, "suppressed    : 0"), 1);
	free(out);

	/* A suppressed report does not trip exitcode. */
	f = fopen(file, "w");
	fprintf(f, "op:free\n");
	fclose(f);
	snprintf(opts, sizeof(opts), "suppressions=%s:exitcode=9", file);
	out = run(&status, "one", opts);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	free(out);
}

static void missing_suppressions_file_says_so(void **state)
{
	int status;
	char *out = run(&status, "one", "suppressions=/nonexistent/supp");

	(void)state;
	assert_int_equal(count_lines_with(out, "cannot read suppressions file /nonexistent/supp"), 1);
	assert_int_equal(count_lines_with(out, "ODEBUG: free active"), 1);
	free(out);
}

int test_main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(suppressions_hide_reports_and_count_them),
		cmocka_unit_test(missing_suppressions_file_says_so),
	};

	return run_scenario_tests(argc, argv, "suppressions", tests, sizeof(tests) / sizeof(tests[0]));
}
