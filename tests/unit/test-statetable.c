/* SPDX-License-Identifier: MIT */
/*
 * The state transition table (spec §2.1-2.7), cell by cell: for each
 * operation from each observable state, the resulting state, the warnings
 * and fixups deltas, which fixup ran with which state, and activate's
 * return value.  Statically initialised objects are in test-static.c, the
 * active state in test-astate.c.
 *
 * Every test takes fresh addresses from a static arena (never the stack),
 * so no test sees another's trackers.
 */
#include <errno.h>
#include <stdlib.h>

#include "helpers.h"

#define UNTRACKED ODEBUG_STATE_NOTAVAILABLE

static char arena[512][32];
static size_t next_slot;

/* Counters as the process found them, before any test ran. */
static struct debug_objects_stats at_start;

/* rec_descr plus an is_static_object that always says no. */
static struct debug_obj_descr nonstatic_descr;

static bool never_static(void *addr)
{
	(void)addr;
	return false;
}

static void *fresh(void)
{
	assert_true(next_slot < sizeof(arena) / sizeof(arena[0]));
	return arena[next_slot++];
}

/*
 * A fresh object brought into @state with @d; then the fixup record is
 * cleared (all fixups return false) and the counters are marked.
 */
static void *object_in(enum debug_obj_state state, const struct debug_obj_descr *d)
{
	void *obj = fresh();

	switch (state) {
	case ODEBUG_STATE_INIT:
		debug_object_init(obj, d);
		break;
	case ODEBUG_STATE_INACTIVE:
		debug_object_init(obj, d);
		assert_int_equal(debug_object_activate(obj, d), 0);
		debug_object_deactivate(obj, d);
		break;
	case ODEBUG_STATE_ACTIVE:
		debug_object_init(obj, d);
		assert_int_equal(debug_object_activate(obj, d), 0);
		break;
	case ODEBUG_STATE_DESTROYED:
		debug_object_init(obj, d);
		debug_object_destroy(obj, d);
		break;
	default:
		break;
	}
	assert_int_equal(debug_object_get_state(obj), state);
	calls_reset();
	stats_mark();
	return obj;
}

static void expect(void *obj, enum debug_obj_state state, long warnings, long fixups)
{
	struct stats_delta d = stats_delta();

	assert_int_equal(debug_object_get_state(obj), state);
	assert_int_equal(d.warnings, warnings);
	assert_int_equal(d.fixups, fixups);
}

static void expect_no_fixup_call(void)
{
	assert_int_equal(ncalls, 0);
}

static void expect_one_fixup_call(enum fixup_kind kind, void *obj,
				  enum debug_obj_state state)
{
	assert_int_equal(ncalls, 1);
	assert_int_equal(calls[0].kind, kind);
	assert_ptr_equal(calls[0].addr, obj);
	assert_int_equal(calls[0].state, state);
}

/* ---- the selftest left no trace ---- */

static void selftest_passed_and_left_all_counters_at_zero(void **state)
{
	(void)state;
	assert_true(debug_objects_enabled());
	assert_int_equal(at_start.warnings, 0);
	assert_int_equal(at_start.fixups, 0);
	assert_int_equal(at_start.pool_used, 0);
}

/* ---- 2.1 init and init_on_stack (each test runs with both) ---- */

struct init_op {
	void (*fn)(void *addr, const struct debug_obj_descr *descr);
	bool on_stack;
};

static struct init_op plain_init = { debug_object_init, false };
static struct init_op stack_init = { debug_object_init_on_stack, true };

static void init_of_untracked_object_tracks_it_as_init(void **state)
{
	struct init_op *op = *state;
	void *obj = object_in(UNTRACKED, &rec_descr);
	char *out;

	capture_start();
	op->fn(obj, &rec_descr);
	out = capture_stop();
	expect(obj, ODEBUG_STATE_INIT, 0, 0);
	assert_int_equal(stats_delta().used, 1);
	expect_no_fixup_call();
	/* A static object annotated as on stack gets the notice, only that. */
	assert_int_equal(count_lines_with(out, "is NOT on stack"), op->on_stack ? 1 : 0);
	free(out);
}

