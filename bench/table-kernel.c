/* SPDX-License-Identifier: MIT */
/*
 * table-kernel.c - the kernel's table, the benchmarks' baseline: it takes
 * lib/table/table.c's place in a second build of the core (bench/kernel/),
 * never in the library that is installed.
 *
 * The kernel's 16384 chains, hashed by 4 KiB chunk, one chain per hash
 * and nothing beside it: the free check walks a chain whenever its bucket
 * is not empty, as the kernel's __debug_check_no_obj_freed() does.  The
 * buckets and their locks are lib/'s (bucket.c): 8192, two chains under
 * each lock (the chain's index is the bucket's and one more hash bit).
 *
 * No lockless path: this core is compiled with bench/kernel/no-lockless.h,
 * under which lib/'s odebug_peek() finds nothing and odebug_prefetch()
 * does nothing, so every call takes the bucket lock, as in the kernel, and
 * a tracker's word changes by a plain store under it.
 */
#include <sys/mman.h>

#include "core.h"

#define HASH_SIZE	((size_t)1 << ODEBUG_HASH_BITS)	/* buckets */
#define CHAIN_BITS	(ODEBUG_HASH_BITS + 1)		/* the kernel's ODEBUG_HASH_BITS */
#define CHAINS		((size_t)1 << CHAIN_BITS)
#define BOTH_CHAINS	3ull				/* a bucket's chain set */

/* No chunk map here (it covers no chunk): the free check always asks the buckets. */
uint8_t *odebug_chunk_map;
size_t odebug_map_chunks;

/* Per chain: its head (a pool index). */
static uint32_t *heads;

/* The kernel's bucket of @addr: the chunk hash's top 14 bits. */
static uint32_t chain_of(uintptr_t addr)
{
	return (uint32_t)(odebug_chunk_hash(addr) >> (64 - CHAIN_BITS));
}

/* Chain @c (0 or 1) of bucket @b. */
static uint32_t *head_in(struct odebug_bucket *b, unsigned int c)
{
	return &heads[2 * (size_t)(b - odebug_buckets) + c];
}

static void unmap_all(void)
{
	if (heads)
		odebug_unmap(heads, CHAINS * sizeof(*heads));
	heads = NULL;
}

bool odebug_table_init(void)
{
	heads = odebug_reserve(CHAINS * sizeof(*heads));
	if (heads && odebug_buckets_init())
		return true;
	unmap_all();
	return false;
}

void odebug_table_fini(void)
{
	unmap_all();
	odebug_buckets_fini();
}

/* Small pages, as the kernel's table has. */
void odebug_table_go_huge(void)
{
}

static bool bucket_may_hold(struct odebug_bucket *b)
{
	return odebug_load(&b->count) != 0;
}

void odebug_table_visit(uintptr_t start, uintptr_t end, odebug_visit_fn visit, void *ctx)
{
	uintptr_t chunk = start & ODEBUG_CHUNK_MASK;
	uintptr_t chunks = ((end - 1 - chunk) >> ODEBUG_CHUNK_SHIFT) + 1;

	if (chunks > HASH_SIZE) {
		odebug_table_visit_all(BOTH_CHAINS, start, end, visit, ctx);
		return;
	}
	for (; chunks; chunks--, chunk += ODEBUG_CHUNK_SIZE) {
		struct odebug_bucket *b = odebug_bucket_of(chunk);
		uint64_t chain = 1ull << (chain_of(chunk) & 1);

		if (bucket_may_hold(b) && visit(b, chain, start, end, ctx))
			return;
	}
}

/* Never asked: with no chunk covered, the free path asks odebug_map_may_hold(). */
bool odebug_chunk_may_hold(uintptr_t start, uintptr_t end)
{
	return odebug_map_may_hold(start, end);
}

bool odebug_map_may_hold(uintptr_t start, uintptr_t end)
{
	uintptr_t chunk = start & ODEBUG_CHUNK_MASK, last = (end - 1) & ODEBUG_CHUNK_MASK;

	if ((last - chunk) >> ODEBUG_CHUNK_SHIFT >= HASH_SIZE)
		return true;
	for (;; chunk += ODEBUG_CHUNK_SIZE) {
		if (bucket_may_hold(odebug_bucket_of(chunk)))
			return true;
		if (chunk == last)
			return false;
	}
}

/* No FREED trackers here: debug_object_free() unlinks, as the kernel's does. */
struct odebug_tracker *odebug_lookup_any(struct odebug_bucket *b, uintptr_t addr)
{
	return odebug_lookup(b, addr);
}

