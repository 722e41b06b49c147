/* SPDX-License-Identifier: MIT */
/*
 * The active state (spec §2.7, "astate semantics"): a sub-state of ACTIVE,
 * 0 when a tracker is made, moved only by active_state with the expected
 * value, and back at 0 before deactivate is allowed.
 *
 * The first two tests read the report text, so they must stay first: only
 * the first max_reports (5) reports of the process are printed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "helpers.h"

#define UNTRACKED ODEBUG_STATE_NOTAVAILABLE

static const char *argv0;

/* A tracked, ACTIVE object; fixup record cleared, counters marked. */
static void *activated(void *obj)
{
	debug_object_init(obj, &rec_descr);
	assert_int_equal(debug_object_activate(obj, &rec_descr), 0);
	calls_reset();
	stats_mark();
	return obj;
}

static void expect(void *obj, enum debug_obj_state state, long warnings)
{
	assert_int_equal(debug_object_get_state(obj), state);
	assert_int_equal(stats_delta().warnings, warnings);
	assert_int_equal(stats_delta().fixups, 0);
}

/* The active state is @astate: moving it away and back is silent. */
static void expect_astate(void *obj, unsigned int astate)
{
	long before = stats_delta().warnings;

	debug_object_active_state(obj, &rec_descr, astate, astate + 100);
	debug_object_active_state(obj, &rec_descr, astate + 100, astate);
	assert_int_equal(stats_delta().warnings, before);
}

static void mismatching_expect_warns_and_reports_the_current_astate(void **state)
{
	static char obj[16];
	char *out;

	(void)state;
	activated(obj);
	debug_object_active_state(obj, &rec_descr, 0, 1);
	capture_start();
	debug_object_active_state(obj, &rec_descr, 5, 2);
	out = capture_stop();
	assert_int_equal(count_lines_with(out, "ODEBUG: active_state active (active state 1) "), 1);
	free(out);
	expect(obj, ODEBUG_STATE_ACTIVE, 1);
	expect_astate(obj, 1);
	assert_int_equal(ncalls, 0);
}

static void deactivate_is_refused_while_astate_is_not_zero(void **state)
{
	static char obj[16];
	char *out;

	(void)state;
	activated(obj);
	debug_object_active_state(obj, &rec_descr, 0, 3);
	capture_start();
	debug_object_deactivate(obj, &rec_descr);
	out = capture_stop();
	assert_int_equal(count_lines_with(out, "ODEBUG: deactivate active (active state 3) "), 1);
	free(out);
	expect(obj, ODEBUG_STATE_ACTIVE, 1);
	/* The refused deactivate did not reset it either. */
	expect_astate(obj, 3);
	assert_int_equal(ncalls, 0);
}

static void new_tracker_starts_with_astate_zero(void **state)
{
	static char obj[16];

	(void)state;
	activated(obj);
	debug_object_active_state(obj, &rec_descr, 0, 1);
	expect(obj, ODEBUG_STATE_ACTIVE, 0);
}

static void matching_expect_moves_astate_step_by_step(void **state)
{
	static char obj[16];

	(void)state;
	activated(obj);
	debug_object_active_state(obj, &rec_descr, 0, 1);
	debug_object_active_state(obj, &rec_descr, 1, 2);
	expect(obj, ODEBUG_STATE_ACTIVE, 0);
	/* 1 is gone: expecting it now is a mismatch. */
	debug_object_active_state(obj, &rec_descr, 1, 0);
	expect(obj, ODEBUG_STATE_ACTIVE, 1);
	debug_object_active_state(obj, &rec_descr, 2, 0);
	expect(obj, ODEBUG_STATE_ACTIVE, 1);
}

static void deactivate_works_once_astate_is_back_at_zero(void **state)
{
	static char obj[16];

	(void)state;
	activated(obj);
	debug_object_active_state(obj, &rec_descr, 0, 7);
	debug_object_deactivate(obj, &rec_descr);
	expect(obj, ODEBUG_STATE_ACTIVE, 1);
	debug_object_active_state(obj, &rec_descr, 7, 0);
	debug_object_deactivate(obj, &rec_descr);
	expect(obj, ODEBUG_STATE_INACTIVE, 1);
	debug_object_free(obj, &rec_descr);
	assert_int_equal(debug_object_get_state(obj), UNTRACKED);
}