static void init_of_init_object_is_a_silent_reinit(void **state)
{
	struct init_op *op = *state;
	void *obj = object_in(ODEBUG_STATE_INIT, &rec_descr);

	op->fn(obj, &rec_descr);
	expect(obj, ODEBUG_STATE_INIT, 0, 0);
	assert_int_equal(stats_delta().used, 0);
	expect_no_fixup_call();
}

static void init_of_inactive_object_makes_it_init(void **state)
{
	struct init_op *op = *state;
	void *obj = object_in(ODEBUG_STATE_INACTIVE, &rec_descr);

	op->fn(obj, &rec_descr);
	expect(obj, ODEBUG_STATE_INIT, 0, 0);
	expect_no_fixup_call();
}

static void init_of_active_object_warns_and_calls_fixup_init(void **state)
{
	struct init_op *op = *state;
	void *obj = object_in(ODEBUG_STATE_ACTIVE, &rec_descr);

	op->fn(obj, &rec_descr);
	expect(obj, ODEBUG_STATE_ACTIVE, 1, 0);
	expect_one_fixup_call(FIX_INIT, obj, ODEBUG_STATE_ACTIVE);
}

static void init_of_active_object_counts_a_fixup_that_returns_true(void **state)
{
	struct init_op *op = *state;
	void *obj = object_in(ODEBUG_STATE_ACTIVE, &rec_descr);

	fixup_result[FIX_INIT] = true;
	op->fn(obj, &rec_descr);
	/* The core leaves the state alone; this fixup repaired nothing. */
	expect(obj, ODEBUG_STATE_ACTIVE, 1, 1);
	expect_one_fixup_call(FIX_INIT, obj, ODEBUG_STATE_ACTIVE);
}

static void init_of_active_object_is_repaired_by_its_fixup(void **state)
{
	struct init_op *op = *state;
	void *obj = object_in(ODEBUG_STATE_ACTIVE, &repair_descr);

	op->fn(obj, &repair_descr);
	expect(obj, ODEBUG_STATE_INIT, 1, 1);
	expect_one_fixup_call(FIX_INIT, obj, ODEBUG_STATE_ACTIVE);
}

static void init_of_destroyed_object_warns_without_fixup(void **state)
{
	struct init_op *op = *state;
	void *obj = object_in(ODEBUG_STATE_DESTROYED, &rec_descr);

	op->fn(obj, &rec_descr);
	expect(obj, ODEBUG_STATE_DESTROYED, 1, 0);
	expect_no_fixup_call();
}

/* ---- 2.2 activate ---- */

static void activate_of_untracked_object_warns_and_fails(void **state)
{
	void *obj = object_in(UNTRACKED, &nonstatic_descr);

	(void)state;
	assert_int_equal(debug_object_activate(obj, &nonstatic_descr), -EINVAL);
	expect(obj, UNTRACKED, 1, 0);
	expect_one_fixup_call(FIX_ACTIVATE, obj, ODEBUG_STATE_NOTAVAILABLE);
}

static void activate_of_untracked_object_succeeds_when_fixup_returns_true(void **state)
{
	void *obj = object_in(UNTRACKED, &nonstatic_descr);

	(void)state;
	fixup_result[FIX_ACTIVATE] = true;
	assert_int_equal(debug_object_activate(obj, &nonstatic_descr), 0);
	/* Still reported; the fixup did not track it, so neither does the core. */
	expect(obj, UNTRACKED, 1, 1);
	expect_one_fixup_call(FIX_ACTIVATE, obj, ODEBUG_STATE_NOTAVAILABLE);
}

