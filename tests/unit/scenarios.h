/* SPDX-License-Identifier: MIT */
/*
 * scenarios.h - what the report tests (test-sinks, test-suppressions,
 * test-origins) share: scenarios that make a report, run as a child of the
 * test program with its own ODEBUG_OPTIONS, and a scratch directory.
 */
#ifndef ODEBUG_TEST_SCENARIOS_H
#define ODEBUG_TEST_SCENARIOS_H

#include "helpers.h"

extern const char *argv0;
extern char tmpdir[64];		/* this run's scratch directory */

/* Run scenario @scenario ("one", "two", "exit", ...) with @options. */
char *run(int *status, const char *scenario, const char *options);
char *read_file(const char *path);
/* The file log.<pid> a child wrote: the only one in tmpdir (but @skip). */
char *only_log(char *path, size_t size, const char *skip);
/* test_main() of each: child dispatch, scratch directory, @tests. */
/* Empty the scratch directory. */
void clean_tmpdir(void);
int run_scenario_tests(int argc, char **argv, const char *group,
		       const struct CMUnitTest *tests, size_t n);

#endif
