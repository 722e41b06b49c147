/* SPDX-License-Identifier: MIT */
/*
 * test-table.c - the table against brute force (white-box: links the core).
 *
 * Random inserts and removals in a 1 MiB arena, clustered in a few 64 KiB
 * regions and often into a cell that already holds a tracker (what the
 * occupancy masks must get right when one of two leaves).  After every
 * step, random ranges are asked of odebug_range_may_hold() and walked with
 * odebug_table_visit() + odebug_bucket_each(), and both answers compared
 * with a linear search of the tracked addresses:
 * - in a contiguous arena no two chunks share a mask, so may_hold is exact
 *   to the 32-byte cell: true exactly when a tracker starts in the cells
 *   the range touches (bench/table-kernel.c's answer is per bucket instead);
 * - the walk finds every tracker in the range, each once;
 * - the chunk map (table.c) has the bit of every tracked address's eighth
 *   set, and, with no two chunks of the arena sharing a mask, clear once
 *   the last tracker of an eighth left.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <cmocka.h>

#include "core.h"
#include "test-main.h"

#define ARENA		((uintptr_t)0x7e5500000000)
#define ARENA_SIZE	((uintptr_t)1 << 20)
#define REGION		((uintptr_t)1 << 16)
#define MAX_LIVE	400
#define CELL		32

static struct odebug_tracker *live[MAX_LIVE];
static size_t nlive;
static unsigned int seed = 1;

static unsigned long rnd(unsigned long n)
{
	unsigned long r = (unsigned long)rand_r(&seed) << 31 | (unsigned long)rand_r(&seed);

	return r % n;
}

static bool tracked(uintptr_t addr)
{
	for (size_t i = 0; i < nlive; i++)
		if (odebug_tracker_addr(live[i]) == addr)
			return true;
	return false;
}

static void insert(uintptr_t addr)
{
	struct odebug_bucket *b = odebug_bucket_of(addr);
	struct odebug_tracker *t;

	odebug_bucket_lock(b);
	t = odebug_pool_alloc();
	assert_non_null(t);
	odebug_tracker_make(t, addr, 0, ODEBUG_STATE_INIT);
	odebug_insert(b, t);
	odebug_bucket_unlock(b);
	live[nlive++] = t;
#ifndef TABLE_KERNEL
	{
		uint64_t w;

		/* The lockless walk finds it on the chain the locked one linked. */
		assert_ptr_equal(odebug_peek(addr, &w), t);
	}
#endif
}

static void remove_at(size_t i)
{
	struct odebug_tracker *t = live[i];
	struct odebug_bucket *b = odebug_bucket_of(odebug_tracker_addr(t));

	odebug_bucket_lock(b);
	odebug_remove(b, t);
	odebug_bucket_unlock(b);
	odebug_pool_free(t);
	live[i] = live[--nlive];
}

/* A new address: in one of a few regions, often in an occupied cell. */
static uintptr_t new_addr(const uintptr_t *regions, size_t nregions)
{
	uintptr_t a;

	do {
		if (nlive && rnd(3) == 0)
			a = (odebug_tracker_addr(live[rnd(nlive)]) & ~(uintptr_t)(CELL - 1)) + 8 * rnd(CELL / 8);
		else
			a = ARENA + regions[rnd(nregions)] * REGION + 8 * rnd(REGION / 8);
	} while (tracked(a));
	return a;
}

struct walk {
	size_t found;
};

static uintptr_t walk_start, walk_end;

static bool count_one(const struct odebug_tracker *t, void *ctx)
{
	struct walk *w = ctx;

	if (odebug_tracker_addr(t) >= walk_start && odebug_tracker_addr(t) < walk_end)
		w->found++;
	return false;
}

static bool visit_bucket(struct odebug_bucket *b, uint64_t chains,
			 uintptr_t start, uintptr_t end, void *ctx)
{
	(void)start, (void)end;
	odebug_bucket_lock(b);
	odebug_bucket_each(b, chains, count_one, ctx);
	odebug_bucket_unlock(b);
	return false;
}