static void activate_of_untracked_object_without_fixup_fails(void **state)
{
	void *obj = object_in(UNTRACKED, &bare_descr);

	(void)state;
	assert_int_equal(debug_object_activate(obj, &bare_descr), -EINVAL);
	expect(obj, UNTRACKED, 1, 0);
	assert_int_equal(stats_delta().used, 0);
}

static void activate_of_init_object_makes_it_active(void **state)
{
	void *obj = object_in(ODEBUG_STATE_INIT, &rec_descr);

	(void)state;
	assert_int_equal(debug_object_activate(obj, &rec_descr), 0);
	expect(obj, ODEBUG_STATE_ACTIVE, 0, 0);
	expect_no_fixup_call();
}

static void activate_of_inactive_object_makes_it_active(void **state)
{
	void *obj = object_in(ODEBUG_STATE_INACTIVE, &rec_descr);

	(void)state;
	assert_int_equal(debug_object_activate(obj, &rec_descr), 0);
	expect(obj, ODEBUG_STATE_ACTIVE, 0, 0);
	expect_no_fixup_call();
}

static void activate_of_active_object_warns_and_fails_when_fixup_returns_false(void **state)
{
	void *obj = object_in(ODEBUG_STATE_ACTIVE, &rec_descr);

	(void)state;
	assert_int_equal(debug_object_activate(obj, &rec_descr), -EINVAL);
	expect(obj, ODEBUG_STATE_ACTIVE, 1, 0);
	expect_one_fixup_call(FIX_ACTIVATE, obj, ODEBUG_STATE_ACTIVE);
}

static void activate_of_active_object_succeeds_when_fixup_returns_true(void **state)
{
	void *obj = object_in(ODEBUG_STATE_ACTIVE, &rec_descr);

	(void)state;
	fixup_result[FIX_ACTIVATE] = true;
	assert_int_equal(debug_object_activate(obj, &rec_descr), 0);
	expect(obj, ODEBUG_STATE_ACTIVE, 1, 1);
	expect_one_fixup_call(FIX_ACTIVATE, obj, ODEBUG_STATE_ACTIVE);
}

static void activate_of_active_object_without_fixup_fails(void **state)
{
	void *obj = object_in(ODEBUG_STATE_ACTIVE, &bare_descr);

	(void)state;
	assert_int_equal(debug_object_activate(obj, &bare_descr), -EINVAL);
	expect(obj, ODEBUG_STATE_ACTIVE, 1, 0);
}

static void activate_of_active_object_is_repaired_by_its_fixup(void **state)
{
	void *obj = object_in(ODEBUG_STATE_ACTIVE, &repair_descr);

	(void)state;
	assert_int_equal(debug_object_activate(obj, &repair_descr), 0);
	expect(obj, ODEBUG_STATE_ACTIVE, 1, 1);
	expect_one_fixup_call(FIX_ACTIVATE, obj, ODEBUG_STATE_ACTIVE);
}

static void activate_of_destroyed_object_warns_and_fails_without_fixup(void **state)
{
	void *obj = object_in(ODEBUG_STATE_DESTROYED, &rec_descr);

	(void)state;
	fixup_result[FIX_ACTIVATE] = true;	/* not consulted */
	assert_int_equal(debug_object_activate(obj, &rec_descr), -EINVAL);
	expect(obj, ODEBUG_STATE_DESTROYED, 1, 0);
	expect_no_fixup_call();
}

/* ---- 2.3 deactivate (astate != 0 is in test-astate.c) ---- */

static void deactivate_of_untracked_object_warns(void **state)
{
	void *obj = object_in(UNTRACKED, &rec_descr);

	(void)state;
	debug_object_deactivate(obj, &rec_descr);
	expect(obj, UNTRACKED, 1, 0);
	expect_no_fixup_call();
}

static void deactivate_of_init_object_makes_it_inactive(void **state)
{
	void *obj = object_in(ODEBUG_STATE_INIT, &rec_descr);

	(void)state;
	debug_object_deactivate(obj, &rec_descr);
	expect(obj, ODEBUG_STATE_INACTIVE, 0, 0);
	expect_no_fixup_call();
}

