/* SPDX-License-Identifier: MIT */
/*
 * table.c - the tracker table.
 *
 * 8192 buckets hashed by 4 KiB chunk (the 64 chunks of a 256 KiB region
 * get 64 neighbouring buckets: tracker.h), each with its own spinlock: all
 * trackers of one chunk share a bucket, so the free check visits exactly
 * one bucket per chunk released (the kernel's design, with half its
 * buckets).  Unlike the kernel's single chain per bucket, a bucket holds
 * 128 short chains: an object's chain is its 32-byte cell within the
 * chunk, shuffled by the chunk's hash.  Finding an
 * object costs the same whether its page holds one object or a hundred,
 * objects of 32 bytes or more have a chain each, and the free check of a
 * small block walks only the chains of the slots it covers.
 *
 * Beside the chains, each bucket keeps an occupancy mask for each of 64
 * classes of chunk (six more bits of the chunk's hash): bit c is set
 * while a tracker of a chunk of that class starts in 32-byte cell c.  The
 * masks are exact, kept under the bucket lock, and read without it, so the
 * free check passes over a block whose cells hold no tracker, even when
 * its chunk holds many, without taking the lock.  Multiplicative hashing
 * of the region gives consecutive chunks distinct (bucket, class) pairs,
 * so up to about 153 MiB (39,296 chunks) of contiguous heap has no two
 * chunks sharing a mask (with one hash per chunk: 1.2 GiB).  In front of the
 * masks, the chunk map: one byte per 4 KiB chunk of the address space,
 * indexed by address (no hash), bit e set while a tracker of that chunk may
 * start in its 512-byte eighth e.  The free check of a block far from every
 * tracker reads one byte; a large block's chunks are passed over eight at
 * a time.  A chunk's byte is written only under its bucket's lock, with a
 * plain store.  Chains link trackers by 32-bit pool index.
 *
 * This file keeps the chains, the masks and the chunk map under the bucket
 * locks; table-range.c answers what a range holds from them without a
 * lock; table.h is the layout both read.
 *
 * The benchmarks' baseline, bench/table-kernel.c, takes the place of both
 * in a second build of the core: the kernel's one chain per hash and no
 * occupancy words.  bucket.c holds what both share.
 *
 * The bits, for an address and the 64-bit hash of its chunk number:
 *
 *   address:  ... chunk number | slot (6) | half (1) | byte (5)
 *                              '-- cell (7) --------'
 *             bit 12 = CHUNK_SHIFT, 6 = SLOT_SHIFT, 5 = CELL_SHIFT
 *
 *   hash:     | bucket (13) |.| key (7)      | unused (43) |
 *             '- HASH_BITS -' '- SHUFFLE_BITS'
 *                             | class (6) |.|
 *             the class is the key's top CLASS_BITS; tracker.h's
 *             odebug_chunk_hash() and ODEBUG_KEY_SHIFT say why
 *
 * A tracker's chain is heads [bucket][cell xor shuffle], the shuffle being
 * (class ^ class >> 2 ^ class >> 4) << 1 | the key's low bit: the two cells
 * of a slot land on the two halves of one slot chain (slot xor the slot
 * shuffle), so sets of chains (the free check's) are sets of slot chains,
 * both halves each.  Its occupancy bit is bit (cell mod 64) of
 * word (cell / 64) of mask [bucket][class].
 *
 * Invariants, all changed only under the bucket lock:
 * - a tracker is on exactly one chain, the one of its address;
 * - a mask bit is set exactly when a tracker of a chunk of that bucket and
 *   class starts in that cell;
 * - a bucket's count is the number of trackers on its chains;
 * - a chunk map bit is set whenever a tracker of that chunk starts in that
 *   eighth (it may stay set after: see vacate()); the chunk's byte is
 *   written under the chunk's bucket lock only.
 * The lockless readers (odebug_range_may_hold, odebug_table_visit) rely on
 * the last three; tests/unit/test-table.c checks them against brute force.
 *
 * The lockless annotation calls (odebug_peek() and one transition of a
 * tracker's word) rest on the invariants listed in tracker.h, the one
 * header that lays out, compares-and-swaps and stores a tracker's word.
 * tests/torture/race.c hammers both paths on the same objects.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "table-chunks.h"

#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#endif
#endif
#ifndef VALGRIND_MAKE_MEM_NOACCESS
#define VALGRIND_MAKE_MEM_NOACCESS(a, n)	0
#endif

/* table.h says what these hold. */
ODEBUG_HOT uint64_t (*odebug_occupied)[ODEBUG_HASH_SIZE][MASK_WORDS];
ODEBUG_HOT uint8_t *odebug_chunk_map;
ODEBUG_HOT size_t odebug_map_chunks;
#define TABLE_BYTES	(CLASSES * sizeof(*odebug_occupied))

