/* SPDX-License-Identifier: MIT */
/*
 * table.c - the tracker table.
 *
 * 16384 buckets hashed by 4 KiB chunk, each with its own spinlock: all
 * trackers of one chunk share a bucket, so the free check visits exactly
 * one bucket per chunk released (the kernel's design).  Unlike the kernel's
 * single chain per bucket, a bucket holds 64 short chains: an object's
 * chain is its 64-byte slot within the chunk, rotated by the chunk's hash.
 * Finding an object costs the same whether its page holds one object or
 * sixty-four, and the free check of a small block walks only the chains of
 * the slots it covers.
 *
 * Beside the chains, each bucket keeps an occupancy mask for each of 32
 * classes of chunk (five more bits of the chunk's hash): bit c is set
 * while a tracker of a chunk of that class starts in 32-byte cell c.  The
 * masks are exact, kept under the bucket lock, and read without it, so the
 * free check passes over a block whose cells hold no tracker, even when
 * its chunk holds many, without taking the lock.  Multiplicative hashing
 * gives consecutive chunks distinct (bucket, class) pairs, so up to 2 GiB
 * of contiguous heap has no two chunks sharing a mask.  A counter per
 * 64 KiB region (hashed, atomic: regions span buckets) lets the check of a
 * large block pass over sixteen chunks at a time.  Chains link trackers by
 * 32-bit pool index.
 *
 * Built with -Dkernel_table=true, the table is the kernel's instead: one
 * chain per bucket and no occupancy words, the baseline the benchmarks
 * compare against.
 */
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

#define HASH_BITS	ODEBUG_HASH_BITS
#define HASH_SIZE	((size_t)1 << HASH_BITS)
#define CLASS_BITS	5		/* occupancy masks per bucket: 32 */
#define CLASSES		(1 << CLASS_BITS)
#define CLASS_ROTS	(64 >> CLASS_BITS)	/* rotations per class */
#define REGION_SHIFT	16		/* 64 KiB */
#define REGION_MASK	(((uintptr_t)1 << REGION_SHIFT) - 1)
#define ALL_CHAINS	(~0ull >> (64 - ODEBUG_CHAINS))

struct odebug_bucket *odebug_buckets;
uint32_t (*odebug_heads)[ODEBUG_CHAINS];	/* per bucket, four cache lines */
#define buckets odebug_buckets
#define heads odebug_heads
#ifndef ODEBUG_KERNEL_TABLE
#define REGION_BITS	16
#define REGION_COUNTERS	((size_t)1 << REGION_BITS)
static uint64_t (*occupied)[CLASSES][2];	/* per bucket and class: 128 cells */
static uint32_t *regions;			/* trackers per region hash */
#define MASK_BYTES	(HASH_SIZE * sizeof(*occupied) + REGION_COUNTERS * sizeof(*regions))
#else
#define MASK_BYTES	0
#endif
unsigned long odebug_max_chain;