static void deactivate_of_inactive_object_is_silent(void **state)
{
	void *obj = object_in(ODEBUG_STATE_INACTIVE, &rec_descr);

	(void)state;
	debug_object_deactivate(obj, &rec_descr);
	expect(obj, ODEBUG_STATE_INACTIVE, 0, 0);
	expect_no_fixup_call();
}

static void deactivate_of_active_object_makes_it_inactive(void **state)
{
	void *obj = object_in(ODEBUG_STATE_ACTIVE, &rec_descr);

	(void)state;
	debug_object_deactivate(obj, &rec_descr);
	expect(obj, ODEBUG_STATE_INACTIVE, 0, 0);
	expect_no_fixup_call();
}

static void deactivate_of_destroyed_object_warns_without_fixup(void **state)
{
	void *obj = object_in(ODEBUG_STATE_DESTROYED, &rec_descr);

	(void)state;
	debug_object_deactivate(obj, &rec_descr);
	expect(obj, ODEBUG_STATE_DESTROYED, 1, 0);
	expect_no_fixup_call();
}

/* ---- 2.4 destroy ---- */

static void destroy_of_untracked_object_is_silent(void **state)
{
	void *obj = object_in(UNTRACKED, &rec_descr);

	(void)state;
	debug_object_destroy(obj, &rec_descr);
	expect(obj, UNTRACKED, 0, 0);
	assert_int_equal(stats_delta().used, 0);
	expect_no_fixup_call();
}

static void destroy_of_init_object_makes_it_destroyed(void **state)
{
	void *obj = object_in(ODEBUG_STATE_INIT, &rec_descr);

	(void)state;
	debug_object_destroy(obj, &rec_descr);
	expect(obj, ODEBUG_STATE_DESTROYED, 0, 0);
	expect_no_fixup_call();
}

static void destroy_of_inactive_object_makes_it_destroyed(void **state)
{
	void *obj = object_in(ODEBUG_STATE_INACTIVE, &rec_descr);

	(void)state;
	debug_object_destroy(obj, &rec_descr);
	expect(obj, ODEBUG_STATE_DESTROYED, 0, 0);
	expect_no_fixup_call();
}

static void destroy_of_active_object_warns_and_calls_fixup_destroy(void **state)
{
	void *obj = object_in(ODEBUG_STATE_ACTIVE, &rec_descr);

	(void)state;
	debug_object_destroy(obj, &rec_descr);
	expect(obj, ODEBUG_STATE_ACTIVE, 1, 0);
	expect_one_fixup_call(FIX_DESTROY, obj, ODEBUG_STATE_ACTIVE);
}

static void destroy_of_active_object_counts_a_fixup_that_returns_true(void **state)
{
	void *obj = object_in(ODEBUG_STATE_ACTIVE, &rec_descr);

	(void)state;
	fixup_result[FIX_DESTROY] = true;
	debug_object_destroy(obj, &rec_descr);
	expect(obj, ODEBUG_STATE_ACTIVE, 1, 1);
	expect_one_fixup_call(FIX_DESTROY, obj, ODEBUG_STATE_ACTIVE);
}

static void destroy_of_active_object_is_repaired_by_its_fixup(void **state)
{
	void *obj = object_in(ODEBUG_STATE_ACTIVE, &repair_descr);

	(void)state;
	debug_object_destroy(obj, &repair_descr);
	expect(obj, ODEBUG_STATE_DESTROYED, 1, 1);
	expect_one_fixup_call(FIX_DESTROY, obj, ODEBUG_STATE_ACTIVE);
}

static void destroy_of_destroyed_object_warns_without_fixup(void **state)
{
	void *obj = object_in(ODEBUG_STATE_DESTROYED, &rec_descr);

	(void)state;
	debug_object_destroy(obj, &rec_descr);
	expect(obj, ODEBUG_STATE_DESTROYED, 1, 0);
	expect_no_fixup_call();
}