static void check_range(uintptr_t start, uintptr_t end)
{
	uintptr_t lo = start & ~(uintptr_t)(CELL - 1);
	uintptr_t hi = ((end - 1) | (CELL - 1)) + 1;
	size_t in_range = 0, in_cells = 0;
	struct walk w = { 0 };
	bool may;

	for (size_t i = 0; i < nlive; i++) {
		in_range += odebug_tracker_addr(live[i]) >= start && odebug_tracker_addr(live[i]) < end;
		in_cells += odebug_tracker_addr(live[i]) >= lo && odebug_tracker_addr(live[i]) < hi;
	}
	may = odebug_range_may_hold(start, end);
	if (in_range && !may)
		fail_msg("may_hold(%#lx, %#lx) said no with %zu trackers in the range",
			 (unsigned long)start, (unsigned long)end, in_range);
#ifndef TABLE_KERNEL
	if (!in_cells && may)
		fail_msg("may_hold(%#lx, %#lx) said yes with no tracker in its cells",
			 (unsigned long)start, (unsigned long)end);
#endif
	walk_start = start, walk_end = end;
	odebug_table_visit(start, end, visit_bucket, &w);
	if (w.found != in_range)
		fail_msg("the walk of [%#lx, %#lx) found %zu trackers, brute force %zu",
			 (unsigned long)start, (unsigned long)end, w.found, in_range);
}

#ifndef TABLE_KERNEL
/* table.h: the map's pages ever marked, and their words ever written */
extern uint64_t odebug_map_used[], odebug_map_used_words[];

/*
 * The chunk map against brute force: bit set exactly where a tracker
 * starts, and the page of every marked byte marked used.
 */
static void check_map(void)
{
	uint8_t want[ARENA_SIZE / ODEBUG_CHUNK_SIZE] = { 0 };

	assert_non_null(odebug_chunk_map);
	for (size_t i = 0; i < nlive; i++) {
		uintptr_t off = odebug_tracker_addr(live[i]) - ARENA;

		want[off / ODEBUG_CHUNK_SIZE] |= 1u << (off % ODEBUG_CHUNK_SIZE / 512);
	}
	for (size_t c = 0; c < sizeof(want); c++) {
		uint8_t got = odebug_chunk_map[(ARENA >> ODEBUG_CHUNK_SHIFT) + c];

		size_t page = ((ARENA >> ODEBUG_CHUNK_SHIFT) + c) / 4096;

		if (got != want[c])
			fail_msg("chunk map of %#lx: %#x, trackers say %#x",
				 (unsigned long)(ARENA + c * ODEBUG_CHUNK_SIZE), got, want[c]);
		if (got && !(odebug_map_used[page / 64] >> (page % 64) & 1))
			fail_msg("chunk map of %#lx marked on a page never marked used",
				 (unsigned long)(ARENA + c * ODEBUG_CHUNK_SIZE));
		if (got && !(odebug_map_used_words[page / 64 / 64] >> (page / 64 % 64) & 1))
			fail_msg("chunk map of %#lx marked in a word of page bits never marked",
				 (unsigned long)(ARENA + c * ODEBUG_CHUNK_SIZE));
	}
}
#else
static void check_map(void)
{
}
#endif

static uintptr_t random_range_start(void)
{
	if (nlive && rnd(2))	/* near a tracker: the edges matter */
		return odebug_tracker_addr(live[rnd(nlive)]) - CELL + rnd(3 * CELL);
	return ARENA - REGION + rnd(ARENA_SIZE + 2 * REGION);
}

static uintptr_t random_length(void)
{
	switch (rnd(4)) {
	case 0: return 1 + rnd(64);
	case 1: return 1 + rnd(ODEBUG_CHUNK_SIZE);
	case 2: return 1 + rnd(4 * ODEBUG_CHUNK_SIZE);
	default: return 1 + rnd(ARENA_SIZE);
	}
}

static void random_inserts_and_removals_match_brute_force(void **state)
{
	/* Four regions used, the rest empty: the chunk map's skips. */
	const uintptr_t regions[] = { 1, 2, 7, 15 };

	(void)state;
	for (int step = 0; step < 20000; step++) {
		if (nlive < MAX_LIVE && (nlive < 8 || rnd(100) < 52))
			insert(new_addr(regions, 4));
		else
			remove_at(rnd(nlive));
		check_map();
		for (int q = 0; q < 8; q++) {
			uintptr_t start = random_range_start();

			check_range(start, start + random_length());
		}
	}
	while (nlive)
		remove_at(rnd(nlive));
	check_map();
	for (int q = 0; q < 1000; q++) {
		uintptr_t start = random_range_start();

		check_range(start, start + random_length());
	}
}

#ifndef TABLE_KERNEL
/*
 * The layout (tracker.h's odebug_chunk_hash()): the 64 chunks of a 256 KiB
 * region get the 64 buckets of one aligned group, each its own, so that a
 * region's first objects share pages of the table.  An object in every
 * chunk of two neighbouring regions, each at another cell: each is found
 * by the lockless walk and by the free check of its own cell, one walk of
 * both regions finds all of them, and once they are gone the free check
 * finds none.
 */