void odebug_stat_max(unsigned long *stat, unsigned long value)
{
	unsigned long old = odebug_load(stat);

	while (value > old &&
	       !__atomic_compare_exchange_n(stat, &old, value, true,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

bool odebug_table_init(void)
{
	size_t i;
	long p;

	/*
	 * Mapped only when enabled: a disabled process pays nothing.  The
	 * chain heads are reserved, not committed: a bucket's line becomes
	 * resident when its first object is tracked.
	 */
	buckets = odebug_map(HASH_SIZE * sizeof(*buckets));
	p = syscall(SYS_mmap, NULL, HASH_SIZE * sizeof(*heads) + MASK_BYTES,
		    PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		    -1, 0);
	if (!buckets || p == -1)
		return false;
	heads = (uint32_t (*)[ODEBUG_CHAINS])p;
#ifndef ODEBUG_KERNEL_TABLE
	occupied = (uint64_t (*)[CLASSES][2])(p + HASH_SIZE * sizeof(*heads));
	regions = (uint32_t *)(occupied + HASH_SIZE);
#endif
	/* Random access over 12 MiB: huge pages spare TLB misses. */
	madvise((void *)p, HASH_SIZE * sizeof(*heads) + MASK_BYTES, MADV_HUGEPAGE);
	for (i = 0; i < HASH_SIZE; i++)
		odebug_spin_init(&buckets[i].lock);
	return true;
}

size_t odebug_table_size(void)
{
	return HASH_SIZE;
}

struct odebug_bucket *odebug_bucket_at(size_t index)
{
	return &buckets[index];
}

#define chunk_hash odebug_chunk_hash

/*
 * The 32-byte cell of @addr in its chunk: what the occupancy masks record.
 * Half a slot, so that an object near the start of its heap block does not
 * share a cell with the end of the block before.
 */
static unsigned int cell_of(uintptr_t addr)
{
	return (unsigned int)(addr >> 5) & 127;
}

#ifndef ODEBUG_KERNEL_TABLE
/*
 * Six bits of the chunk's hash below the bucket index: the rotation of its
 * slots over the chains.  The top CLASS_BITS of them are its class.
 */
static unsigned int rot_of(uintptr_t addr)
{
	return (unsigned int)(chunk_hash(addr) >> (64 - HASH_BITS - 6)) & 63;
}

/* The 64-byte slot of @addr in its chunk: what picks the chain. */
static unsigned int slot_of(uintptr_t addr)
{
	return (unsigned int)(addr >> 6) & 63;
}

static uint64_t *word_of(struct odebug_bucket *b, uintptr_t addr)
{
	return &occupied[b - buckets][rot_of(addr) / CLASS_ROTS][cell_of(addr) >> 6];
}

/*
 * The chain within the bucket: the 64-byte slot of @addr in its chunk,
 * rotated, so the same offset in the different chunks of one bucket
 * spreads out.
 */
unsigned int odebug_chain_of(uintptr_t addr)
{
	return (slot_of(addr) + rot_of(addr)) & (ODEBUG_CHAINS - 1);
}

/* 64 cells to the 32 slots they make: bit 2i or 2i+1 set -> bit i. */
static inline uint64_t cells_to_slots(uint64_t x)
{
	x = (x | x >> 1) & 0x5555555555555555ull;
	x = (x | x >> 1) & 0x3333333333333333ull;
	x = (x | x >> 2) & 0x0f0f0f0f0f0f0f0full;
	x = (x | x >> 4) & 0x00ff00ff00ff00ffull;
	x = (x | x >> 8) & 0x0000ffff0000ffffull;
	return (x | x >> 16) & 0x00000000ffffffffull;
}

/* The cells @first..@last of a chunk in [start, end). */
static inline unsigned int first_cell(uintptr_t chunk, uintptr_t start)
{
	return start > chunk ? cell_of(start) : 0;
}

static inline unsigned int last_cell(uintptr_t chunk, uintptr_t end)
{
	return end - chunk < ODEBUG_CHUNK_SIZE ? cell_of(end - 1) : 127;
}

/*
 * The occupied cells @first..@last of the chunk with hash @hash, as two
 * words (cells 0-63, 64-127); both 0 when none is.  No lock: a tracker
 * inserted meanwhile belongs to an object being freed as it is annotated,
 * a race in the program itself.
 */
static inline uint64_t cells_in(uint64_t hash, unsigned int first, unsigned int last,
				uint64_t *hi)
{
	const uint64_t *w = occupied[hash >> (64 - HASH_BITS)]
				    [(hash >> (64 - HASH_BITS - CLASS_BITS)) & (CLASSES - 1)];
	uint64_t l = __atomic_load_n(&w[0], __ATOMIC_RELAXED);
	uint64_t h = __atomic_load_n(&w[1], __ATOMIC_RELAXED);

	if (first < 64)
		l &= ~0ull << first;
	else
		l = 0, h &= ~0ull << (first - 64);
	if (last < 64)
		h = 0, l &= ~0ull >> (63 - last);
	else
		h &= ~0ull >> (127 - last);
	*hi = h;
	return l;
}

static inline bool chunk_may_hold(uintptr_t chunk, unsigned int first, unsigned int last)
{
	uint64_t hi, lo = cells_in(chunk_hash(chunk), first, last, &hi);

	return lo | hi;
}

/*
 * The chains of the bucket of @chunk (with hash @hash) that can hold an
 * object starting in [start, end), as a bit mask; 0 when none can.
 */
static inline uint64_t chains_to_walk(uint64_t hash, uintptr_t chunk,
				      uintptr_t start, uintptr_t end)
{
	unsigned int rot = (unsigned int)(hash >> (64 - HASH_BITS - 6)) & 63;
	uint64_t hi, lo = cells_in(hash, first_cell(chunk, start), last_cell(chunk, end), &hi);
	uint64_t slots;

	if (!(lo | hi))
		return 0;
	slots = cells_to_slots(lo) | cells_to_slots(hi) << 32;
	return rot ? slots << rot | slots >> (64 - rot) : slots;
}

/*
 * The trackers of the 64 KiB regions that hash to @addr's region counter.
 * Regions span buckets, so the counters change atomically; they let the
 * check of a large block pass over 16 chunks with one load.
 */
static uint32_t *region_of(uintptr_t addr)
{
	return &regions[(uint64_t)(addr >> REGION_SHIFT) * 0x61C8864680B583EBull >>
			(64 - REGION_BITS)];
}

static bool region_empty(uintptr_t addr)
{
	return __atomic_load_n(region_of(addr), __ATOMIC_RELAXED) == 0;
}

static void occupy(struct odebug_bucket *b, uintptr_t addr)
{
	uint64_t *w = word_of(b, addr);

	__atomic_store_n(w, *w | 1ull << (cell_of(addr) & 63), __ATOMIC_RELAXED);
	__atomic_fetch_add(region_of(addr), 1, __ATOMIC_RELAXED);
}

/*
 * @addr's tracker left: clear its cell's bit unless another tracker of the
 * same class and cell stays.  Such trackers have one of the class's
 * CLASS_ROTS rotations and the same slot, so they are on one of that many
 * chains.
 */
static void vacate(struct odebug_bucket *b, uintptr_t addr)
{
	unsigned int cell = cell_of(addr), cls = rot_of(addr) / CLASS_ROTS, r;
	uint64_t *w = word_of(b, addr);
	struct odebug_tracker *t;

	__atomic_fetch_sub(region_of(addr), 1, __ATOMIC_RELAXED);
	for (r = cls * CLASS_ROTS; r < (cls + 1) * CLASS_ROTS; r++)
		for (t = odebug_tracker_at(heads[b - buckets][(slot_of(addr) + r) & 63]); t;
		     t = odebug_tracker_at(t->hnext))
			if (cell_of(t->addr) == cell && rot_of(t->addr) / CLASS_ROTS == cls)
				return;
	__atomic_store_n(w, *w & ~(1ull << (cell & 63)), __ATOMIC_RELAXED);
}
#else
/* The kernel's table: one chain per bucket, walked whenever it is not empty. */
unsigned int odebug_chain_of(uintptr_t addr)
{
	(void)addr;
	return 0;
}

static inline uint64_t chains_to_walk(uint64_t hash, uintptr_t chunk,
				      uintptr_t start, uintptr_t end)
{
	(void)chunk, (void)start, (void)end;
	return odebug_load(&buckets[hash >> (64 - HASH_BITS)].count) ? 1 : 0;
}

static inline unsigned int first_cell(uintptr_t chunk, uintptr_t start)
{
	(void)chunk, (void)start;
	return 0;
}

static inline unsigned int last_cell(uintptr_t chunk, uintptr_t end)
{
	(void)chunk, (void)end;
	return 0;
}

static inline bool chunk_may_hold(uintptr_t chunk, unsigned int first, unsigned int last)
{
	(void)first, (void)last;
	return odebug_load(&odebug_bucket_of(chunk)->count) != 0;
}

static bool region_empty(uintptr_t addr)
{
	(void)addr;
	return false;
}

static void occupy(struct odebug_bucket *b, uintptr_t addr)
{
	(void)b, (void)addr;
}

static void vacate(struct odebug_bucket *b, uintptr_t addr)
{
	(void)b, (void)addr;
}
#endif
/**
 * odebug_table_visit - the buckets that can hold objects in a range
 * @start, @end:	the range [start, end)
 * @visit:	called with each such bucket and the chains to walk in it,
 *		without its lock; returns true to stop
 * @ctx:	passed to @visit
 *
 * One bucket per chunk of the range, or every bucket once when the range
 * has more chunks than the table has buckets.  The chunks whose slots in
 * the range hold no tracker cost a hash and a load each: the free() path.
 */
void odebug_table_visit(uintptr_t start, uintptr_t end, odebug_visit_fn visit, void *ctx)
{
	uintptr_t chunk = start & ODEBUG_CHUNK_MASK;
	uintptr_t chunks = ((end - 1 - chunk) >> ODEBUG_CHUNK_SHIFT) + 1;
	uint64_t chains, hash;
	size_t i;

	if (chunks > HASH_SIZE) {
		for (i = 0; i < HASH_SIZE; i++)
			if (odebug_load(&buckets[i].count) &&
			    visit(&buckets[i], ALL_CHAINS, start, end, ctx))
				return;
		return;
	}
	for (; chunks; chunks--, chunk += ODEBUG_CHUNK_SIZE) {
		/* A long range: skip each empty region in one step. */
		if (chunks > 2 && region_empty(chunk)) {
			uintptr_t next = (chunk | REGION_MASK) + 1;
			uintptr_t skip = (next - chunk) >> ODEBUG_CHUNK_SHIFT;

			if (skip >= chunks)
				return;
			chunks -= skip - 1;
			chunk = next - ODEBUG_CHUNK_SIZE;
			continue;
		}
		hash = chunk_hash(chunk);
		chains = chains_to_walk(hash, chunk, start, end);
		if (chains && visit(&buckets[hash >> (64 - HASH_BITS)], chains, start, end, ctx))
			return;
	}
}

/**
 * odebug_range_may_hold - can an object tracked now start in [start, end)?
 *
 * The free() fast path: no lock, no false "no" (see cells_in()).  A chunk
 * costs a hash and two loads; the whole chunks of a long range are passed
 * over a 64 KiB region at a time when the region holds no tracker.
 */
bool odebug_range_may_hold(uintptr_t start, uintptr_t end)
{
	uintptr_t chunk = start & ODEBUG_CHUNK_MASK, last = (end - 1) & ODEBUG_CHUNK_MASK;

	if (chunk == last)		/* most blocks: one chunk, no edge cases */
		return chunk_may_hold(chunk, cell_of(start), cell_of(end - 1));
	if ((last - chunk) >> ODEBUG_CHUNK_SHIFT >= HASH_SIZE)
		return true;		/* the slow path visits every bucket once */
	if (chunk_may_hold(chunk, first_cell(chunk, start), 127))
		return true;
	for (chunk += ODEBUG_CHUNK_SIZE; chunk != last; chunk += ODEBUG_CHUNK_SIZE) {
		if (region_empty(chunk)) {
			uintptr_t next = (chunk | REGION_MASK) + 1;

			if (next - chunk > last - chunk)	/* @last is in it */
				break;
			chunk = next - ODEBUG_CHUNK_SIZE;
			continue;
		}
		if (chunk_may_hold(chunk, 0, 127))
			return true;
	}
	if (chunk != last && region_empty(last))
		return false;
	return chunk_may_hold(last, 0, last_cell(last, end));
}

#define chain_of odebug_chain_of

/* Find the tracker of @addr; the bucket lock is held. */
struct odebug_tracker *odebug_lookup(struct odebug_bucket *b, uintptr_t addr)
{
	struct odebug_tracker *t;
	unsigned long cnt = 0;

	if (!b->count)
		return NULL;
	for (t = odebug_tracker_at(heads[b - buckets][chain_of(addr)]); t;
	     t = odebug_tracker_at(t->hnext)) {
		if (t->addr == addr)
			return t;
		cnt++;
	}
	if (cnt > odebug_load(&odebug_max_chain))
		odebug_stat_max(&odebug_max_chain, cnt);
	return NULL;
}

void odebug_insert(struct odebug_bucket *b, struct odebug_tracker *t)
{
	uint32_t *head = &heads[b - buckets][chain_of(t->addr)];

	t->hnext = *head;
	*head = odebug_tracker_index(t);
	__atomic_store_n(&b->count, b->count + 1, __ATOMIC_RELAXED);
	occupy(b, t->addr);
}

void odebug_remove(struct odebug_bucket *b, struct odebug_tracker *t)
{
	uint32_t *pp = &heads[b - buckets][chain_of(t->addr)];
	uint32_t index = odebug_tracker_index(t);

	for (; *pp; pp = &odebug_tracker_at(*pp)->hnext) {
		if (*pp == index) {
			*pp = t->hnext;
			odebug_bucket_forget(b, t);
			return;
		}
	}
}

/* @t has been unlinked from its chain: account for it. */
void odebug_bucket_forget(struct odebug_bucket *b, const struct odebug_tracker *t)
{
	__atomic_store_n(&b->count, b->count - 1, __ATOMIC_RELAXED);
	vacate(b, t->addr);
}

/*
 * Out of memory: hand every tracker back to the pool.  libodebug is off by
 * now, so no tracker is inserted behind the walk.
 */
void odebug_table_drain(void)
{
	size_t i;
	int c;

	for (i = 0; i < HASH_SIZE; i++) {
		struct odebug_bucket *b = &buckets[i];
		uint32_t taken[ODEBUG_CHAINS];

		/* Always locked: an unlocked look at count may be stale. */
		odebug_bucket_lock(b);
		memcpy(taken, heads[i], sizeof(taken));
		memset(heads[i], 0, sizeof(taken));
#ifndef ODEBUG_KERNEL_TABLE
		memset(occupied[i], 0, sizeof(occupied[i]));
#endif
		b->count = 0;
		odebug_bucket_unlock(b);
		for (c = 0; c < ODEBUG_CHAINS; c++) {
			struct odebug_tracker *t = odebug_tracker_at(taken[c]);

			while (t) {
				struct odebug_tracker *next = odebug_tracker_at(t->hnext);

				odebug_pool_free(t);
				t = next;
			}
		}
	}
#ifndef ODEBUG_KERNEL_TABLE
	memset(regions, 0, REGION_COUNTERS * sizeof(*regions));
#endif
}

/* fork(): the child must find no lock held by a thread it does not have. */
void odebug_table_lock_all(void)
{
	size_t i;

	for (i = 0; i < HASH_SIZE; i++)
		odebug_bucket_lock(&buckets[i]);
	odebug_pool_lock();
}

void odebug_table_unlock_all(void)
{
	size_t i;

	odebug_pool_unlock();
	for (i = 0; i < HASH_SIZE; i++)
		odebug_bucket_unlock(&buckets[i]);
}
