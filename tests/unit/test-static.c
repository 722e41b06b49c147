/* SPDX-License-Identifier: MIT */
/*
 * Statically initialised objects: never passed to debug_object_init, they
 * are recognised on their first activate or assert_init, either by the
 * descriptor's is_static_object (spec §2.2, §2.6) or, for a seed-style
 * descriptor without it, by fixup_activate(NOTAVAILABLE) tracking the
 * object itself (include/odebug.h).
 */
#include <errno.h>

#include "helpers.h"

#define UNTRACKED ODEBUG_STATE_NOTAVAILABLE

/* What a static initialiser such as DEFINE_TIMER leaves behind. */
struct thing {
	int static_init;
	int payload[7];
};

#define STATIC_THING { .static_init = 1 }

static bool thing_is_static(void *addr)
{
	return ((struct thing *)addr)->static_init;
}

/* rec_descr (recording fixups) plus thing_is_static. */
static struct debug_obj_descr static_descr;
/* bare_descr plus thing_is_static: no fixups at all. */
static struct debug_obj_descr static_bare_descr;

/* Seed style: no is_static_object; fixup_activate recognises the object. */
static const struct debug_obj_descr seed_descr;
static int seed_calls;
static enum debug_obj_state seed_last_state;
static bool seed_result;

static bool seed_fixup_activate(void *addr, enum debug_obj_state state)
{
	seed_calls++;
	seed_last_state = state;
	if (state == ODEBUG_STATE_NOTAVAILABLE && thing_is_static(addr)) {
		debug_object_init(addr, &seed_descr);
		debug_object_activate(addr, &seed_descr);
	}
	return seed_result;
}

static const struct debug_obj_descr seed_descr = {
	.name = "test_seed",
	.fixup_activate = seed_fixup_activate,
};

static void mark(void)
{
	calls_reset();
	seed_calls = 0;
	seed_last_state = ODEBUG_STATE_MAX;
	seed_result = false;
	stats_mark();
}

static void expect(void *obj, enum debug_obj_state state, long warnings, long fixups)
{
	struct stats_delta d = stats_delta();

	assert_int_equal(debug_object_get_state(obj), state);
	assert_int_equal(d.warnings, warnings);
	assert_int_equal(d.fixups, fixups);
}

/* ---- is_static_object ---- */

static void activate_of_untracked_static_object_tracks_it_silently(void **state)
{
	static struct thing t = STATIC_THING;

	(void)state;
	mark();
	assert_int_equal(debug_object_activate(&t, &static_descr), 0);
	expect(&t, ODEBUG_STATE_ACTIVE, 0, 0);
	assert_int_equal(stats_delta().used, 1);
	assert_int_equal(ncalls, 0);
	/* Tracked like any other object from now on. */
	debug_object_deactivate(&t, &static_descr);
	expect(&t, ODEBUG_STATE_INACTIVE, 0, 0);
	debug_object_free(&t, &static_descr);
}

static void static_object_activated_twice_is_reported_as_double_activation(void **state)
{
	static struct thing t = STATIC_THING;

	(void)state;
	mark();
	assert_int_equal(debug_object_activate(&t, &static_descr), 0);
	/* Tracked now: the second activate is an ordinary "activate active". */
	assert_int_equal(debug_object_activate(&t, &static_descr), -EINVAL);
	expect(&t, ODEBUG_STATE_ACTIVE, 1, 0);
	assert_int_equal(ncalls, 1);
	assert_int_equal(calls[0].kind, FIX_ACTIVATE);
	assert_int_equal(calls[0].state, ODEBUG_STATE_ACTIVE);
}

static void assert_init_of_untracked_static_object_tracks_it_as_init(void **state)
{
	static struct thing t = STATIC_THING;

	(void)state;
	mark();
	debug_object_assert_init(&t, &static_descr);
	expect(&t, ODEBUG_STATE_INIT, 0, 0);
	assert_int_equal(stats_delta().used, 1);
	assert_int_equal(ncalls, 0);
	assert_int_equal(debug_object_activate(&t, &static_descr), 0);
	expect(&t, ODEBUG_STATE_ACTIVE, 0, 0);
	debug_object_deactivate(&t, &static_descr);
	debug_object_free(&t, &static_descr);
}

static void activate_of_non_static_object_warns_and_fails(void **state)
{
	static struct thing t;	/* static_init == 0 */

	(void)state;
	mark();
	assert_int_equal(debug_object_activate(&t, &static_descr), -EINVAL);
	expect(&t, UNTRACKED, 1, 0);
	assert_int_equal(ncalls, 1);
	assert_int_equal(calls[0].kind, FIX_ACTIVATE);
	assert_ptr_equal(calls[0].addr, &t);
	assert_int_equal(calls[0].state, ODEBUG_STATE_NOTAVAILABLE);
}