/*
 * May the chunk map take 32 GiB of address space?  Not when the program
 * runs under a limit on address space or data (RLIMIT_AS, RLIMIT_DATA,
 * which counts private writable mappings) that it did not budget for us,
 * nor under strict overcommit (vm.overcommit_memory=2), where the kernel
 * ignores MAP_NORESERVE and would charge the whole map to the machine's
 * commit limit: an optimisation must not make the program's own
 * allocations fail.  (Read once, at the start; raw reads, no stdio.)
 */
static bool map_affordable(void)
{
	struct rlimit rl;
	char c = '0';
	int fd, saved = errno;

	if ((!getrlimit(RLIMIT_AS, &rl) && rl.rlim_cur != RLIM_INFINITY) ||
	    (!getrlimit(RLIMIT_DATA, &rl) && rl.rlim_cur != RLIM_INFINITY))
		return false;
	fd = open("/proc/sys/vm/overcommit_memory", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (read(fd, &c, 1) != 1)
			c = '2';	/* unknown: be careful */
		close(fd);
	}
	errno = saved;
	return c != '2';
}

bool odebug_table_init(void)
{
	char *p;

	/*
	 * Mapped only when enabled: a disabled process pays nothing.  The
	 * chain heads and masks are reserved, not committed: a bucket's
	 * lines become resident when its first object is tracked.
	 */
	p = odebug_reserve(TABLE_BYTES);
	if (!p)
		return false;
	if (!odebug_buckets_init()) {
		odebug_unmap(p, TABLE_BYTES);
		return false;
	}
	odebug_occupied = (uint64_t (*)[ODEBUG_HASH_SIZE][MASK_WORDS])p;
	/*
	 * Without the map (a limit on address space, or strict overcommit),
	 * every chunk counts as marked: the masks alone answer, as before.
	 * Small pages: a huge one would commit 2 MiB per tracked region.
	 */
	odebug_chunk_map = map_affordable() ? odebug_reserve(MAP_BYTES) : NULL;
	/*
	 * memcheck's leak check at exit reads every defined word of the
	 * client's memory: 32 GiB of zero pages, minutes.  It is the one
	 * tool that answers this request (-1); there the masks alone answer.
	 */
	if (odebug_chunk_map && VALGRIND_MAKE_MEM_NOACCESS(odebug_chunk_map, MAP_BYTES)) {
		odebug_unmap(odebug_chunk_map, MAP_BYTES);
		odebug_chunk_map = NULL;
	}
	if (odebug_chunk_map) {
		odebug_map_chunks = MAP_BYTES;
		madvise(odebug_chunk_map, MAP_BYTES, MADV_NOHUGEPAGE);
		madvise(odebug_chunk_map, MAP_BYTES, MADV_DONTDUMP);
	}
	return true;
}