/* ---- 2.5 free ---- */

static void free_of_untracked_object_is_silent(void **state)
{
	void *obj = object_in(UNTRACKED, &rec_descr);

	(void)state;
	debug_object_free(obj, &rec_descr);
	expect(obj, UNTRACKED, 0, 0);
	expect_no_fixup_call();
}

static void free_of_init_inactive_or_destroyed_object_drops_its_tracker(void **state)
{
	static const enum debug_obj_state from[] = {
		ODEBUG_STATE_INIT, ODEBUG_STATE_INACTIVE, ODEBUG_STATE_DESTROYED,
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(from) / sizeof(from[0]); i++) {
		void *obj = object_in(from[i], &rec_descr);

		debug_object_free(obj, &rec_descr);
		expect(obj, UNTRACKED, 0, 0);
		assert_int_equal(stats_delta().used, -1);
		expect_no_fixup_call();
	}
}

static void free_of_active_object_warns_and_keeps_its_tracker(void **state)
{
	void *obj = object_in(ODEBUG_STATE_ACTIVE, &rec_descr);

	(void)state;
	debug_object_free(obj, &rec_descr);
	expect(obj, ODEBUG_STATE_ACTIVE, 1, 0);
	assert_int_equal(stats_delta().used, 0);
	expect_one_fixup_call(FIX_FREE, obj, ODEBUG_STATE_ACTIVE);
}

static void free_of_active_object_counts_a_fixup_that_returns_true(void **state)
{
	void *obj = object_in(ODEBUG_STATE_ACTIVE, &rec_descr);

	(void)state;
	fixup_result[FIX_FREE] = true;
	debug_object_free(obj, &rec_descr);
	expect(obj, ODEBUG_STATE_ACTIVE, 1, 1);
	expect_one_fixup_call(FIX_FREE, obj, ODEBUG_STATE_ACTIVE);
}

static void free_of_active_object_is_repaired_by_its_fixup(void **state)
{
	void *obj = object_in(ODEBUG_STATE_ACTIVE, &repair_descr);

	(void)state;
	debug_object_free(obj, &repair_descr);
	expect(obj, UNTRACKED, 1, 1);
	assert_int_equal(stats_delta().used, -1);
	expect_one_fixup_call(FIX_FREE, obj, ODEBUG_STATE_ACTIVE);
}

/* ---- 2.6 assert_init ---- */

static void assert_init_of_untracked_object_warns_and_calls_its_fixup(void **state)
{
	void *obj = object_in(UNTRACKED, &rec_descr);

	(void)state;
	debug_object_assert_init(obj, &rec_descr);
	expect(obj, UNTRACKED, 1, 0);
	expect_one_fixup_call(FIX_ASSERT_INIT, obj, ODEBUG_STATE_NOTAVAILABLE);
}

static void assert_init_of_untracked_object_counts_a_fixup_that_returns_true(void **state)
{
	void *obj = object_in(UNTRACKED, &rec_descr);

	(void)state;
	fixup_result[FIX_ASSERT_INIT] = true;
	debug_object_assert_init(obj, &rec_descr);
	expect(obj, UNTRACKED, 1, 1);
	expect_one_fixup_call(FIX_ASSERT_INIT, obj, ODEBUG_STATE_NOTAVAILABLE);
}

static void assert_init_of_tracked_object_is_silent_in_every_state(void **state)
{
	static const enum debug_obj_state tracked[] = {
		ODEBUG_STATE_INIT, ODEBUG_STATE_INACTIVE, ODEBUG_STATE_ACTIVE,
		ODEBUG_STATE_DESTROYED,
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(tracked) / sizeof(tracked[0]); i++) {
		void *obj = object_in(tracked[i], &rec_descr);

		debug_object_assert_init(obj, &rec_descr);
		expect(obj, tracked[i], 0, 0);
		expect_no_fixup_call();
	}
}