/* The kernel's free, always locked (no lockless free here: no-lockless.h). */
int odebug_release(struct odebug_bucket *b, struct odebug_tracker *t, uint64_t w)
{
	if (!odebug_tracker_retire(t, w))
		return -1;
	odebug_remove(b, t);
	return 1;
}

/* Never called: this table unlinks a freed tracker, so none is found FREED. */
void odebug_revive(struct odebug_tracker *t, uintptr_t addr, unsigned int slot)
{
	(void)t, (void)addr, (void)slot;
}

struct odebug_tracker *odebug_lookup(struct odebug_bucket *b, uintptr_t addr)
{
	struct odebug_tracker *t;
	unsigned long cnt = 0;

	if (!b->count)
		return NULL;
	for (t = odebug_tracker_at(heads[chain_of(addr)]); t;
	     t = odebug_tracker_at(t->hnext)) {
		if (odebug_tracker_addr(t) == addr)
			return t;
		cnt++;
	}
	if (cnt > odebug_load(&odebug_max_chain))
		odebug_stat_max(&odebug_max_chain, cnt);
	return NULL;
}

void odebug_insert(struct odebug_bucket *b, struct odebug_tracker *t)
{
	uint32_t *head = &heads[chain_of(odebug_tracker_addr(t))];

	odebug_span_extend(odebug_tracker_addr(t));
	t->hnext = *head;
	*head = odebug_tracker_index(t);
	__atomic_store_n(&b->count, b->count + 1, __ATOMIC_RELAXED);
}

static void forget(struct odebug_bucket *b)
{
	__atomic_store_n(&b->count, b->count - 1, __ATOMIC_RELAXED);
}

void odebug_remove(struct odebug_bucket *b, struct odebug_tracker *t)
{
	uint32_t *pp = &heads[chain_of(odebug_tracker_addr(t))];
	uint32_t index = odebug_tracker_index(t);

	for (; *pp; pp = &odebug_tracker_at(*pp)->hnext) {
		if (*pp == index) {
			*pp = t->hnext;
			forget(b);
			return;
		}
	}
}

/* One chain's part of odebug_bucket_take() (table.c's comment). */
static struct odebug_tracker *take_chain(struct odebug_bucket *b, uint32_t *pp,
					 uintptr_t start, uintptr_t end, odebug_sync_fn sync,
					 uint32_t *taken, unsigned long *visited)
{
	struct odebug_tracker *t;

	while (*pp) {
		t = odebug_tracker_at(*pp);
		++*visited;
		if (odebug_tracker_addr(t) < start || odebug_tracker_addr(t) >= end) {
			pp = &t->hnext;
			continue;
		}
		if (sync)
			sync(t);
		if (odebug_tracker_state(t) == ODEBUG_STATE_ACTIVE)
			return t;
		*pp = t->hnext;
		forget(b);
		t->hnext = *taken;
		*taken = odebug_tracker_index(t);
	}
	return NULL;
}

struct odebug_tracker *odebug_bucket_take(struct odebug_bucket *b, uint64_t chains,
					  uintptr_t start, uintptr_t end, odebug_sync_fn sync,
					  uint32_t *taken, unsigned long *visited)
{
	struct odebug_tracker *t;
	unsigned int c;

	for (c = 0; c < 2; c++) {
		if (!(chains & (1ull << c)))
			continue;
		t = take_chain(b, head_in(b, c), start, end, sync, taken, visited);
		if (t)
			return t;
	}
	return NULL;
}

bool odebug_bucket_each(struct odebug_bucket *b, uint64_t chains,
			odebug_tracker_fn fn, void *ctx)
{
	struct odebug_tracker *t;
	unsigned int c;

	for (c = 0; c < 2; c++) {
		if (!(chains & (1ull << c)))
			continue;
		for (t = odebug_tracker_at(*head_in(b, c)); t; t = odebug_tracker_at(t->hnext))
			if (fn(t, ctx))
				return true;
	}
	return false;
}

void odebug_table_drain(void)
{
	size_t i;

	for (i = 0; i < HASH_SIZE; i++) {
		struct odebug_bucket *b = &odebug_buckets[i];
		uint32_t taken[2];

		odebug_bucket_lock(b);
		taken[0] = *head_in(b, 0);
		taken[1] = *head_in(b, 1);
		*head_in(b, 0) = *head_in(b, 1) = 0;
		b->count = 0;
		odebug_bucket_unlock(b);
		odebug_trackers_put(taken[0]);
		odebug_trackers_put(taken[1]);
	}
}