/*
 * Random access over 12 MiB: huge pages spare TLB misses once many objects
 * are tracked (pool.c calls this once, at HUGE_AT trackers).  Not from the
 * start: a program with a handful of objects would get a 2 MiB page, zeroed,
 * for each part of the table its first objects touch (10-15 MB of RSS for
 * 20 mutexes).  The pages touched by then are collapsed where the kernel
 * can (MADV_COLLAPSE, Linux 6.1); elsewhere they stay small.
 */
void odebug_table_go_huge(void)
{
	if (odebug_occupied && !madvise(odebug_occupied, TABLE_BYTES, MADV_HUGEPAGE))
		madvise(odebug_occupied, TABLE_BYTES, ODEBUG_MADV_COLLAPSE);
	if (odebug_buckets && !madvise(odebug_buckets, ODEBUG_BUCKET_BYTES, MADV_HUGEPAGE))
		madvise(odebug_buckets, ODEBUG_BUCKET_BYTES, ODEBUG_MADV_COLLAPSE);
}

/* A start that failed after the table was set up: nothing stays mapped. */
void odebug_table_fini(void)
{
	if (odebug_occupied)
		odebug_unmap(odebug_occupied, TABLE_BYTES);
	odebug_occupied = NULL;
	if (odebug_chunk_map)
		odebug_unmap(odebug_chunk_map, MAP_BYTES);
	odebug_chunk_map = NULL;
	odebug_map_chunks = 0;
	odebug_buckets_fini();
}

/* The map's pages ever marked, and their words ever written (table.h): in .lbss, touched where used. */
ODEBUG_LARGE uint64_t odebug_map_used[MAP_BYTES / MAP_PAGE_CHUNKS / 64];
ODEBUG_LARGE uint64_t odebug_map_used_words[MAP_BYTES / MAP_PAGE_CHUNKS / 64 / 64];

/* @addr's chunk holds a tracker in @addr's eighth: mark it.  Under the lock. */
static void map_mark(uintptr_t addr)
{
	uint8_t *m = odebug_chunk_map, bit = (uint8_t)(1u << eighth_of(addr)), v;
	size_t c = addr >> ODEBUG_CHUNK_SHIFT, p = c / MAP_PAGE_CHUNKS;

	if (!m || addr >= MAP_LIMIT)
		return;
	m += c;
	v = __atomic_load_n(m, __ATOMIC_RELAXED);
	if (v & bit)		/* a page of the map is written only when needed */
		return;
	if (!map_page_used(c)) {	/* before the byte: a reader sees the page used first */
		__atomic_or_fetch(&odebug_map_used[p / 64], 1ull << (p % 64), __ATOMIC_RELEASE);
		__atomic_or_fetch(&odebug_map_used_words[p / 64 / 64], 1ull << (p / 64 % 64),
				  __ATOMIC_RELEASE);
	}
	__atomic_store_n(m, (uint8_t)(v | bit), __ATOMIC_RELAXED);
}

static void occupy(struct odebug_bucket *b, uintptr_t addr)
{
	uint64_t *w = word_of(b, addr);

	__atomic_store_n(w, *w | 1ull << (cell_of(addr) & 63), __ATOMIC_RELAXED);
	map_mark(addr);
}

/* Does the chain from @head hold a tracker in @cell of a chunk of class @cls? */
static bool chain_has_cell(uint32_t head, unsigned int cell, unsigned int cls)
{
	struct odebug_tracker *t;

	for (t = odebug_tracker_at(head); t; t = odebug_tracker_at(odebug_tracker_next(t)))
		if (cell_of(odebug_tracker_addr(t)) == cell &&
		    class_of(odebug_tracker_addr(t)) == cls)
			return true;
	return false;
}

/*
 * @addr's tracker left: clear its cell's bit unless another tracker of the
 * same class and cell stays.  The class fixes the slot shuffle, so such
 * trackers are on @addr's slot chain, in either half.  Then clear the
 * chunk map's bit of @addr's eighth when no cell of that eighth is left
 * in the class's mask: no tracker of any chunk of the
 * class, so none of this chunk, starts there.  The bit stays set while
 * another chunk of the class (about 153 MiB away or more) holds a tracker in the
 * same eighth: a "maybe" the masks answer, never a false "no".
 */
