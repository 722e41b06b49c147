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

/* Write @text as the suppressions file; the options that read it into @opts. */
static void write_rules(char *opts, size_t len, const char *text)
{
	char file[128];
	FILE *f;

	snprintf(file, sizeof(file), "%s/supp", tmpdir);
	f = fopen(file, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	snprintf(opts, len, "suppressions=%s:print_stats=1", file);
}

/* One rule may combine type, op and func: all must match. */
static void combined_rule_needs_every_term(void **state)
{
	static const struct { const char *rule; int printed; } cases[] = {
		{ "type:sinks_* op:free func:sinks_cul*\n", 0 },
		{ "op:free   type:sinks_*\n", 0 },
		{ "type:sinks_* op:activate\n", 1 },
		{ "type:nothing_like_this func:sinks_cul*\n", 1 },
		{ "op:free func:nothing_like_this\n", 1 },
	};
	char opts[200];
	int status;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *out;

		write_rules(opts, sizeof(opts), cases[i].rule);
		out = run(&status, "one", opts);
		if (count_lines_with(out, "ODEBUG: free active") != cases[i].printed ||
		    count_lines_with(out, "line ignored"))
			fail_msg("rule '%s': want %d reports, no bad line:\n%s", cases[i].rule,
				 cases[i].printed, out);
		free(out);
	}
	write_rules(opts, sizeof(opts), "type:a type:b\n");
	{
		char *out = run(&status, "one", opts);

		assert_int_equal(count_lines_with(out, "'type:a type:b' names one kind of term twice"), 1);
		free(out);
	}
}

/* print_suppressions=1: the line printed after a report, pasted, suppresses it. */
static void printed_suppression_suppresses_its_report(void **state)
{
	char opts[200], rule[400];
	const char *p, *end;
	int status;
	char *out = run(&status, "one", "print_suppressions=1");

	(void)state;
	p = strstr(out, "ODEBUG: suppression: ");
	if (!p)
		fail_msg("no suppression line:\n%s", out);
	p += strlen("ODEBUG: suppression: ");
	end = strchr(p, '\n');
	assert_non_null(end);
	snprintf(rule, sizeof(rule), "%.*s\n", (int)(end - p), p);
	/*
	 * The function is frame #0's: the culprit's free() where it is
	 * interposed, the test's release() helper in sanitizer builds.
	 */
	assert_non_null(strstr(rule, "type:sinks_timer op:free func:"));
	free(out);
	write_rules(opts, sizeof(opts), rule);
	out = run(&status, "one", opts);
	if (count_lines_with(out, "ODEBUG: free active") || !count_lines_with(out, "suppressed    : 1"))
		fail_msg("rule '%s' did not suppress:\n%s", rule, out);
	free(out);
}

int test_main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(suppressions_hide_reports_and_count_them),
		cmocka_unit_test(missing_suppressions_file_says_so),
		cmocka_unit_test(combined_rule_needs_every_term),
		cmocka_unit_test(printed_suppression_suppresses_its_report),
	};

	return run_scenario_tests(argc, argv, "suppressions", tests, sizeof(tests) / sizeof(tests[0]));
}
