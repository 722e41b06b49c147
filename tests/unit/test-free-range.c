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

/*
 * A long range passes over chunks the chunk map does not mark, eight at a
 * time (a 64 KiB region with no tracker is one word of the map): objects in
 * a few chunks of a 1 MiB range, the range not aligned to eight chunks,
 * are all found, and those outside it are not.
 */
static void long_range_skips_only_empty_regions(void **state)
{
	size_t size = (size_t)1 << 20, i;
	char *map = mmap(NULL, 2 * size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	static const size_t at[] = { 5 * 4096 + 200, 37 * 4096, 130 * 4096 + 4000,
				     255 * 4096 + 4095, 256 * 4096 + 40 };
	char *start;

	(void)state;
	assert_true(map != MAP_FAILED);
	/* Start 3 chunks and 100 bytes into a region: not aligned. */
	start = (char *)(((uintptr_t)map + 0xffff) & ~(uintptr_t)0xffff) + 3 * 4096 + 100;
	for (i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		debug_object_init(start + at[i], &repair_descr);
		debug_object_activate(start + at[i], &repair_descr);
	}
	stats_mark();
	/* From inside an empty region (chunk 16 on) to the object in chunk 40. */
	debug_check_no_obj_freed(start + 13 * 4096, 25 * 4096);
	assert_int_equal(stats_delta().warnings, 1);
	debug_check_no_obj_freed(start, 256 * 4096);	/* the last object lies after */
	assert_int_equal(stats_delta().warnings, 4);
	assert_int_equal(debug_object_get_state(start + at[4]), ODEBUG_STATE_ACTIVE);
	debug_check_no_obj_freed(start + at[4], 1);
	assert_int_equal(stats_delta().warnings, 5);
	munmap(map, 2 * size);
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

/*
 * Two chunks whose trackers share an occupancy mask in the table (same
 * bucket and class: the top 19 bits of the chunk's multiplicative hash, see
 * lib/table/table.c).  Contiguous chunks never do, so search a 16 GiB
 * reservation that is never touched.
 */
static uint64_t mask_key(uintptr_t addr)
{
	return ((uint64_t)(addr >> 12) * 0x61C8864680B583EBull) >> (64 - 19);
}

static void objects_sharing_a_mask_stay_checked(void **state)
{
	size_t span = (size_t)16 << 30, i, j;
	char *base = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	char *x = NULL, *y = NULL;
	uint64_t key;

	(void)state;
	assert_true(base != MAP_FAILED);
	base = (char *)(((uintptr_t)base + 4095) & ~(uintptr_t)4095);
	key = mask_key((uintptr_t)base);
	for (i = 1; i < span / 4096 - 1 && !y; i++)
		if (mask_key((uintptr_t)base + i * 4096) == key)
			x = base, y = base + i * 4096;
	assert_non_null(y);
	/* The same cell of both chunks: one mask bit stands for both. */
	calls_reset();
	debug_object_init(x + 96, &repair_descr);
	debug_object_activate(x + 96, &repair_descr);
	debug_object_init(y + 96, &repair_descr);
	debug_object_activate(y + 96, &repair_descr);
	/* X's object goes through the API: the bit must stay for Y's. */
	debug_object_deactivate(x + 96, &repair_descr);
	debug_object_free(x + 96, &repair_descr);
	stats_mark();
	debug_check_no_obj_freed(y + 64, 64);
	assert_int_equal(stats_delta().warnings, 1);
	assert_ptr_equal(calls[ncalls - 1].addr, y + 96);
	/* And the other way round, X's object released by the free check. */
	debug_object_init(x + 100, &repair_descr);
	debug_object_activate(x + 100, &repair_descr);
	debug_object_init(y + 100, &repair_descr);
	debug_object_activate(y + 100, &repair_descr);
	debug_check_no_obj_freed(y + 96, 16);
	stats_mark();
	debug_check_no_obj_freed(x + 64, 64);
	assert_int_equal(stats_delta().warnings, 1);
	assert_ptr_equal(calls[ncalls - 1].addr, x + 100);
	/* A cell with no tracker left in either chunk is passed over. */
	stats_mark();
	debug_check_no_obj_freed(x, 4096);
	debug_check_no_obj_freed(y, 4096);
	assert_int_equal(stats_delta().warnings, 0);
	for (j = 0; j < 2; j++)
		assert_int_equal(debug_object_get_state((j ? y : x) + 100), ODEBUG_STATE_NOTAVAILABLE);
	munmap(base, span - 4096);
}

int test_main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(active_object_in_range_is_reported_and_fixed),
		cmocka_unit_test(inactive_objects_are_dropped_silently),
		cmocka_unit_test(objects_outside_the_range_survive),
		cmocka_unit_test(missing_fixup_free_does_not_loop),
		cmocka_unit_test(fixup_that_leaves_object_active_does_not_loop),
		cmocka_unit_test(range_spanning_many_pages_checks_every_page),
		cmocka_unit_test(long_range_skips_only_empty_regions),
		cmocka_unit_test(huge_range_finds_objects_anywhere),
		cmocka_unit_test(misaligned_objects_are_tracked_and_checked),
		cmocka_unit_test(zero_size_checks_nothing),
		cmocka_unit_test(objects_sharing_a_mask_stay_checked),
	};

	(void)argc, (void)argv;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
