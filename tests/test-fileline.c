/* SPDX-License-Identifier: MIT */
/*
 * With libdw: static functions are named and frames end in " at file:line"
 * (built with -g).  libdw is loaded by the first report, not before.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

static int culprit_line;

static bool libdw_mapped(void)
{
	FILE *maps = fopen("/proc/self/maps", "r");
	char line[512];
	bool found = false;

	while (maps && fgets(line, sizeof(line), maps))
		found |= strstr(line, "/libdw") != NULL;
	if (maps)
		fclose(maps);
	return found;
}

/* static: invisible to dladdr, named only through the symbol table. */
__attribute__((noinline)) static void hidden_culprit(char *block)
{
	release(block, 64); culprit_line = __LINE__;
	__asm__ volatile("" ::: "memory");
}

static void report_names_static_function_and_line(void **state)
{
	char *block = malloc(64), *out, *frame, *eol, want[128];

	(void)state;
	assert_false(libdw_mapped());	/* nothing reported yet */
	debug_object_init(block, &repair_descr);
	debug_object_activate(block, &repair_descr);
	capture_start();
	hidden_culprit(block);
	out = capture_stop();
	snprintf(want, sizeof(want), "/test-fileline.c:%d\n", culprit_line);
	/* The culprit's frame (#0, or #1 below the sanitizer build's release()). */
	frame = strstr(out, " in hidden_culprit+");
	assert_non_null(frame);
	eol = strchr(frame, '\n');
	assert_non_null(eol);
	assert_true(strstr(frame, want) == eol - strlen(want) + 1);
	assert_true(libdw_mapped());
	free(out);
}

int test_main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(report_names_static_function_and_line),
	};

	(void)argc, (void)argv;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