static void activate_of_non_static_object_succeeds_when_fixup_returns_true(void **state)
{
	static struct thing t;

	(void)state;
	mark();
	fixup_result[FIX_ACTIVATE] = true;
	assert_int_equal(debug_object_activate(&t, &static_descr), 0);
	expect(&t, UNTRACKED, 1, 1);
	assert_int_equal(ncalls, 1);
	assert_int_equal(calls[0].state, ODEBUG_STATE_NOTAVAILABLE);
}

static void activate_of_non_static_object_without_fixup_fails(void **state)
{
	static struct thing t;

	(void)state;
	mark();
	assert_int_equal(debug_object_activate(&t, &static_bare_descr), -EINVAL);
	expect(&t, UNTRACKED, 1, 0);
}

static void assert_init_of_non_static_object_warns_and_calls_its_fixup(void **state)
{
	static struct thing t;

	(void)state;
	mark();
	debug_object_assert_init(&t, &static_descr);
	expect(&t, UNTRACKED, 1, 0);
	assert_int_equal(ncalls, 1);
	assert_int_equal(calls[0].kind, FIX_ASSERT_INIT);
	assert_int_equal(calls[0].state, ODEBUG_STATE_NOTAVAILABLE);
}

static void static_object_freed_is_recognised_again_on_next_activate(void **state)
{
	static struct thing t = STATIC_THING;

	(void)state;
	debug_object_assert_init(&t, &static_descr);
	debug_object_free(&t, &static_descr);
	mark();
	assert_int_equal(debug_object_activate(&t, &static_descr), 0);
	expect(&t, ODEBUG_STATE_ACTIVE, 0, 0);
	debug_object_deactivate(&t, &static_descr);
	debug_object_free(&t, &static_descr);
}

/* ---- seed compatibility: fixup_activate(NOTAVAILABLE) tracks it ---- */

static void seed_fixup_that_tracks_a_static_object_silences_the_report(void **state)
{
	static struct thing t = STATIC_THING;

	(void)state;
	mark();
	assert_int_equal(debug_object_activate(&t, &seed_descr), 0);
	expect(&t, ODEBUG_STATE_ACTIVE, 0, 0);
	assert_int_equal(seed_calls, 1);
	assert_int_equal(seed_last_state, ODEBUG_STATE_NOTAVAILABLE);
	debug_object_deactivate(&t, &seed_descr);
	debug_object_free(&t, &seed_descr);
}

static void seed_fixup_that_tracks_and_returns_true_counts_a_fixup(void **state)
{
	static struct thing t = STATIC_THING;

	(void)state;
	mark();
	seed_result = true;	/* as the seed's own selftest did */
	assert_int_equal(debug_object_activate(&t, &seed_descr), 0);
	expect(&t, ODEBUG_STATE_ACTIVE, 0, 1);
	assert_int_equal(seed_calls, 1);
	debug_object_deactivate(&t, &seed_descr);
	debug_object_free(&t, &seed_descr);
}

static void seed_fixup_that_does_not_track_leaves_one_warning(void **state)
{
	static struct thing t;	/* not static: the fixup leaves it alone */

	(void)state;
	mark();
	assert_int_equal(debug_object_activate(&t, &seed_descr), -EINVAL);
	expect(&t, UNTRACKED, 1, 0);
	assert_int_equal(seed_calls, 1);
	assert_int_equal(seed_last_state, ODEBUG_STATE_NOTAVAILABLE);
}

static void seed_fixup_is_called_with_active_on_double_activation(void **state)
{
	static struct thing t = STATIC_THING;

	(void)state;
	assert_int_equal(debug_object_activate(&t, &seed_descr), 0);
	mark();
	assert_int_equal(debug_object_activate(&t, &seed_descr), -EINVAL);
	expect(&t, ODEBUG_STATE_ACTIVE, 1, 0);
	assert_int_equal(seed_calls, 1);
	assert_int_equal(seed_last_state, ODEBUG_STATE_ACTIVE);
}

int test_main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(activate_of_untracked_static_object_tracks_it_silently),
		cmocka_unit_test(static_object_activated_twice_is_reported_as_double_activation),
		cmocka_unit_test(assert_init_of_untracked_static_object_tracks_it_as_init),
		cmocka_unit_test(activate_of_non_static_object_warns_and_fails),
		cmocka_unit_test(activate_of_non_static_object_succeeds_when_fixup_returns_true),
		cmocka_unit_test(activate_of_non_static_object_without_fixup_fails),
		cmocka_unit_test(assert_init_of_non_static_object_warns_and_calls_its_fixup),
		cmocka_unit_test(static_object_freed_is_recognised_again_on_next_activate),
		cmocka_unit_test(seed_fixup_that_tracks_a_static_object_silences_the_report),
		cmocka_unit_test(seed_fixup_that_tracks_and_returns_true_counts_a_fixup),
		cmocka_unit_test(seed_fixup_that_does_not_track_leaves_one_warning),
		cmocka_unit_test(seed_fixup_is_called_with_active_on_double_activation),
	};

	(void)argc;
	(void)argv;
	static_descr = rec_descr;
	static_descr.is_static_object = thing_is_static;
	static_bare_descr = bare_descr;
	static_bare_descr.is_static_object = thing_is_static;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
