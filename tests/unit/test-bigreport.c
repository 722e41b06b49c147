/* SPDX-License-Identifier: MIT */
/*
 * A report larger than the sink takes whole: 128 frames
 * in each of three stacks, every frame with a 400-character function name.
 * It must be complete and valid (JSON that parses, text whose every line is
 * whole), and say how many frames it left out.  Each case is a child.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"

static const char *argv0;

#define DEEP deep_recursion_with_a_very_long_function_name_recursion_with_a_very_long_function_name_recursion_with_a_very_long_function_name_recursion_with_a_very_long_function_name_recursion_with_a_very_long_function_name_recursion_with_a_very_long_function_name_recursion_with_a_very_long_function_name_recursion_with_a_very_long_function_name_recursion_with_a_very_long_function_name_recursion_with_a_very_long_function_name_

__attribute__((noinline)) void DEEP(char *block, int depth);
__attribute__((noinline)) void DEEP(char *block, int depth)
{
	if (depth) {
		DEEP(block, depth - 1);
	} else {
		debug_object_init(block, &repair_descr);
		debug_object_activate(block, &repair_descr);
		release(block, 64);
	}
	__asm__ volatile("" ::: "memory");
}

static void child(const char *name)
{
	(void)name;
	DEEP(malloc(64), 200);
}

static char *deep_report(const char *format)
{
	char opt[128];
	int status;
	char *out;

	snprintf(opt, sizeof(opt),
		 "ODEBUG_OPTIONS=stack_depth=128:origins=1:log_format=%s", format);
	out = run_child(argv0, "deep", &status, "ODEBUG=1", opt, (char *)NULL);
	assert_int_equal(status, 0);
	return out;
}

static void json_report_is_valid_and_says_what_it_left_out(void **state)
{
	char *out = deep_report("json"), path[] = "/tmp/odebug-big.XXXXXX", cmd[512];
	char result[128] = "";
	FILE *f;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fputs(out, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd),
		 "python3 -c 'import json,sys\n"
		 "lines = [l for l in open(sys.argv[1]) if l.startswith(\"{\") and not l.startswith(\"{\\\"summary\")]\n"
		 "r = json.loads(lines[0])\n"
		 "print(len(lines), len(lines[0]) <= 128 * 1024, r[\"frames_not_shown\"] > 0,\n"
		 "      len(r[\"frames\"]) + len(r[\"initialised_at\"]) + len(r[\"activated_at\"]) + r[\"frames_not_shown\"])' %s",
		 path);
	f = popen(cmd, "r");
	assert_non_null(f);
	if (!fgets(result, sizeof(result), f))
		result[0] = '\0';
	assert_int_equal(pclose(f), 0);
	unlink(path);
	assert_string_equal(result, "1 True True 384\n");
	free(out);
}

static void text_report_says_what_it_left_out(void **state)
{
	char *out = deep_report("text"), *s;
	int frames = 0, dropped = 0;

	(void)state;
	/* The report, without the exit summary that follows it. */
	s = strstr(out, "ODEBUG: SUMMARY:");
	assert_non_null(s);
	assert_true((size_t)(s - out) <= 128 * 1024);
	for (s = out; (s = strstr(s, "\n    #")); s++)
		frames++;
	for (s = out; (s = strstr(s, "\n    ... ")); s++)
		dropped += atoi(s + 9);
	assert_int_equal(count_lines_with(out, " more frames not shown: the report would exceed 128 KiB"), 3);
	assert_true(frames > 0);
	assert_int_equal(frames + dropped, 384);
	/* Every line is whole: the last one too. */
	assert_true(out[strlen(out) - 1] == '\n');
	free(out);
}

int test_main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(json_report_is_valid_and_says_what_it_left_out),
		cmocka_unit_test(text_report_says_what_it_left_out),
	};

	argv0 = argv[0];
	child_dispatch(argc, argv, child);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