static void every_place_of_a_region_is_found(void **state)
{
	const uintptr_t base = ARENA + 4 * ARENA_SIZE;	/* 256 KiB aligned, unused */
	const size_t places = (size_t)1 << ODEBUG_REGION_BITS;

	(void)state;
	assert_int_equal(base % (ODEBUG_CHUNK_SIZE << ODEBUG_REGION_BITS), 0);
	for (size_t r = 0; r < 2; r++) {
		uint64_t seen = 0;
		size_t group = SIZE_MAX;

		for (size_t p = 0; p < places; p++) {
			uintptr_t chunk = base + (r * places + p) * ODEBUG_CHUNK_SIZE;
			size_t b = (size_t)(odebug_bucket_of(chunk) - odebug_buckets);

			if (group == SIZE_MAX)
				group = b / places;
			assert_int_equal(b / places, group);
			seen |= 1ull << (b % places);
			insert(chunk + (p * 97 % 128) * CELL + 8 * (p % 4));
		}
		assert_true(seen == ~0ull);
	}
	for (size_t i = 0; i < nlive; i++) {
		uintptr_t a = odebug_tracker_addr(live[i]);
		uint64_t w;

		assert_ptr_equal(odebug_peek(a, &w), live[i]);
		assert_true(odebug_range_may_hold(a & ~(uintptr_t)(CELL - 1), a + 1));
	}
	check_range(base, base + 2 * places * ODEBUG_CHUNK_SIZE);
	check_range(base + 1, base + 2 * places * ODEBUG_CHUNK_SIZE - 1);
	for (size_t q = 0; q < 2000; q++) {
		uintptr_t start = base + rnd(2 * places * ODEBUG_CHUNK_SIZE);

		check_range(start, start + random_length());
	}
	while (nlive)
		remove_at(rnd(nlive));
	assert_false(odebug_range_may_hold(base, base + 2 * places * ODEBUG_CHUNK_SIZE));
}

/*
 * The lockless walk's chain (odebug_chain_head()): the 128 cells of a chunk
 * have a chain each, and a bucket's chunks spread their objects over its
 * chains even at a regular stride.  A bucket gets one chunk of each region
 * of a group: with the bits just below the bucket index as the key, 8
 * objects a page shared a chain 2.11 times per object on average
 * (bench/chain-share.py), 1.58 with ODEBUG_KEY_SHIFT's bits.
 */
static double chain_share(unsigned int per_page)
{
	const size_t heads = (size_t)8192 * 128, chunks = 1000000 / per_page;
	uint16_t *n = calloc(heads, sizeof(*n));
	double sum = 0;

	assert_non_null(n);
	assert_int_equal(ODEBUG_HASH_BITS, 13);
	for (size_t c = 0; c < chunks; c++)
		for (unsigned int cell = 0; cell < 128; cell += 128 / per_page) {
			uintptr_t addr = (uintptr_t)(0x7f0000000ul + c) << ODEBUG_CHUNK_SHIFT | cell << 5;

			struct odebug_bucket *b = odebug_bucket_of(addr);

			n[(size_t)(b - odebug_buckets) * 128 + (size_t)(odebug_chain_head(addr) - b->heads)]++;
		}
	for (size_t h = 0; h < heads; h++)
		sum += (double)n[h] * n[h];
	free(n);
	return sum / (double)(chunks * per_page);
}

static void cells_have_a_chain_each_and_strides_spread(void **state)
{
	(void)state;
	for (int k = 0; k < 1000; k++) {
		uintptr_t chunk = ARENA + (uintptr_t)rnd(1 << 20) * ODEBUG_CHUNK_SIZE;
		uint32_t *seen[128];

		for (unsigned int cell = 0; cell < 128; cell++) {
			seen[cell] = odebug_chain_head(chunk + cell * 32 + rnd(32));
			for (unsigned int o = 0; o < cell; o++)
				assert_ptr_not_equal(seen[o], seen[cell]);
		}
	}
	assert_true(chain_share(8) < 1.8);
	assert_true(chain_share(16) < 1.8);
}
#endif

static int setup(void **state)
{
	(void)state;
	odebug_options_parse(NULL);
	assert_true(odebug_table_init());
	assert_true(odebug_pool_init());
	return 0;
}

int test_main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(random_inserts_and_removals_match_brute_force),
#ifndef TABLE_KERNEL
		cmocka_unit_test(cells_have_a_chain_each_and_strides_spread),
		cmocka_unit_test(every_place_of_a_region_is_found),
#endif
	};

	(void)argc, (void)argv;
	return cmocka_run_group_tests(tests, setup, NULL);
}