static void vacate(struct odebug_bucket *b, uintptr_t addr)
{
	unsigned int cell = cell_of(addr), cls = class_of(addr);
	unsigned int c = head_of(slot_of(addr) ^ slot_shuffle_of_class(cls), 0);
	uint32_t *chains = b->heads;
	uint64_t *w = word_of(b, addr), left;

	if (chain_has_cell(chains[c], cell, cls) || chain_has_cell(chains[c + 1], cell, cls))
		return;
	left = *w & ~(1ull << (cell & 63));
	__atomic_store_n(w, left, __ATOMIC_RELAXED);
	if (odebug_chunk_map && addr < MAP_LIMIT && !(left & 0xffffull << (cell & 48))) {
		uint8_t *m = &odebug_chunk_map[addr >> ODEBUG_CHUNK_SHIFT];

		__atomic_store_n(m, (uint8_t)(*m & ~(1u << eighth_of(addr))), __ATOMIC_RELAXED);
	}
}

/*
 * The tracker linked for @addr, FREED or not (at most one is); the bucket
 * lock is held.  Object init revives a FREED one in place.
 */
struct odebug_tracker *odebug_lookup_any(struct odebug_bucket *b, uintptr_t addr)
{
	struct odebug_tracker *t;
	unsigned long cnt = 0;

	if (!b->count)
		return NULL;
	for (t = odebug_tracker_at(b->heads[chain_of(addr)]); t;
	     t = odebug_tracker_at(odebug_tracker_next(t))) {
		if (odebug_tracker_addr(t) == addr)
			return t;	/* linked: never RETIRED */
		cnt++;
	}
	if (cnt > odebug_load(&odebug_max_chain))
		odebug_stat_max(&odebug_max_chain, cnt);
	return NULL;
}

/* Find the tracker of @addr, a tracked one (not FREED); the bucket lock is held. */
struct odebug_tracker *odebug_lookup(struct odebug_bucket *b, uintptr_t addr)
{
	struct odebug_tracker *t = odebug_lookup_any(b, addr);

	return t && !odebug_word_freed(odebug_tracker_word(t)) ? t : NULL;
}

/**
 * odebug_release - stop tracking @t (debug_object_free), the bucket lock held
 * @w:	the word the caller decided on (not ACTIVE, not FREED)
 *
 * The locked free: the one the lockless free (debugobjects.c) leaves to
 * it, with the same CAS.  The tracker stays linked, FREED: the next init
 * of the same address revives it in place (odebug_revive()), so an
 * object's free and init cost no pool, chain, occupancy or chunk-map
 * change; the free check reclaims the FREED trackers of the memory
 * released (odebug_bucket_take).  Returns -1 when a lockless call changed
 * the word since @w (decide again: a lockless free may have made it
 * FREED, untracked), 0 when done; 1 would mean unlinked, for the caller
 * to give to the pool (bench/table-kernel.c).
 */
int odebug_release(struct odebug_bucket *b, struct odebug_tracker *t, uint64_t w)
{
	(void)b;
	/* A CAS: a lockless activate now fails, or it came first. */
	if (!odebug_tracker_free(t, w))
		return -1;
	odebug_pool_count(false);
	return 0;
}

/*
 * Track again, INIT with descriptor slot @slot, the FREED tracker @t of
 * @addr; the bucket lock is held.
 */
void odebug_revive(struct odebug_tracker *t, uintptr_t addr, unsigned int slot)
{
	t->astate = 0;
	odebug_tracker_set_origin(t, ODEBUG_ORIGIN_INIT, 0);
	odebug_tracker_set_origin(t, ODEBUG_ORIGIN_ACTIVATE, 0);
	odebug_tracker_set_tracked(t, addr, slot, ODEBUG_STATE_INIT);
	odebug_pool_count(true);
}