/* ---- 2.7 active_state (its semantics in detail: test-astate.c) ---- */

static void active_state_of_untracked_object_warns(void **state)
{
	void *obj = object_in(UNTRACKED, &rec_descr);

	(void)state;
	debug_object_active_state(obj, &rec_descr, 0, 1);
	expect(obj, UNTRACKED, 1, 0);
	assert_int_equal(stats_delta().used, 0);
	expect_no_fixup_call();
}

static void active_state_of_active_object_with_matching_expect_is_silent(void **state)
{
	void *obj = object_in(ODEBUG_STATE_ACTIVE, &rec_descr);

	(void)state;
	debug_object_active_state(obj, &rec_descr, 0, 1);
	expect(obj, ODEBUG_STATE_ACTIVE, 0, 0);
	/* It moved: 1 is now the expected value. */
	debug_object_active_state(obj, &rec_descr, 1, 0);
	expect(obj, ODEBUG_STATE_ACTIVE, 0, 0);
	expect_no_fixup_call();
}

static void active_state_of_active_object_with_wrong_expect_warns(void **state)
{
	void *obj = object_in(ODEBUG_STATE_ACTIVE, &rec_descr);

	(void)state;
	debug_object_active_state(obj, &rec_descr, 1, 2);
	expect(obj, ODEBUG_STATE_ACTIVE, 1, 0);
	expect_no_fixup_call();
}

static void active_state_of_inactive_init_or_destroyed_object_warns(void **state)
{
	static const enum debug_obj_state from[] = {
		ODEBUG_STATE_INIT, ODEBUG_STATE_INACTIVE, ODEBUG_STATE_DESTROYED,
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(from) / sizeof(from[0]); i++) {
		void *obj = object_in(from[i], &rec_descr);

		debug_object_active_state(obj, &rec_descr, 0, 1);
		expect(obj, from[i], 1, 0);
		expect_no_fixup_call();
	}
}

/* ---- lookup ---- */

static void lookup_is_by_exact_start_address(void **state)
{
	char *obj = object_in(ODEBUG_STATE_INIT, &rec_descr);

	(void)state;
	assert_int_equal(debug_object_get_state(obj + 1), UNTRACKED);
	assert_int_equal(debug_object_activate(obj + 8, &rec_descr), -EINVAL);
	expect_one_fixup_call(FIX_ACTIVATE, obj + 8, ODEBUG_STATE_NOTAVAILABLE);
	debug_object_destroy(obj + 8, &rec_descr);
	debug_object_free(obj + 8, &rec_descr);
	/* Only the activate warned, and the object itself is untouched. */
	expect(obj, ODEBUG_STATE_INIT, 1, 0);
	assert_int_equal(debug_object_get_state(obj + 8), UNTRACKED);
}

static void descriptor_mismatch_at_the_same_address_goes_unnoticed(void **state)
{
	void *obj = object_in(ODEBUG_STATE_INIT, &rec_descr);

	(void)state;
	assert_int_equal(debug_object_activate(obj, &bare_descr), 0);
	expect(obj, ODEBUG_STATE_ACTIVE, 0, 0);
	/* The caller's descriptor supplies the fixup: bare has none. */
	assert_int_equal(debug_object_activate(obj, &bare_descr), -EINVAL);
	expect(obj, ODEBUG_STATE_ACTIVE, 1, 0);
	expect_no_fixup_call();
	debug_object_activate(obj, &rec_descr);
	expect_one_fixup_call(FIX_ACTIVATE, obj, ODEBUG_STATE_ACTIVE);
}