static void active_state_on_non_active_object_warns_and_changes_nothing(void **state)
{
	static char obj[16];

	(void)state;
	calls_reset();
	stats_mark();
	debug_object_init(obj, &rec_descr);
	debug_object_active_state(obj, &rec_descr, 0, 1);
	expect(obj, ODEBUG_STATE_INIT, 1);
	debug_object_deactivate(obj, &rec_descr);
	debug_object_active_state(obj, &rec_descr, 0, 1);
	expect(obj, ODEBUG_STATE_INACTIVE, 2);
	/* Had either call moved it, deactivate below would be refused. */
	assert_int_equal(debug_object_activate(obj, &rec_descr), 0);
	expect_astate(obj, 0);
	debug_object_deactivate(obj, &rec_descr);
	debug_object_destroy(obj, &rec_descr);
	debug_object_active_state(obj, &rec_descr, 0, 1);
	expect(obj, ODEBUG_STATE_DESTROYED, 3);
	assert_int_equal(ncalls, 0);
	debug_object_free(obj, &rec_descr);
}

static void astate_survives_reinit_and_reactivate_of_active_object(void **state)
{
	static char obj[16];

	(void)state;
	activated(obj);
	debug_object_active_state(obj, &rec_descr, 0, 4);
	debug_object_init(obj, &rec_descr);
	expect(obj, ODEBUG_STATE_ACTIVE, 1);
	assert_int_equal(ncalls, 1);
	assert_int_equal(calls[0].kind, FIX_INIT);
	expect_astate(obj, 4);
	assert_int_equal(debug_object_activate(obj, &rec_descr), -EINVAL);
	expect(obj, ODEBUG_STATE_ACTIVE, 2);
	expect_astate(obj, 4);
}

/*
 * Child scenario, run with the free check forced on whatever the build's
 * default: an ACTIVE object with astate 6 can only leave ACTIVE by having
 * its memory released; once re-tracked it starts again at 0.
 */
static void reset_scenario(const char *name)
{
	static char obj[16];

	(void)name;
	debug_object_init(obj, &bare_descr);
	debug_object_activate(obj, &bare_descr);
	debug_object_active_state(obj, &bare_descr, 0, 6);
	debug_check_no_obj_freed(obj, sizeof(obj));
	fprintf(stderr, "dropped=%d\n", debug_object_get_state(obj) == UNTRACKED);
	debug_object_init(obj, &bare_descr);
	debug_object_activate(obj, &bare_descr);
	/* Refused unless the new tracker's astate is 0. */
	debug_object_deactivate(obj, &bare_descr);
	fprintf(stderr, "deactivated=%d\n",
		debug_object_get_state(obj) == ODEBUG_STATE_INACTIVE);
}

static void astate_is_reset_only_when_a_new_tracker_is_made(void **state)
{
	int status;
	char *out = run_child(argv0, "reset", &status,
			      "ODEBUG_OPTIONS=check_free=1", (char *)NULL);

	(void)state;
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(count_lines_with(out, "dropped=1"), 1);
	assert_int_equal(count_lines_with(out, "deactivated=1"), 1);
	free(out);
}

static void active_state_of_untracked_object_warns(void **state)
{
	static char obj[16];

	(void)state;
	calls_reset();
	stats_mark();
	debug_object_active_state(obj, &rec_descr, 0, 1);
	expect(obj, UNTRACKED, 1);
	assert_int_equal(stats_delta().used, 0);
	assert_int_equal(ncalls, 0);
}

int test_main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		/* These two read printed reports: keep them first. */
		cmocka_unit_test(mismatching_expect_warns_and_reports_the_current_astate),
		cmocka_unit_test(deactivate_is_refused_while_astate_is_not_zero),

		cmocka_unit_test(new_tracker_starts_with_astate_zero),
		cmocka_unit_test(matching_expect_moves_astate_step_by_step),
		cmocka_unit_test(deactivate_works_once_astate_is_back_at_zero),
		cmocka_unit_test(active_state_on_non_active_object_warns_and_changes_nothing),
		cmocka_unit_test(astate_survives_reinit_and_reactivate_of_active_object),
		cmocka_unit_test(astate_is_reset_only_when_a_new_tracker_is_made),
		cmocka_unit_test(active_state_of_untracked_object_warns),
	};

	child_dispatch(argc, argv, reset_scenario);
	argv0 = argv[0];
	return cmocka_run_group_tests(tests, NULL, NULL);
}
