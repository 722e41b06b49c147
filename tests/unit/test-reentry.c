/* SPDX-License-Identifier: MIT */
/*
 * Fixups that re-enter the API, as the kernel's timer fixups do: they run
 * with no library lock held, so nothing deadlocks, and the state ends up
 * repaired.
 */
#include <stdlib.h>

#include "helpers.h"

static void fixup_init_repairs_active_object(void **state)
{
	static char obj[16];

	(void)state;
	calls_reset();
	debug_object_init(obj, &repair_descr);
	debug_object_activate(obj, &repair_descr);
	stats_mark();
	debug_object_init(obj, &repair_descr);
	assert_int_equal(debug_object_get_state(obj), ODEBUG_STATE_INIT);
	assert_int_equal(stats_delta().warnings, 1);
	assert_int_equal(stats_delta().fixups, 1);
	assert_int_equal(ncalls, 1);
	assert_int_equal(calls[0].kind, FIX_INIT);
	debug_object_free(obj, &repair_descr);
}

static void fixup_free_frees_the_tracker(void **state)
{
	static char obj[16];

	(void)state;
	debug_object_init(obj, &repair_descr);
	debug_object_activate(obj, &repair_descr);
	stats_mark();
	debug_object_free(obj, &repair_descr);
	assert_int_equal(debug_object_get_state(obj), ODEBUG_STATE_NOTAVAILABLE);
	assert_int_equal(stats_delta().fixups, 1);
	assert_int_equal(stats_delta().used, -1);
}

/* A fixup that nests: each level re-initialises the next object, ten deep. */
static char chain[11][16];
static int depth;
static const struct debug_obj_descr nest_descr;

static bool nest_fixup_init(void *addr, enum debug_obj_state s)
{
	int i = (int)(((char (*)[16])addr) - chain);

	(void)s;
	depth++;
	if (i < 10)
		debug_object_init(chain[i + 1], &nest_descr);	/* ACTIVE too */
	debug_object_deactivate(addr, &nest_descr);
	debug_object_init(addr, &nest_descr);
	return true;
}

static const struct debug_obj_descr nest_descr = {
	.name = "test_nest",
	.fixup_init = nest_fixup_init,
};

static void fixups_reenter_ten_levels_deep(void **state)
{
	int i;

	(void)state;
	for (i = 0; i < 11; i++) {
		debug_object_init(chain[i], &nest_descr);
		debug_object_activate(chain[i], &nest_descr);
	}
	stats_mark();
	depth = 0;
	debug_object_init(chain[0], &nest_descr);
	assert_int_equal(depth, 11);
	assert_int_equal(stats_delta().warnings, 11);
	assert_int_equal(stats_delta().fixups, 11);
	for (i = 0; i < 11; i++) {
		assert_int_equal(debug_object_get_state(chain[i]), ODEBUG_STATE_INIT);
		debug_object_free(chain[i], &nest_descr);
	}
}

/* A fixup may free memory, which the free check sees like any other. */
static const struct debug_obj_descr freeing_descr;

static bool freeing_fixup(void *addr, enum debug_obj_state s)
{
	void **slot = addr;

	(void)s;
	debug_object_deactivate(addr, &freeing_descr);
	free(*slot);
	*slot = NULL;
	return true;
}

static const struct debug_obj_descr freeing_descr = {
	.name = "test_freeing",
	.fixup_destroy = freeing_fixup,
};

static void fixup_may_call_free(void **state)
{
	static void *slot[2];

	(void)state;
	slot[0] = malloc(64);
	debug_object_init(slot, &freeing_descr);
	debug_object_activate(slot, &freeing_descr);
	stats_mark();
	debug_object_destroy(slot, &freeing_descr);
	assert_null(slot[0]);
	assert_int_equal(stats_delta().fixups, 1);
	assert_int_equal(debug_object_get_state(slot), ODEBUG_STATE_INACTIVE);
	debug_object_free(slot, &freeing_descr);
}

int test_main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fixup_init_repairs_active_object),
		cmocka_unit_test(fixup_free_frees_the_tracker),
		cmocka_unit_test(fixups_reenter_ten_levels_deep),
		cmocka_unit_test(fixup_may_call_free),
	};

	(void)argc, (void)argv;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
