/* SPDX-License-Identifier: MIT */
/* debug_check_no_obj_freed: the free check on a memory range. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "helpers.h"

static void active_object_in_range_is_reported_and_fixed(void **state)
{
	char *block = malloc(256);

	(void)state;
	calls_reset();
	debug_object_init(block + 64, &repair_descr);
	debug_object_activate(block + 64, &repair_descr);
	stats_mark();
	debug_check_no_obj_freed(block, 256);
	assert_int_equal(stats_delta().warnings, 1);
	assert_int_equal(stats_delta().fixups, 1);
	assert_int_equal(ncalls, 1);
	assert_int_equal(calls[0].kind, FIX_FREE);
	assert_ptr_equal(calls[0].addr, block + 64);
	assert_int_equal(calls[0].state, ODEBUG_STATE_ACTIVE);
	assert_int_equal(debug_object_get_state(block + 64), ODEBUG_STATE_NOTAVAILABLE);
	free(block);
}

static void inactive_objects_are_dropped_silently(void **state)
{
	char *block = malloc(256);
	int i;

	(void)state;
	for (i = 0; i < 4; i++)
		debug_object_init(block + 64 * i, &rec_descr);
	debug_object_destroy(block + 64, &rec_descr);
	stats_mark();
	debug_check_no_obj_freed(block, 256);
	assert_int_equal(stats_delta().warnings, 0);
	assert_int_equal(stats_delta().used, -4);
	for (i = 0; i < 4; i++)
		assert_int_equal(debug_object_get_state(block + 64 * i), ODEBUG_STATE_NOTAVAILABLE);
	free(block);
}

static void objects_outside_the_range_survive(void **state)
{
	char *block = malloc(256);

	(void)state;
	debug_object_init(block, &rec_descr);
	debug_object_init(block + 128, &rec_descr);
	debug_object_init(block + 255, &rec_descr);
	debug_check_no_obj_freed(block + 1, 127);	/* [block+1, block+128) */
	assert_int_equal(debug_object_get_state(block), ODEBUG_STATE_INIT);
	assert_int_equal(debug_object_get_state(block + 128), ODEBUG_STATE_INIT);
	debug_check_no_obj_freed(block + 128, 127);	/* [.., block+255) */
	assert_int_equal(debug_object_get_state(block + 128), ODEBUG_STATE_NOTAVAILABLE);
	assert_int_equal(debug_object_get_state(block + 255), ODEBUG_STATE_INIT);
	debug_check_no_obj_freed(block, 256);
	assert_int_equal(debug_object_get_state(block), ODEBUG_STATE_NOTAVAILABLE);
	assert_int_equal(debug_object_get_state(block + 255), ODEBUG_STATE_NOTAVAILABLE);
	free(block);
}

/* The kernel loops forever here; we report once and drop the tracker. */
static void missing_fixup_free_does_not_loop(void **state)
{
	char *block = malloc(64);

	(void)state;
	debug_object_init(block, &bare_descr);
	debug_object_activate(block, &bare_descr);
	stats_mark();
	debug_check_no_obj_freed(block, 64);
	assert_int_equal(stats_delta().warnings, 1);
	assert_int_equal(stats_delta().fixups, 0);
	assert_int_equal(stats_delta().used, -1);
	assert_int_equal(debug_object_get_state(block), ODEBUG_STATE_NOTAVAILABLE);
	free(block);
}

static void fixup_that_leaves_object_active_does_not_loop(void **state)
{
	char *block = malloc(64);

	(void)state;
	calls_reset();
	fixup_result[FIX_FREE] = true;	/* claims success, repairs nothing */
	debug_object_init(block, &rec_descr);
	debug_object_activate(block, &rec_descr);
	stats_mark();
	debug_check_no_obj_freed(block, 64);
	assert_int_equal(ncalls, 1);
	assert_int_equal(stats_delta().warnings, 1);
	assert_int_equal(stats_delta().fixups, 1);
	assert_int_equal(debug_object_get_state(block), ODEBUG_STATE_NOTAVAILABLE);
	free(block);
}

static void range_spanning_many_pages_checks_every_page(void **state)
{
	size_t size = 64 * 4096;
	char *map = mmap(NULL, size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	size_t off;

	(void)state;
	assert_true(map != MAP_FAILED);
	for (off = 0; off < size; off += 4096)
		debug_object_init(map + off + 8, &repair_descr),
		debug_object_activate(map + off + 8, &repair_descr);
	stats_mark();
	debug_check_no_obj_freed(map, size);
	assert_int_equal(stats_delta().warnings, 64);
	assert_int_equal(stats_delta().used, -64);
	assert_true(stats_now().max_checked >= 64);
	munmap(map, size);
}

/* More pages than buckets: every bucket is visited once, not every page. */
static void huge_range_finds_objects_anywhere(void **state)
{
	static char obj[16];

	(void)state;
	debug_object_init(obj, &repair_descr);
	debug_object_activate(obj, &repair_descr);
	stats_mark();
	debug_check_no_obj_freed((void *)4096, ((size_t)1 << 47) - 8192);	/* all of userspace */
	assert_int_equal(debug_object_get_state(obj), ODEBUG_STATE_NOTAVAILABLE);
	assert_int_equal(stats_delta().warnings, 1);
	/* A range that wraps the address space is clamped, not skipped. */
	debug_object_init(obj, &rec_descr);
	debug_check_no_obj_freed(obj, ~(size_t)0);
	assert_int_equal(debug_object_get_state(obj), ODEBUG_STATE_NOTAVAILABLE);
}

/* Any byte address is an object: misaligned ones are tracked and found. */
static void misaligned_objects_are_tracked_and_checked(void **state)
{
	char *block = malloc(256);

	(void)state;
	calls_reset();
	debug_object_init(block + 3, &repair_descr);
	debug_object_activate(block + 3, &repair_descr);
	debug_object_init(block + 4, &rec_descr);
	assert_int_equal(debug_object_get_state(block + 3), ODEBUG_STATE_ACTIVE);
	assert_int_equal(debug_object_get_state(block + 4), ODEBUG_STATE_INIT);
	stats_mark();
	debug_check_no_obj_freed(block + 1, 3);		/* [1, 4): only +3 */
	assert_int_equal(stats_delta().warnings, 1);
	assert_int_equal(debug_object_get_state(block + 3), ODEBUG_STATE_NOTAVAILABLE);
	assert_int_equal(debug_object_get_state(block + 4), ODEBUG_STATE_INIT);
	debug_object_free(block + 4, &rec_descr);
	free(block);
}

static void zero_size_checks_nothing(void **state)
{
	static char obj[16];

	(void)state;
	debug_object_init(obj, &rec_descr);
	debug_check_no_obj_freed(obj, 0);
	assert_int_equal(debug_object_get_state(obj), ODEBUG_STATE_INIT);
	debug_object_free(obj, &rec_descr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(active_object_in_range_is_reported_and_fixed),
		cmocka_unit_test(inactive_objects_are_dropped_silently),
		cmocka_unit_test(objects_outside_the_range_survive),
		cmocka_unit_test(missing_fixup_free_does_not_loop),
		cmocka_unit_test(fixup_that_leaves_object_active_does_not_loop),
		cmocka_unit_test(range_spanning_many_pages_checks_every_page),
		cmocka_unit_test(huge_range_finds_objects_anywhere),
		cmocka_unit_test(misaligned_objects_are_tracked_and_checked),
		cmocka_unit_test(zero_size_checks_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
