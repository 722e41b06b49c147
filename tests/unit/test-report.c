/* SPDX-License-Identifier: MIT */
/* The report's text: op, state, astate, address, type, hint, thread, frames. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

struct timer {
	void (*callback)(void);
	int armed;
};

void report_test_callback(void);
void report_test_callback(void) {}

static void *timer_hint(void *addr)
{
	return (void *)((struct timer *)addr)->callback;
}

static const struct debug_obj_descr timer_descr = {
	.name = "report_timer",
	.debug_hint = timer_hint,
};

/* Named in the backtrace: exported by export_dynamic, kept out of line. */
__attribute__((noinline)) void report_test_culprit(struct timer *t);
__attribute__((noinline)) void report_test_culprit(struct timer *t)
{
	debug_object_activate(t, &timer_descr);
	__asm__ volatile("" ::: "memory");
}

static void report_names_op_state_type_hint_and_caller(void **state)
{
	static struct timer t = { report_test_callback, 0 };
	char addr[32], *out;

	(void)state;
	debug_object_init(&t, &timer_descr);
	debug_object_activate(&t, &timer_descr);
	capture_start();
	report_test_culprit(&t);
	out = capture_stop();
	snprintf(addr, sizeof(addr), "object: %p ", (void *)&t);
	assert_non_null(strstr(out, "ODEBUG: activate active (active state 0) "));
	assert_non_null(strstr(out, addr));
	assert_non_null(strstr(out, "object type: report_timer hint: report_test_callback+0x0\n"));
	assert_non_null(strstr(out, "ODEBUG: in thread "));
	assert_non_null(strstr(out, " of pid "));
	/* Frame #0 is the culprit, not libodebug's own code. */
	assert_non_null(strstr(out, "    #0 0x"));
	assert_non_null(strstr(out, " in report_test_culprit+0x"));
	assert_null(strstr(out, "in debug_object_activate"));
	assert_null(strstr(out, "in odebug_"));
	assert_non_null(strstr(out, "test-report+0x"));
	free(out);
	debug_object_deactivate(&t, &timer_descr);
	debug_object_free(&t, &timer_descr);
}

static void report_of_untracked_object_says_not_available(void **state)
{
	static char obj[32];
	char *out;

	(void)state;
	capture_start();
	debug_object_deactivate(obj, &bare_descr);
	out = capture_stop();
	assert_non_null(strstr(out, "ODEBUG: deactivate not available (active state 0) "));
	/* No hint named: the line ends at the type, no "hint: 0x0". */
	assert_non_null(strstr(out, "object type: test_bare\n"));
	assert_null(strstr(out, "hint:"));
	free(out);
}

static void report_preserves_errno(void **state)
{
	static char obj[32];
	char *out;

	(void)state;
	capture_start();
	errno = 4242;
	debug_object_deactivate(obj, &bare_descr);
	assert_int_equal(errno, 4242);
	out = capture_stop();
	assert_non_null(strstr(out, "deactivate not available"));
	free(out);
}

/*
 * A tracker names its descriptor by registry slot, not by the address's
 * low bits: a descriptor at any address (packed into another structure)
 * is one like any other.  A misaligned one is undefined behaviour in C,
 * so UBSan builds place it 8-aligned: the calls still run, the
 * misalignment does not.
 */
static void descriptor_at_any_address_is_accepted(void **state)
{
	static char obj[8];
	static _Alignas(16) char raw[sizeof(struct debug_obj_descr) + 16];
#ifdef ODEBUG_TEST_UBSAN
	struct debug_obj_descr *odd = (void *)(raw + 8);
#else
	struct debug_obj_descr *odd = (void *)(raw + 4);
#endif
	const struct debug_obj_descr named = { .name = "odd_descr" };
	char *out;

	(void)state;
	memcpy(odd, &named, sizeof(named));
	stats_mark();
	capture_start();
	debug_object_init(obj, odd);
	assert_int_equal(debug_object_get_state(obj), ODEBUG_STATE_INIT);
	assert_int_equal(debug_object_activate(obj, odd), 0);
	debug_object_deactivate(obj, odd);
	debug_object_free(obj, odd);
	out = capture_stop();
	assert_string_equal(out, "");
	assert_int_equal(debug_object_get_state(obj), ODEBUG_STATE_NOTAVAILABLE);
	assert_int_equal(stats_delta().warnings, 0);
	free(out);
}

static void null_arguments_give_one_line_and_no_crash(void **state)
{
	static char obj[8];
	static const struct debug_obj_descr nameless = { .name = NULL };
	char *out;

	(void)state;
	stats_mark();
	capture_start();
	debug_object_init(NULL, &bare_descr);
	debug_object_init(obj, NULL);
	assert_int_equal(debug_object_activate(obj, &nameless), -EINVAL);
	/* A tracker's word holds 48 bits of address (x86-64 user space: 47). */
	debug_object_init((void *)(1ul << 50), &bare_descr);
	out = capture_stop();
	assert_int_equal(count_lines_with(out, "debug_object_init called with a NULL object; call ignored"), 1);
	assert_int_equal(count_lines_with(out, "debug_object_init called with a NULL descriptor; call ignored"), 1);
	assert_int_equal(count_lines_with(out, "debug_object_activate called with a descriptor without a name"), 1);
	assert_int_equal(count_lines_with(out, "debug_object_init called with an address beyond 48 bits; call ignored"), 1);
	assert_int_equal(debug_object_get_state(obj), ODEBUG_STATE_NOTAVAILABLE);
	assert_int_equal(debug_object_get_state((void *)(1ul << 50)), ODEBUG_STATE_NOTAVAILABLE);
	assert_int_equal(stats_delta().warnings, 0);
	free(out);
}

/*
 * A tracker names its descriptor by one of 4096 registry slots: objects of
 * the descriptors beyond are not tracked, and one line says so.  Last in
 * this program: the registry stays full.
 */
static void descriptors_beyond_the_registry_are_not_tracked(void **state)
{
	enum { N = 4200 };
	static struct debug_obj_descr many[N];
	static char objs[N];
	int i, tracked = 0;
	char *out;

	(void)state;
	capture_start();
	for (i = 0; i < N; i++) {
		many[i].name = "many";
		debug_object_init(&objs[i], &many[i]);
		tracked += debug_object_get_state(&objs[i]) == ODEBUG_STATE_INIT;
	}
	out = capture_stop();
	/* The selftest's and the earlier tests' descriptors hold a few slots. */
	assert_true(tracked > 4096 - 16 && tracked <= 4096);
	assert_int_equal(debug_object_get_state(&objs[N - 1]), ODEBUG_STATE_NOTAVAILABLE);
	assert_int_equal(count_lines_with(out, "over 4096 descriptors: objects of those beyond are not tracked"), 1);
	for (i = 0; i < N; i++)
		debug_object_free(&objs[i], &many[i]);
	free(out);
}

int test_main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(report_names_op_state_type_hint_and_caller),
		cmocka_unit_test(report_of_untracked_object_says_not_available),
		cmocka_unit_test(report_preserves_errno),
		cmocka_unit_test(null_arguments_give_one_line_and_no_crash),
		cmocka_unit_test(descriptor_at_any_address_is_accepted),
		cmocka_unit_test(descriptors_beyond_the_registry_are_not_tracked),
	};

	(void)argc, (void)argv;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
