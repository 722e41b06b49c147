/* SPDX-License-Identifier: MIT */
/*
 * The debugger's entry points: debug_objects_report_hook is called by every
 * warning no suppression matched (printed or only counted), and
 * debug_object_print describes one address without ever waiting.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"

/*
 * This executable's definition interposes on libodebug's (libodebug calls
 * the hook through the PLT), so the test can count the calls.
 */
static int hooks;
static char hook_op[32];

void debug_objects_report_hook(const char *op, const void *addr, const char *type)
{
	(void)addr;
	(void)type;
	hooks++;
	snprintf(hook_op, sizeof(hook_op), "%s", op);
}

static const char *argv0;

static void three_reports(void)
{
	char *obj = malloc(64);

	debug_object_init(obj, &bare_descr);
	debug_object_activate(obj, &bare_descr);
	debug_object_activate(obj, &bare_descr);	/* 1: activate active */
	debug_object_init(obj, &bare_descr);		/* 2: init active */
	debug_object_free(obj, &bare_descr);		/* 3: free active */
	debug_object_deactivate(obj, &bare_descr);
	debug_object_free(obj, &bare_descr);
	free(obj);
}

static void child(const char *name)
{
	hooks = 0;
	three_reports();
	printf("child %s: %d hooks, last %s\n", name, hooks, hook_op);
}

static void hook_runs_for_each_report(void **state)
{
	(void)state;
	hooks = 0;
	capture_start();
	three_reports();
	free(capture_stop());
	assert_int_equal(hooks, 3);
	assert_string_equal(hook_op, "free");
}

static void hook_runs_past_max_reports(void **state)
{
	int status;
	char *out = run_child(argv0, "limited", &status, "ODEBUG=1",
			      "ODEBUG_OPTIONS=max_reports=1", (char *)NULL);

	(void)state;
	assert_int_equal(status, 0);
	assert_int_equal(count_lines_with(out, "ODEBUG: activate active"), 1);
	assert_int_equal(count_lines_with(out, "ODEBUG: init active"), 0);
	assert_int_equal(count_lines_with(out, "child limited: 3 hooks, last free"), 1);
	free(out);
}

static void hook_skips_suppressed_reports(void **state)
{
	char file[] = "/tmp/odebug-hook-XXXXXX", opt[128];
	int status, fd = mkstemp(file);
	char *out;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "op:init\nop:free\n", 16), 16);
	close(fd);
	snprintf(opt, sizeof(opt), "ODEBUG_OPTIONS=suppressions=%s", file);
	out = run_child(argv0, "suppressed", &status, "ODEBUG=1", opt, (char *)NULL);
	unlink(file);
	assert_int_equal(status, 0);
	assert_int_equal(count_lines_with(out, "child suppressed: 1 hooks, last activate"), 1);
	free(out);
}

static void print_describes_a_tracked_object(void **state)
{
	char *obj = malloc(64), *out, want[128];

	(void)state;
	debug_object_init(obj, &bare_descr);
	debug_object_activate(obj, &bare_descr);
	debug_object_active_state(obj, &bare_descr, 0, 7);
	capture_start();
	debug_object_print(obj, 2);
	out = capture_stop();
	snprintf(want, sizeof(want),
		 "ODEBUG: object %p is tracked: type %s, state active, active state 7\n",
		 (void *)obj, bare_descr.name);
	assert_non_null(strstr(out, want));
	assert_non_null(strstr(out, "ODEBUG_OPTIONS=origins=1"));
	free(out);
	debug_object_active_state(obj, &bare_descr, 7, 0);
	debug_object_deactivate(obj, &bare_descr);
	capture_start();
	debug_object_print(obj, 2);
	out = capture_stop();
	assert_non_null(strstr(out, "state inactive, active state 0"));
	free(out);
	debug_object_free(obj, &bare_descr);
	free(obj);
}

static void print_says_untracked(void **state)
{
	char *heap = malloc(8), local[8], *out;

	(void)state;
	debug_object_init_on_stack(local, &bare_descr);	/* learns the stack */
	debug_object_free(local, &bare_descr);
	capture_start();
	debug_object_print(heap, 2);
	debug_object_print(local, 2);
	out = capture_stop();
	assert_int_equal(count_lines_with(out, " is not tracked"), 2);
	assert_int_equal(count_lines_with(out, " is not tracked (it is on this thread's stack)"), 1);
	free(out);
	free(heap);
}

/* is_static_object runs under the object's bucket lock: print must not wait. */
static char *busy_out;

static bool print_from_callback(void *addr)
{
	debug_object_print(addr, 2);
	return false;
}

static const struct debug_obj_descr busy_descr = {
	.name = "busy_test",
	.is_static_object = print_from_callback,
};

static void print_never_blocks(void **state)
{
	static char obj[64];

	(void)state;
	capture_start();
	debug_object_assert_init(obj, &busy_descr);
	busy_out = capture_stop();
	assert_int_equal(count_lines_with(busy_out, ": busy ("), 1);
	free(busy_out);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(hook_runs_for_each_report),
		cmocka_unit_test(hook_runs_past_max_reports),
		cmocka_unit_test(hook_skips_suppressed_reports),
		cmocka_unit_test(print_describes_a_tracked_object),
		cmocka_unit_test(print_says_untracked),
		cmocka_unit_test(print_never_blocks),
	};

	argv0 = argv[0];
	child_dispatch(argc, argv, child);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