#define WITH_BOTH_INITS(f) \
	{ #f, f, NULL, NULL, &plain_init }, \
	{ #f "_on_stack", f, NULL, NULL, &stack_init }

int test_main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(selftest_passed_and_left_all_counters_at_zero),

		WITH_BOTH_INITS(init_of_untracked_object_tracks_it_as_init),
		WITH_BOTH_INITS(init_of_init_object_is_a_silent_reinit),
		WITH_BOTH_INITS(init_of_inactive_object_makes_it_init),
		WITH_BOTH_INITS(init_of_active_object_warns_and_calls_fixup_init),
		WITH_BOTH_INITS(init_of_active_object_counts_a_fixup_that_returns_true),
		WITH_BOTH_INITS(init_of_active_object_is_repaired_by_its_fixup),
		WITH_BOTH_INITS(init_of_destroyed_object_warns_without_fixup),

		cmocka_unit_test(activate_of_untracked_object_warns_and_fails),
		cmocka_unit_test(activate_of_untracked_object_succeeds_when_fixup_returns_true),
		cmocka_unit_test(activate_of_untracked_object_without_fixup_fails),
		cmocka_unit_test(activate_of_init_object_makes_it_active),
		cmocka_unit_test(activate_of_inactive_object_makes_it_active),
		cmocka_unit_test(activate_of_active_object_warns_and_fails_when_fixup_returns_false),
		cmocka_unit_test(activate_of_active_object_succeeds_when_fixup_returns_true),
		cmocka_unit_test(activate_of_active_object_without_fixup_fails),
		cmocka_unit_test(activate_of_active_object_is_repaired_by_its_fixup),
		cmocka_unit_test(activate_of_destroyed_object_warns_and_fails_without_fixup),

		cmocka_unit_test(deactivate_of_untracked_object_warns),
		cmocka_unit_test(deactivate_of_init_object_makes_it_inactive),
		cmocka_unit_test(deactivate_of_inactive_object_is_silent),
		cmocka_unit_test(deactivate_of_active_object_makes_it_inactive),
		cmocka_unit_test(deactivate_of_destroyed_object_warns_without_fixup),

		cmocka_unit_test(destroy_of_untracked_object_is_silent),
		cmocka_unit_test(destroy_of_init_object_makes_it_destroyed),
		cmocka_unit_test(destroy_of_inactive_object_makes_it_destroyed),
		cmocka_unit_test(destroy_of_active_object_warns_and_calls_fixup_destroy),
		cmocka_unit_test(destroy_of_active_object_counts_a_fixup_that_returns_true),
		cmocka_unit_test(destroy_of_active_object_is_repaired_by_its_fixup),
		cmocka_unit_test(destroy_of_destroyed_object_warns_without_fixup),

		cmocka_unit_test(free_of_untracked_object_is_silent),
		cmocka_unit_test(free_of_init_inactive_or_destroyed_object_drops_its_tracker),
		cmocka_unit_test(free_of_active_object_warns_and_keeps_its_tracker),
		cmocka_unit_test(free_of_active_object_counts_a_fixup_that_returns_true),
		cmocka_unit_test(free_of_active_object_is_repaired_by_its_fixup),

		cmocka_unit_test(assert_init_of_untracked_object_warns_and_calls_its_fixup),
		cmocka_unit_test(assert_init_of_untracked_object_counts_a_fixup_that_returns_true),
		cmocka_unit_test(assert_init_of_tracked_object_is_silent_in_every_state),

		cmocka_unit_test(active_state_of_untracked_object_warns),
		cmocka_unit_test(active_state_of_active_object_with_matching_expect_is_silent),
		cmocka_unit_test(active_state_of_active_object_with_wrong_expect_warns),
		cmocka_unit_test(active_state_of_inactive_init_or_destroyed_object_warns),

		cmocka_unit_test(lookup_is_by_exact_start_address),
		cmocka_unit_test(descriptor_mismatch_at_the_same_address_goes_unnoticed),
	};

	(void)argc;
	(void)argv;
	/* Before anything else touches the library. */
	debug_objects_get_stats(&at_start, sizeof(at_start));
	nonstatic_descr = rec_descr;
	nonstatic_descr.is_static_object = never_static;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