/* @t's word is set: the release store publishes it to lockless readers. */
void odebug_insert(struct odebug_bucket *b, struct odebug_tracker *t)
{
	uint32_t *head = &b->heads[chain_of(odebug_tracker_addr(t))];

	odebug_span_extend(odebug_tracker_addr(t));
	odebug_tracker_set_next(t, *head);
	__atomic_store_n(head, odebug_tracker_index(t), __ATOMIC_RELEASE);
	__atomic_store_n(&b->count, b->count + 1, __ATOMIC_RELAXED);
	occupy(b, odebug_tracker_addr(t));
}

/* @t has been unlinked from its chain: account for it. */
static void forget(struct odebug_bucket *b, const struct odebug_tracker *t)
{
	__atomic_store_n(&b->count, b->count - 1, __ATOMIC_RELAXED);
	vacate(b, odebug_tracker_addr(t));
}

/*
 * Mark @t RETIRED, whatever its state (a lockless call can no longer change
 * it), unless the caller claimed it already (odebug_tracker_retire());
 * then unlink it.
 */
void odebug_remove(struct odebug_bucket *b, struct odebug_tracker *t)
{
	uint32_t *pp = &b->heads[chain_of(odebug_tracker_addr(t))];
	uint32_t index = odebug_tracker_index(t);

	if (!odebug_word_retired(odebug_tracker_word(t)))
		odebug_tracker_retire_any(t);
	for (; *pp; pp = &odebug_tracker_at(*pp)->hnext) {
		if (*pp == index) {
			__atomic_store_n(pp, odebug_tracker_next(t), __ATOMIC_RELAXED);
			forget(b, t);
			return;
		}
	}
}

/*
 * Is slot chain @c (head_of()'s) empty in both halves?  A walk of every
 * chain (a munmap() of a range larger than the table) passes most of a
 * bucket's chains over with this, not with a call per half.
 */
static inline bool chain_empty(const uint32_t *heads, unsigned int c)
{
	return !(__atomic_load_n(&heads[c], __ATOMIC_RELAXED) |
		 __atomic_load_n(&heads[c + 1], __ATOMIC_RELAXED));
}

/* odebug_bucket_take() on the one chain whose head is *@pp. */
static struct odebug_tracker *take_chain(struct odebug_bucket *b, uint32_t *pp,
					 uintptr_t start, uintptr_t end, odebug_sync_fn sync,
					 uint32_t *taken, unsigned long *visited)
{
	struct odebug_tracker *t;
	uint64_t w;

	while (*pp) {
		t = odebug_tracker_at(*pp);
		++*visited;
		w = odebug_tracker_word(t);
		if (odebug_word_addr(w) < start || odebug_word_addr(w) >= end) {
			pp = &t->hnext;
			continue;
		}
		if (sync && !odebug_word_freed(w)) {
			sync(t);
			w = odebug_tracker_word(t);
		}
		if (odebug_word_state(w) == ODEBUG_STATE_ACTIVE)
			return t;
		if (odebug_word_freed(w)) {
			/* Untracked already, and counted so: back to the pool. */
			odebug_tracker_retire_freed(t, w);
			__atomic_store_n(pp, odebug_tracker_next(t), __ATOMIC_RELAXED);
			forget(b, t);
			odebug_pool_recycle(t);
			continue;
		}
		/* Claimed, unless a lockless activate got there first: look again. */
		if (!odebug_tracker_retire(t, w))
			continue;
		__atomic_store_n(pp, odebug_tracker_next(t), __ATOMIC_RELAXED);
		forget(b, t);
		odebug_tracker_set_next(t, *taken);
		*taken = odebug_tracker_index(t);
	}
	return NULL;
}

