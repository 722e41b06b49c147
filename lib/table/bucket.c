/* SPDX-License-Identifier: MIT */
/*
 * bucket.c - the bucket array and its locks, and the operations that do
 * not depend on how a bucket chains its trackers (table.c; the
 * benchmarks' kernel-style table, bench/table-kernel.c, shares them).
 */
#include "table.h"

ODEBUG_HOT struct odebug_bucket *odebug_buckets;
unsigned long odebug_max_chain;
struct odebug_span odebug_span __attribute__((aligned(64))) = { UINTPTR_MAX, 1 };

/*
 * The start's selftest, done: its object, in libodebug's own static data,
 * would leave the span over the whole heap.  Emptied only when nothing is
 * out of the pool (so no tracker is linked), and no other thread can link
 * one yet: their calls wait for the start.
 */
void odebug_span_reset(void)
{
	if (odebug_load(&odebug_trackers_out))
		return;
	odebug_store(&odebug_span.lo, UINTPTR_MAX);
	odebug_store(&odebug_span.hi, 1);
}

/*
 * No odebug_spin_init() loop: zero is unlocked (lock.h), as the fresh
 * mapping is, and touching every bucket would cost a page fault per 4 KiB
 * at start; a bucket's page becomes resident when it is first locked
 * (reserved, not committed: 4.5 MiB with the chain heads).
 */
bool odebug_buckets_init(void)
{
	odebug_buckets = odebug_reserve(ODEBUG_BUCKET_BYTES);
	return odebug_buckets != NULL;
}

void odebug_buckets_fini(void)
{
	if (odebug_buckets)
		odebug_unmap(odebug_buckets, ODEBUG_BUCKET_BYTES);
	odebug_buckets = NULL;
}

void odebug_stat_max(unsigned long *stat, unsigned long value)
{
	unsigned long old = odebug_load(stat);

	while (value > old &&
	       !__atomic_compare_exchange_n(stat, &old, value, true,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/* Give back to the pool a list of unlinked trackers (no bucket lock held). */
void odebug_trackers_put(uint32_t list)
{
	while (list) {
		struct odebug_tracker *t = odebug_tracker_at(list);

		list = odebug_tracker_next(t);
		odebug_pool_free(t);
	}
}

void odebug_tracker_snapshot(struct odebug_snapshot *o, const struct odebug_tracker *t)
{
	uint64_t w = odebug_tracker_word(t);

	/* Whole: every field not named here is zero (name: resolved before use). */
	*o = (struct odebug_snapshot){
		.addr = odebug_word_addr(w),
		.descr = odebug_word_descr(w),
		.astate = t->astate,
		.state = (enum debug_obj_state)odebug_word_state(w),
		.init_stack = odebug_tracker_origin(t, ODEBUG_ORIGIN_INIT),
		.activate_stack = odebug_tracker_origin(t, ODEBUG_ORIGIN_ACTIVATE),
	};
}

/*
 * The tracker odebug_bucket_take() returned ACTIVE, copied into @o; the
 * bucket lock is held.  False when a lockless call changed its word since
 * the walk read it (a deactivate, then maybe a lockless free made it
 * FREED): the caller scans the bucket again, so no report names a state
 * the object no longer has, or FREED.  With @claim, the word also becomes
 * RETIRED by compare-and-swap before the caller unlinks it, so that a
 * lockless free can no longer count the tracker's free as well.
 */
bool odebug_tracker_snapshot_active(struct odebug_snapshot *o, struct odebug_tracker *t,
				    bool claim)
{
	uint64_t w = odebug_tracker_word(t);

	if (odebug_word_state(w) != ODEBUG_STATE_ACTIVE)
		return false;
	if (claim && !odebug_tracker_retire(t, w))
		return false;
	odebug_tracker_snapshot(o, t);
	o->state = ODEBUG_STATE_ACTIVE;
	return true;
}

/*
 * Pages of the bucket array used so far, and the lock under which a page
 * is first marked.  The fork handler holds that lock from before it locks
 * the buckets until after the fork, so no thread can start using a bucket
 * of an unmarked page in between: every bucket lock a thread may hold at
 * the fork is one the handler took first.  Marks are never cleared.
 */
uint64_t odebug_bucket_pages_used[(ODEBUG_BUCKET_PAGES + 63) / 64];
static odebug_spinlock_t first_use_lock;


/* Mark @page used (the caller's guard is set); @wait false: never spin. */
bool odebug_bucket_first_use(size_t page, bool wait)
{
	if (wait)
		odebug_spin_lock(&first_use_lock);
	else if (!odebug_spin_trylock(&first_use_lock))
		return false;
	__atomic_or_fetch(&odebug_bucket_pages_used[page / 64], 1ull << (page % 64),
			  __ATOMIC_RELAXED);
	odebug_spin_unlock(&first_use_lock);
	return true;
}

/* The first bucket whose lock word is in page @p or after (a bucket may span two). */
static size_t first_bucket_of_page(size_t p)
{
	return ((p << ODEBUG_BUCKET_PAGE_SHIFT) + sizeof(struct odebug_bucket) - 1) /
	       sizeof(struct odebug_bucket);
}

/**
 * odebug_table_visit_all - every bucket that holds a tracker, once
 * @chains:	the chain set passed to @visit (all of them)
 *
 * As odebug_table_visit(), for a range with more chunks than there are
 * buckets, or for a walk of the whole table (the exit-time report).  A
 * bucket that holds a tracker was locked, so the page of its lock word is
 * marked used: the pages never used are passed over without a read (a
 * read would map each of the array's 4.5 MiB, a page fault per 4 KiB).
 */
void odebug_table_visit_all(uint64_t chains, uintptr_t start, uintptr_t end,
			    odebug_visit_fn visit, void *ctx)
{
	size_t p, i;

	for (p = 0; p < ODEBUG_BUCKET_PAGES; p++) {
		if (!odebug_bucket_page_used(p))
			continue;
		for (i = first_bucket_of_page(p); i < first_bucket_of_page(p + 1) &&
		     i < ODEBUG_HASH_SIZE; i++)
			if (odebug_load(&odebug_buckets[i].count) &&
			    visit(&odebug_buckets[i], chains, start, end, ctx))
				return;
	}
}

/*
 * fork(): the child must find no lock held by a thread it does not have.
 * Only the buckets of used pages can be held; locking the others would
 * write every page of the array, which the fork then copies twice.
 */
void odebug_table_lock_all(void)
{
	size_t p, i;

	odebug_guard_enter();
	odebug_spin_lock(&first_use_lock);
	for (p = 0; p < ODEBUG_BUCKET_PAGES; p++)
		if (odebug_bucket_page_used(p))
			for (i = first_bucket_of_page(p); i < first_bucket_of_page(p + 1) &&
			     i < ODEBUG_HASH_SIZE; i++)
				odebug_bucket_lock(&odebug_buckets[i]);
	odebug_pool_lock();
}

void odebug_table_unlock_all(void)
{
	size_t p, i;

	odebug_pool_unlock();
	for (p = 0; p < ODEBUG_BUCKET_PAGES; p++)
		if (odebug_bucket_page_used(p))
			for (i = first_bucket_of_page(p); i < first_bucket_of_page(p + 1) &&
			     i < ODEBUG_HASH_SIZE; i++)
				odebug_bucket_unlock(&odebug_buckets[i]);
	odebug_spin_unlock(&first_use_lock);
	odebug_guard_exit();
}
