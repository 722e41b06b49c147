/* SPDX-License-Identifier: MIT */
/*
 * table-kernel.c - the kernel's table, the benchmarks' baseline: built
 * instead of table.c with -Dkernel_table=true.
 *
 * The same 16384 buckets hashed by 4 KiB chunk (bucket.c), but one chain
 * per bucket and nothing beside it: the free check walks a bucket's whole
 * chain whenever the bucket is not empty, as the kernel's
 * __debug_check_no_obj_freed() does.  No lockless path either (internal.h's
 * odebug_peek() is NULL here): every call takes the bucket lock, as in
 * the kernel, so the words' compare-and-swaps never fail.
 */
#include <sys/mman.h>

#include "internal.h"

#define HASH_SIZE	((size_t)1 << ODEBUG_HASH_BITS)
#define ONE_CHAIN	1ull		/* the chain set of a bucket */

/* No chunk map here: the free check always asks the buckets. */
uint8_t *odebug_chunk_map;

/* Per bucket: the chain's head (a pool index). */
static uint32_t *heads;

bool odebug_table_init(void)
{
	heads = odebug_reserve(HASH_SIZE * sizeof(*heads));
	if (!heads)
		return false;
	if (!odebug_buckets_init()) {
		odebug_unmap(heads, HASH_SIZE * sizeof(*heads));
		return false;
	}
	return true;
}

void odebug_table_fini(void)
{
	if (heads)
		odebug_unmap(heads, HASH_SIZE * sizeof(*heads));
	heads = NULL;
	odebug_buckets_fini();
}

/* The kernel's table keeps small pages: it is the baseline as it was. */
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
		odebug_table_visit_all(ONE_CHAIN, start, end, visit, ctx);
		return;
	}
	for (; chunks; chunks--, chunk += ODEBUG_CHUNK_SIZE) {
		struct odebug_bucket *b = odebug_bucket_of(chunk);

		if (bucket_may_hold(b) && visit(b, ONE_CHAIN, start, end, ctx))
			return;
	}
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

/* The kernel's free, always locked (no lockless free here: odebug_peek() is NULL). */
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
	for (t = odebug_tracker_at(heads[b - odebug_buckets]); t;
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
	uint32_t *head = &heads[b - odebug_buckets];

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
	uint32_t *pp = &heads[b - odebug_buckets];
	uint32_t index = odebug_tracker_index(t);

	for (; *pp; pp = &odebug_tracker_at(*pp)->hnext) {
		if (*pp == index) {
			*pp = t->hnext;
			forget(b);
			return;
		}
	}
}

/* See table.c. */
struct odebug_tracker *odebug_bucket_take(struct odebug_bucket *b, uint64_t chains,
					  uintptr_t start, uintptr_t end,
					  uint32_t *taken, unsigned long *visited)
{
	struct odebug_tracker *t;
	uint32_t *pp;

	if (!(chains & ONE_CHAIN))
		return NULL;
	for (pp = &heads[b - odebug_buckets]; *pp;) {
		t = odebug_tracker_at(*pp);
		++*visited;
		if (odebug_tracker_addr(t) < start || odebug_tracker_addr(t) >= end) {
			pp = &t->hnext;
			continue;
		}
		if (odebug_tracker_state(t) == ODEBUG_STATE_ACTIVE)
			return t;
		*pp = t->hnext;
		forget(b);
		t->hnext = *taken;
		*taken = odebug_tracker_index(t);
	}
	return NULL;
}

bool odebug_bucket_each(struct odebug_bucket *b, uint64_t chains,
			odebug_tracker_fn fn, void *ctx)
{
	struct odebug_tracker *t;

	if (!(chains & ONE_CHAIN))
		return false;
	for (t = odebug_tracker_at(heads[b - odebug_buckets]); t; t = odebug_tracker_at(t->hnext))
		if (fn(t, ctx))
			return true;
	return false;
}

void odebug_table_drain(void)
{
	size_t i;

	for (i = 0; i < HASH_SIZE; i++) {
		struct odebug_bucket *b = &odebug_buckets[i];
		uint32_t taken;

		odebug_bucket_lock(b);
		taken = heads[i];
		heads[i] = 0;
		b->count = 0;
		odebug_bucket_unlock(b);
		odebug_trackers_put(taken);
	}
}