/**
 * odebug_bucket_take - unlink the trackers of a range, up to an active one
 * @b:		the bucket, locked by the caller
 * @chains:	the slot chains to walk, as odebug_table_visit() passed them
 * @start, @end: the range [start, end)
 * @sync:	called first on each tracker of the range not FREED (a lock's
 *		hold read from its words, builtin.h), or NULL
 * @taken:	the unlinked trackers are pushed on this list; give it to
 *		odebug_trackers_put() once the lock is dropped
 * @visited:	incremented per tracker looked at
 *
 * Returns the first ACTIVE tracker whose object starts in the range, still
 * linked, or NULL when the chains hold no more of the range.
 */
struct odebug_tracker *odebug_bucket_take(struct odebug_bucket *b, uint64_t chains,
					  uintptr_t start, uintptr_t end, odebug_sync_fn sync,
					  uint32_t *taken, unsigned long *visited)
{
	uint32_t *h = b->heads;
	struct odebug_tracker *t;
	unsigned int c;

	for (; chains; chains &= chains - 1) {
		c = head_of((unsigned int)__builtin_ctzll(chains), 0);
		if (chain_empty(h, c))
			continue;
		if ((t = take_chain(b, &h[c], start, end, sync, taken, visited)) ||
		    (t = take_chain(b, &h[c + 1], start, end, sync, taken, visited)))
			return t;
	}
	return NULL;
}

/**
 * odebug_bucket_each - call @fn on each tracker of @chains in bucket @b
 *
 * The caller holds the bucket lock; @fn must not change the chains.  Stops
 * when @fn returns true, and returns whether it did.
 */
bool odebug_bucket_each(struct odebug_bucket *b, uint64_t chains,
			odebug_tracker_fn fn, void *ctx)
{
	struct odebug_tracker *t;

	unsigned int c, half;

	for (chains &= ALL_CHAINS; chains; chains &= chains - 1) {
		c = head_of((unsigned int)__builtin_ctzll(chains), 0);
		if (chain_empty(b->heads, c))
			continue;
		for (half = 0; half < 2; half++)
			for (t = odebug_tracker_at(b->heads[c + half]); t;
			     t = odebug_tracker_at(odebug_tracker_next(t)))
				if (!odebug_word_freed(odebug_tracker_word(t)) && fn(t, ctx))
					return true;
	}
	return false;
}

/*
 * Out of memory: hand every tracker back to the pool.  libodebug is off by
 * now, so no tracker is inserted behind the walk.
 */
void odebug_table_drain(void)
{
	size_t i;
	unsigned int c;

	for (i = 0; i < ODEBUG_HASH_SIZE; i++) {
		struct odebug_bucket *b = &odebug_buckets[i];
		uint32_t taken[HEADS];

		/* Always locked: an unlocked look at count may be stale. */
		odebug_bucket_lock(b);
		memcpy(taken, b->heads, sizeof(taken));
		for (c = 0; c < HEADS; c++) {
			struct odebug_tracker *t;

			for (t = odebug_tracker_at(taken[c]); t; t = odebug_tracker_at(t->hnext)) {
				/*
				 * A FREED one's free was counted: odebug_trackers_put()
				 * counts again.  Decided on the word the OR replaced, since
				 * a lockless free may turn it FREED until then.
				 */
				if (odebug_word_freed(odebug_tracker_retire_any(t)))
					odebug_pool_count(true);
			}
			__atomic_store_n(&b->heads[c], 0, __ATOMIC_RELAXED);
		}
		/* A bucket without trackers has clear masks: leave its pages be. */
		if (b->count)
			for (c = 0; c < CLASSES; c++)
				memset(odebug_occupied[c][i], 0, sizeof(odebug_occupied[c][i]));
		b->count = 0;
		odebug_bucket_unlock(b);
		for (c = 0; c < HEADS; c++)
			odebug_trackers_put(taken[c]);
	}
	/* The chunk map keeps its bits: set bits are never wrong, only slower. */
}
