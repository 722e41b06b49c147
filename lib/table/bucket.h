/* SPDX-License-Identifier: MIT */
/*
 * bucket.h - the table's buckets as tracker.h's users see them: their
 * hashing by chunk, their pages and their locks (bucket.c, table.c).
 * Nothing here reads or writes a tracker's word; included by tracker.h,
 * where the chain heads and the lockless peek build on it.
 */
#ifndef ODEBUG_BUCKET_H
#define ODEBUG_BUCKET_H

/*
 * "bucket.c", "table.c": the tracker table, 8192 buckets hashed by 4 KiB
 * chunk.  How a bucket chains its trackers is private to table.c; its
 * users walk trackers through these operations.
 */
#define ODEBUG_HASH_BITS 13
#define ODEBUG_HASH_SIZE	((size_t)1 << ODEBUG_HASH_BITS)

/*
 * A bucket is its lock line and its 128 chain heads (pool indexes), nine
 * lines, so that the first object of a chunk makes one page resident, not
 * a page of locks and a page of heads, and threads working on objects of
 * different chunks never share a lock's line (4.5 MiB in all).
 */
struct odebug_bucket {
	odebug_spinlock_t lock;
	uint32_t count;				/* trackers in the bucket */
	uint32_t heads[128] __attribute__((aligned(64)));
} __attribute__((aligned(64)));
extern ODEBUG_HIDDEN struct odebug_bucket *odebug_buckets;

/*
 * The hash of @addr's chunk: its top ODEBUG_HASH_BITS pick the bucket,
 * seven bits further down (ODEBUG_KEY_SHIFT) the chains' shuffle and the
 * occupancy class (table.c).  It hashes the 256 KiB region (the kernel's
 * hash_long(): the golden ratio) and xors the chunk's place in its region
 * into the bucket index's low six bits: the 64 chunks of a region get 64
 * neighbouring buckets (nine pages, whose occupancy masks are 1 KiB
 * together), so a program's first few thousand objects make a few hundred
 * pages resident, not a page of each kind per chunk.  The region's own
 * bits stay the golden ratio's, so consecutive regions still get distinct
 * buckets and classes, and chunks at a large power-of-two stride still
 * spread over every bucket.
 */
#define ODEBUG_REGION_BITS	6
/*
 * Where the seven bits of the shuffle start.  A bucket gets one chunk from
 * each region of a group (the index's top seven bits), so the bits just
 * below the index, which the kernel's hash uses, are a poor key: 8 objects
 * a page shared a chain 2.11 times per object (1.44 with one hash per
 * chunk).  One bit lower, 1.58 (bench/chain-share.py); no two chunks of
 * 153 MiB of contiguous heap share an occupancy mask (of the candidates
 * measured, the fewest shared masks in bench-churn's million tracked
 * objects).
 */
#define ODEBUG_KEY_SHIFT	(64 - ODEBUG_HASH_BITS - 8)
static inline uint64_t odebug_chunk_hash(uintptr_t addr)
{
	/* The chunk's place in its region, in the index's low bits: two shifts. */
	uint64_t place = (uint64_t)(addr >> ODEBUG_CHUNK_SHIFT) << (64 - ODEBUG_REGION_BITS) >>
			 (ODEBUG_HASH_BITS - ODEBUG_REGION_BITS);

	return (uint64_t)(addr >> (ODEBUG_CHUNK_SHIFT + ODEBUG_REGION_BITS)) *
	       0x61C8864680B583EBull ^ place;
}

/* The bucket of @addr's chunk: the hash's top bits. */
static inline struct odebug_bucket *odebug_bucket_of(uintptr_t addr)
{
	return &odebug_buckets[odebug_chunk_hash(addr) >> (64 - ODEBUG_HASH_BITS)];
}

/*
 * Every lock of ours is held with the re-entry guard set: a signal handler
 * that calls free() or the API while this thread holds it passes through
 * instead of spinning forever on a lock its own thread holds.
 */
/*
 * Which 4 KiB pages of the bucket array have had a bucket locked (the page
 * of its lock word): fork() locks and unlocks the buckets of those pages
 * only, so the pages nobody used are not copied in the parent and the
 * child (bucket.c).  A page is
 * marked under a lock the fork handler holds across the fork.
 */
#define ODEBUG_BUCKET_PAGE_SHIFT	12
#define ODEBUG_BUCKET_BYTES	(sizeof(struct odebug_bucket) << ODEBUG_HASH_BITS)
#define ODEBUG_BUCKET_PAGES	((ODEBUG_BUCKET_BYTES + (1u << ODEBUG_BUCKET_PAGE_SHIFT) - 1) >> \
				 ODEBUG_BUCKET_PAGE_SHIFT)
extern ODEBUG_HIDDEN uint64_t odebug_bucket_pages_used[(ODEBUG_BUCKET_PAGES + 63) / 64];
bool odebug_bucket_first_use(size_t page, bool wait);

static inline size_t odebug_bucket_page(const struct odebug_bucket *b)
{
	return (size_t)((const char *)b - (const char *)odebug_buckets) >> ODEBUG_BUCKET_PAGE_SHIFT;
}

static inline bool odebug_bucket_page_used(size_t page)
{
	return odebug_load(&odebug_bucket_pages_used[page / 64]) >> (page % 64) & 1;
}

static inline void odebug_bucket_lock(struct odebug_bucket *b)
{
	size_t page = odebug_bucket_page(b);

	odebug_guard_enter();
	if (unlikely(!odebug_bucket_page_used(page)))
		odebug_bucket_first_use(page, true);
	odebug_spin_lock(&b->lock);
}

static inline void odebug_bucket_unlock(struct odebug_bucket *b)
{
	odebug_spin_unlock(&b->lock);
	odebug_guard_exit();
}

/* Never waits (debug_object_print from a debugger): false when held. */
static inline bool odebug_bucket_trylock(struct odebug_bucket *b)
{
	size_t page = odebug_bucket_page(b);

	odebug_guard_enter();
	if ((odebug_bucket_page_used(page) || odebug_bucket_first_use(page, false)) &&
	    odebug_spin_trylock(&b->lock))
		return true;
	odebug_guard_exit();
	return false;
}

#endif /* ODEBUG_BUCKET_H */
