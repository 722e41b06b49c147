/* SPDX-License-Identifier: MIT */
/*
 * table.c - the tracker table.
 *
 * 8192 buckets hashed by 4 KiB chunk, each with its own spinlock: all
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
 * gives consecutive chunks distinct (bucket, class) pairs, so up to about
 * 1.2 GiB (317,811 chunks) of contiguous heap has no two chunks sharing a
 * mask.  In front of the
 * masks, the chunk map: one byte per 4 KiB chunk of the address space,
 * indexed by address (no hash), bit e set while a tracker of that chunk may
 * start in its 512-byte eighth e.  The free check of a block far from every
 * tracker reads one byte; a large block's chunks are passed over eight at
 * a time.  A chunk's byte is written only under its bucket's lock, with a
 * plain store.  Chains link trackers by 32-bit pool index.
 *
 * The benchmarks' baseline, bench/table-kernel.c, takes this file's place
 * in a second build of the core: the kernel's one chain per hash and no
 * occupancy words.  bucket.c holds what both share.
 *
 * The bits, for an address and the 64-bit hash of its chunk number:
 *
 *   address:  ... chunk number | slot (6) | half (1) | byte (5)
 *                              '-- cell (7) --------'
 *             bit 12 = CHUNK_SHIFT, 6 = SLOT_SHIFT, 5 = CELL_SHIFT
 *
 *   hash:     | bucket (13) | key (7)      | unused (44) |
 *             '- HASH_BITS -'- SHUFFLE_BITS'
 *                           | class (6) |.|
 *             the class is the key's top CLASS_BITS
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
 * the last three; tests/test-table.c checks them against brute force.
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

#include "internal.h"

#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#endif
#endif
#ifndef VALGRIND_MAKE_MEM_NOACCESS
#define VALGRIND_MAKE_MEM_NOACCESS(a, n)	0
#endif

#define HASH_SIZE	((size_t)1 << ODEBUG_HASH_BITS)

/* One slot chain per 64-byte slot of a chunk, a chain per half of it. */
#define SLOT_SHIFT	6
#define CHAIN_BITS	(ODEBUG_CHUNK_SHIFT - SLOT_SHIFT)
#define CHAINS		(1u << CHAIN_BITS)			/* 64 slot chains */
#define ALL_CHAINS	(~0ull >> (64 - CHAINS))
#define HEADS		(2 * CHAINS)				/* 128 chains */

/* The occupancy masks: one bit per 32-byte cell, two cells per slot. */
#define CELL_SHIFT	(SLOT_SHIFT - 1)
#define CELLS		(1u << (ODEBUG_CHUNK_SHIFT - CELL_SHIFT))	/* 128 */
#define LAST_CELL	(CELLS - 1)
#define MASK_WORDS	(CELLS / 64)

/* The hash bits below the bucket index: the shuffle of the cells, and its class. */
#define SHUFFLE_BITS	(CHAIN_BITS + 1)			/* a chain per cell */
#define SHUFFLE_SHIFT	(64 - ODEBUG_HASH_BITS - SHUFFLE_BITS)
#define CLASS_BITS	6		/* occupancy masks per bucket: 64 */
#define CLASSES		(1u << CLASS_BITS)

/*
 * The chunk map: a byte per chunk below MAP_LIMIT (the 47-bit user address
 * space of x86-64 and of arm64's default 48-bit layout below it), a bit per
 * 512-byte eighth.  32 GiB of address space, reserved, never dumped; a page
 * of it (16 MiB of address space) is touched only when a tracker lives
 * there, and reading an untouched page reads the zero page.  Above
 * MAP_LIMIT every chunk counts as marked.
 */
#define MAP_LIMIT	ODEBUG_MAP_LIMIT
#define MAP_BYTES	((size_t)(MAP_LIMIT >> ODEBUG_CHUNK_SHIFT))
#define EIGHTH_SHIFT	(ODEBUG_CHUNK_SHIFT - 3)

_Static_assert(CHAINS == 64 && SHUFFLE_BITS == 7 && HEADS == 128 && CELL_SHIFT == 5,
	       "odebug_chain_head() in internal.h agrees");
_Static_assert(CHAINS <= 64, "a bucket's chains fit in one 64-bit set");
_Static_assert(CELLS == 2 * CHAINS, "cells_to_slots() folds two cells into a slot");
_Static_assert(MASK_WORDS == 2, "cells_in() reads a class's cells as two words");
_Static_assert(CLASS_BITS == CHAIN_BITS, "the class fixes the slot shuffle (vacate())");
_Static_assert(ODEBUG_HASH_BITS + SHUFFLE_BITS <= 64, "the shuffle is below the bucket index");
_Static_assert(EIGHTH_SHIFT > CELL_SHIFT && CELLS / 8 == 16,
	       "an eighth is 16 cells: a quarter of a mask word");

/*
 * Per bucket: the chain heads (pool indices), eight cache lines; named
 * odebug_heads for the lockless walk (internal.h's odebug_peek(), whose
 * odebug_chain_head() is chain_of() below, bit for bit).
 */
uint32_t (*odebug_heads)[HEADS];
#define heads odebug_heads
/* Per bucket and class: the occupied cells, 128 bits. */
static uint64_t (*occupied)[CLASSES][MASK_WORDS];
/* Per chunk below MAP_LIMIT: the eighths that may hold a tracker; NULL if unmapped. */
uint8_t *odebug_chunk_map;
#define chunk_map odebug_chunk_map
/* The chunks the map covers: MAP_BYTES, 0 without a map (one compare for both). */
static size_t map_chunks;
#define TABLE_BYTES	(HASH_SIZE * (sizeof(*heads) + sizeof(*occupied)))
typedef uint64_t __attribute__((may_alias)) map_word;

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
	heads = (uint32_t (*)[HEADS])p;
	occupied = (uint64_t (*)[CLASSES][MASK_WORDS])(p + HASH_SIZE * sizeof(*heads));
	/*
	 * Without the map (a limit on address space, or strict overcommit),
	 * every chunk counts as marked: the masks alone answer, as before.
	 * Small pages: a huge one would commit 2 MiB per tracked region.
	 */
	chunk_map = map_affordable() ? odebug_reserve(MAP_BYTES) : NULL;
	/*
	 * memcheck's leak check at exit reads every defined word of the
	 * client's memory: 32 GiB of zero pages, minutes.  It is the one
	 * tool that answers this request (-1); there the masks alone answer.
	 */
	if (chunk_map && VALGRIND_MAKE_MEM_NOACCESS(chunk_map, MAP_BYTES)) {
		odebug_unmap(chunk_map, MAP_BYTES);
		chunk_map = NULL;
	}
	if (chunk_map) {
		map_chunks = MAP_BYTES;
		madvise(chunk_map, MAP_BYTES, MADV_NOHUGEPAGE);
		madvise(chunk_map, MAP_BYTES, MADV_DONTDUMP);
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
	if (heads && !madvise(heads, TABLE_BYTES, MADV_HUGEPAGE))
		madvise(heads, TABLE_BYTES, ODEBUG_MADV_COLLAPSE);
}

/* A start that failed after the table was set up: nothing stays mapped. */
void odebug_table_fini(void)
{
	if (heads)
		odebug_unmap(heads, TABLE_BYTES);
	heads = NULL;
	occupied = NULL;
	if (chunk_map)
		odebug_unmap(chunk_map, MAP_BYTES);
	chunk_map = NULL;
	map_chunks = 0;
	odebug_buckets_fini();
}

static size_t bucket_index(uint64_t hash)
{
	return hash >> (64 - ODEBUG_HASH_BITS);
}

/*
 * The shuffle of a chunk's cells over the chains (hash bits below the
 * index, xored with the cell), and of its slots over the slot chains.
 */
static unsigned int key_of_hash(uint64_t hash)
{
	return (unsigned int)(hash >> SHUFFLE_SHIFT) & (HEADS - 1);
}

/* The chunk's class: the six bits below the bucket index, which pick its mask. */
static unsigned int class_of_hash(uint64_t hash)
{
	return key_of_hash(hash) >> 1;
}

/*
 * The slot shuffle: the class, its low bits xored with its high ones.  The
 * bits just below the bucket index are alike in the chunks one bucket gets
 * (multiplicative hashing), and objects at a stride of 2^k cells use the
 * chains the shuffle's low bits pick: with the class itself, eight objects
 * a page shared chains with other chunks' nearly three times as often as
 * at random (max chain 4; 1 M live at 8 a page 10 % slower).  Invertible,
 * so the class still fixes the slot chain (vacate()).
 */
static unsigned int slot_shuffle_of_class(unsigned int c)
{
	return c ^ c >> 2 ^ c >> 4;
}

static unsigned int slot_shuffle_of_hash(uint64_t hash)
{
	return slot_shuffle_of_class(class_of_hash(hash));
}

static unsigned int shuffle_of_hash(uint64_t hash)
{
	return slot_shuffle_of_hash(hash) << 1 | (key_of_hash(hash) & 1);
}

static unsigned int class_of(uintptr_t addr)
{
	return class_of_hash(odebug_chunk_hash(addr));
}

/*
 * The 32-byte cell of @addr in its chunk: what the occupancy masks record.
 * Half a slot, so that an object near the start of its heap block does not
 * share a cell with the end of the block before.
 */
static unsigned int cell_of(uintptr_t addr)
{
	return (unsigned int)(addr >> CELL_SHIFT) & LAST_CELL;
}

/* The 64-byte slot of @addr in its chunk: what picks the chain. */
static unsigned int slot_of(uintptr_t addr)
{
	return (unsigned int)(addr >> SLOT_SHIFT) & (CHAINS - 1);
}

static uint64_t *word_of(struct odebug_bucket *b, uintptr_t addr)
{
	return &occupied[b - odebug_buckets][class_of_hash(odebug_chunk_hash(addr))]
			[cell_of(addr) / 64];
}

/* The chains of slot chain @slot_chain: heads [2 * slot chain + half]. */
static unsigned int head_of(unsigned int slot_chain, unsigned int half)
{
	return 2 * slot_chain + half;
}

/*
 * The chain within the bucket: the 32-byte cell of @addr in its chunk,
 * shuffled, so that the same offset in the different chunks of one bucket
 * spreads out and objects of 32 bytes or more have a chain each (two
 * objects sharing a chain cost a lockless lookup a mispredicted branch
 * half the time).  A xor, not an addition: a slot's two cells stay the two
 * halves of one slot chain.
 */
static unsigned int chain_of(uintptr_t addr)
{
	return cell_of(addr) ^ shuffle_of_hash(odebug_chunk_hash(addr));
}

/* A set of slots as the set of their slot chains: bit s to bit s ^ @shuffle. */
static inline uint64_t shuffle_set(uint64_t x, unsigned int shuffle)
{
	static const uint64_t low[CHAIN_BITS] = {
		0x5555555555555555ull, 0x3333333333333333ull, 0x0f0f0f0f0f0f0f0full,
		0x00ff00ff00ff00ffull, 0x0000ffff0000ffffull, 0x00000000ffffffffull,
	};
	unsigned int k;

	for (k = 0; k < CHAIN_BITS; k++)	/* xor with 2^k: swap blocks of 2^k */
		if (shuffle >> k & 1)
			x = (x & low[k]) << (1u << k) | (x >> (1u << k) & low[k]);
	return x;
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
	return end - chunk < ODEBUG_CHUNK_SIZE ? cell_of(end - 1) : LAST_CELL;
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
	const uint64_t *w = occupied[bucket_index(hash)][class_of_hash(hash)];
	uint64_t l = __atomic_load_n(&w[0], __ATOMIC_RELAXED);
	uint64_t h = __atomic_load_n(&w[1], __ATOMIC_RELAXED);

	if (first < 64)
		l &= ~0ull << first;
	else
		l = 0, h &= ~0ull << (first - 64);
	if (last < 64)
		h = 0, l &= ~0ull >> (63 - last);
	else
		h &= ~0ull >> (LAST_CELL - last);
	*hi = h;
	return l;
}

static inline bool chunk_may_hold(uintptr_t chunk, unsigned int first, unsigned int last)
{
	uint64_t hash = odebug_chunk_hash(chunk);
	const uint64_t *w = occupied[bucket_index(hash)][class_of_hash(hash)];

	if ((first ^ last) < 64)	/* one word: most blocks up to 2 KiB */
		return __atomic_load_n(&w[first / 64], __ATOMIC_RELAXED) &
		       ~0ull << (first & 63) & ~0ull >> (63 - (last & 63));
	return (__atomic_load_n(&w[0], __ATOMIC_RELAXED) & ~0ull << first) |
	       (__atomic_load_n(&w[1], __ATOMIC_RELAXED) & ~0ull >> (LAST_CELL - last));
}

/* Does any tracker of @chunk's class start anywhere in it? */
static inline bool chunk_any(uintptr_t chunk)
{
	uint64_t hash = odebug_chunk_hash(chunk);
	const uint64_t *w = occupied[bucket_index(hash)][class_of_hash(hash)];

	return __atomic_load_n(&w[0], __ATOMIC_RELAXED) | __atomic_load_n(&w[1], __ATOMIC_RELAXED);
}

/*
 * The chains of the bucket of @chunk (with hash @hash) that can hold an
 * object starting in [start, end), as a bit mask; 0 when none can.
 */
static inline uint64_t chains_to_walk(uint64_t hash, uintptr_t chunk,
				      uintptr_t start, uintptr_t end)
{
	uint64_t hi, lo = cells_in(hash, first_cell(chunk, start), last_cell(chunk, end), &hi);

	if (!(lo | hi))
		return 0;
	return shuffle_set(cells_to_slots(lo) | cells_to_slots(hi) << 32, slot_shuffle_of_hash(hash));
}

/* The 512-byte eighth of @addr in its chunk: its bit in the chunk map. */
static unsigned int eighth_of(uintptr_t addr)
{
	return (unsigned int)(addr >> EIGHTH_SHIFT) & 7;
}

/* Eight bytes of the map from @p (eight chunks). */
static inline uint64_t map_load8(const uint8_t *p)
{
	uint64_t w;

	/*
	 * One load; bytes a concurrent insert or removal stores are read
	 * whole, old or new: no lock, as the masks (a tracker inserted
	 * meanwhile is a race in the program itself).  ThreadSanitizer
	 * sees a plain load beside the writers' atomic byte stores as a
	 * race: its builds read the eight bytes one atomic load each.
	 */
	if (ODEBUG_TSAN) {
		w = 0;
		for (unsigned int i = 0; i < 8; i++)
			w |= (uint64_t)__atomic_load_n(&p[i], __ATOMIC_RELAXED) << 8 * i;
		return w;
	}
	__builtin_memcpy(&w, p, sizeof(w));
	return w;
}

/* @addr's chunk holds a tracker in @addr's eighth: mark it.  Under the lock. */
static void map_mark(uintptr_t addr)
{
	uint8_t *m = chunk_map, bit = (uint8_t)(1u << eighth_of(addr)), v;

	if (!m || addr >= MAP_LIMIT)
		return;
	m += addr >> ODEBUG_CHUNK_SHIFT;
	v = __atomic_load_n(m, __ATOMIC_RELAXED);
	if (!(v & bit))		/* a page of the map is written only when needed */
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
 * another chunk of the class (about 1.2 GiB away or more) holds a tracker in the
 * same eighth: a "maybe" the masks answer, never a false "no".
 */
static void vacate(struct odebug_bucket *b, uintptr_t addr)
{
	unsigned int cell = cell_of(addr), cls = class_of(addr);
	unsigned int c = head_of(slot_of(addr) ^ slot_shuffle_of_class(cls), 0);
	uint32_t *chains = heads[b - odebug_buckets];
	uint64_t *w = word_of(b, addr), left;

	if (chain_has_cell(chains[c], cell, cls) || chain_has_cell(chains[c + 1], cell, cls))
		return;
	left = *w & ~(1ull << (cell & 63));
	__atomic_store_n(w, left, __ATOMIC_RELAXED);
	if (chunk_map && addr < MAP_LIMIT && !(left & 0xffffull << (cell & 48))) {
		uint8_t *m = &chunk_map[addr >> ODEBUG_CHUNK_SHIFT];

		__atomic_store_n(m, (uint8_t)(*m & ~(1u << eighth_of(addr))), __ATOMIC_RELAXED);
	}
}
/**
 * odebug_table_visit - the buckets that can hold objects in a range
 * @start, @end:	the range [start, end)
 * @visit:	called with each such bucket and the chains to walk in it,
 *		without its lock; returns true to stop
 * @ctx:	passed to @visit
 *
 * One bucket per chunk of the range, or every bucket once when the range
 * has more chunks than the table has buckets.  The chunks the chunk map
 * passes over cost a load per eight; the others a hash and a load each.
 */
void odebug_table_visit(uintptr_t start, uintptr_t end, odebug_visit_fn visit, void *ctx)
{
	uintptr_t chunk = start & ODEBUG_CHUNK_MASK, last = (end - 1) & ODEBUG_CHUNK_MASK;
	const uint8_t *m = chunk_map;
	uint64_t chains, hash;

	if ((last - chunk) >> ODEBUG_CHUNK_SHIFT >= HASH_SIZE) {
		odebug_table_visit_all(ALL_CHAINS, start, end, visit, ctx);
		return;
	}
	if ((last >> ODEBUG_CHUNK_SHIFT) >= map_chunks)
		m = NULL;		/* every chunk counts as marked */
	for (;; chunk += ODEBUG_CHUNK_SIZE) {
		size_t c = chunk >> ODEBUG_CHUNK_SHIFT;

		if (m && !__atomic_load_n(&m[c], __ATOMIC_RELAXED)) {
			/* Eight unmarked chunks at a time, while eight are left. */
			if (!(c & 7) && last - chunk >= 7 * ODEBUG_CHUNK_SIZE &&
			    !map_load8(&m[c]))
				chunk += 7 * ODEBUG_CHUNK_SIZE;
		} else {
			hash = odebug_chunk_hash(chunk);
			chains = chains_to_walk(hash, chunk, start, end);
			if (chains && visit(&odebug_buckets[bucket_index(hash)], chains,
					    start, end, ctx))
				return;
		}
		if (chunk == last)	/* near the top of the address space: no wrap */
			return;
	}
}

/*
 * Are the map's bytes @c0 to @c1 all clear?  A load per eight chunks; a
 * byte at a time in the map's last eight bytes, or when big-endian.
 */
static inline bool map_zero(const uint8_t *m, size_t c0, size_t c1)
{
	uint64_t any = 0;
	size_t c = c0;

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (c1 + 8 <= MAP_BYTES) {
		for (; c + 8 <= c1 + 1; c += 8)
			any |= map_load8(&m[c]);
		/* The last bytes' word, shifted so that the bytes after @c1 drop out. */
		if (c <= c1)
			any |= map_load8(&m[c]) << 8 * (7 - (c1 - c));
		return !any;
	}
#endif
	for (; c <= c1; c++)
		any |= __atomic_load_n(&m[c], __ATOMIC_RELAXED);
	return !any;
}

/*
 * odebug_range_may_hold() of a range over more than one chunk: a chunk the
 * map marks is asked of its mask; eight unmarked ones are passed over with
 * one load.
 */
static __attribute__((noinline)) bool range_may_hold_long(uintptr_t start, uintptr_t end)
{
	uintptr_t chunk = start & ODEBUG_CHUNK_MASK, last = (end - 1) & ODEBUG_CHUNK_MASK;
	size_t c = chunk >> ODEBUG_CHUNK_SHIFT, c1 = last >> ODEBUG_CHUNK_SHIFT;
	const uint8_t *m = chunk_map;

	if (c1 - c >= HASH_SIZE)
		return true;		/* the slow path visits every bucket once */
	if (c1 >= map_chunks)
		m = NULL;		/* every chunk counts as marked */
	else if (!__atomic_load_n(&m[c], __ATOMIC_RELAXED) && map_zero(m, c, c1))
		return false;		/* a large block far from every tracker */
	if ((!m || __atomic_load_n(&m[c], __ATOMIC_RELAXED)) &&
	    chunk_may_hold(chunk, cell_of(start), LAST_CELL))
		return true;
	for (c++; c < c1; c++) {	/* whole chunks: any cell will do */
		if (m && !__atomic_load_n(&m[c], __ATOMIC_RELAXED)) {
			if (!(c & 7) && c + 8 <= c1 && !map_load8(&m[c]))
				c += 7;
		} else if (chunk_any(c << ODEBUG_CHUNK_SHIFT)) {
			return true;
		}
	}
	return (!m || __atomic_load_n(&m[c1], __ATOMIC_RELAXED)) &&
	       chunk_may_hold(last, 0, cell_of(end - 1));
}

/**
 * odebug_map_may_hold - can an object tracked now start in [start, end)?
 *
 * The free() fast path: no lock, no false "no" (see cells_in() and
 * map_load8()), past the span (tracker.h's odebug_range_may_hold()).  A block of one or two chunks far from every tracker costs
 * one or two loads of the chunk map, a larger one a load per eight chunks;
 * a chunk the map marks, a hash and a load or two of its class's mask.
 */
bool odebug_map_may_hold(uintptr_t start, uintptr_t end)
{
	uintptr_t c0 = start >> ODEBUG_CHUNK_SHIFT, c1 = (end - 1) >> ODEBUG_CHUNK_SHIFT;
	const uint8_t *m = chunk_map;

	if (c1 == c0 && c1 < map_chunks) {	/* most blocks: one chunk */
		if (!__atomic_load_n(&m[c0], __ATOMIC_RELAXED))
			return false;
		return chunk_may_hold(start & ODEBUG_CHUNK_MASK, cell_of(start), cell_of(end - 1));
	}
	/* A larger block far from every tracker: its bytes, eight a load. */
	if (c1 - c0 < 64 && c1 < map_chunks && !__atomic_load_n(&m[c0], __ATOMIC_RELAXED) &&
	    map_zero(m, c0, c1))
		return false;
	if (c0 != c1)
		return range_may_hold_long(start, end);
	return chunk_may_hold(start & ODEBUG_CHUNK_MASK, cell_of(start), cell_of(end - 1));
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
	for (t = odebug_tracker_at(heads[b - odebug_buckets][chain_of(addr)]); t;
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
	uint32_t *head = &heads[b - odebug_buckets][chain_of(odebug_tracker_addr(t))];

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
	uint32_t *pp = &heads[b - odebug_buckets][chain_of(odebug_tracker_addr(t))];
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

/* odebug_bucket_take() on the one chain whose head is *@pp. */
static struct odebug_tracker *take_chain(struct odebug_bucket *b, uint32_t *pp,
					 uintptr_t start, uintptr_t end,
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
 * @taken:	the unlinked trackers are pushed on this list; give it to
 *		odebug_trackers_put() once the lock is dropped
 * @visited:	incremented per tracker looked at
 *
 * Returns the first ACTIVE tracker whose object starts in the range, still
 * linked, or NULL when the chains hold no more of the range.
 */
struct odebug_tracker *odebug_bucket_take(struct odebug_bucket *b, uint64_t chains,
					  uintptr_t start, uintptr_t end,
					  uint32_t *taken, unsigned long *visited)
{
	uint32_t *h = heads[b - odebug_buckets];
	struct odebug_tracker *t;
	unsigned int c;

	for (; chains; chains &= chains - 1) {
		c = head_of((unsigned int)__builtin_ctzll(chains), 0);
		if ((t = take_chain(b, &h[c], start, end, taken, visited)) ||
		    (t = take_chain(b, &h[c + 1], start, end, taken, visited)))
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
		for (half = 0; half < 2; half++)
			for (t = odebug_tracker_at(heads[b - odebug_buckets][c + half]); t;
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

	for (i = 0; i < HASH_SIZE; i++) {
		struct odebug_bucket *b = &odebug_buckets[i];
		uint32_t taken[HEADS];

		/* Always locked: an unlocked look at count may be stale. */
		odebug_bucket_lock(b);
		memcpy(taken, heads[i], sizeof(taken));
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
			__atomic_store_n(&heads[i][c], 0, __ATOMIC_RELAXED);
		}
		memset(occupied[i], 0, sizeof(occupied[i]));
		b->count = 0;
		odebug_bucket_unlock(b);
		for (c = 0; c < HEADS; c++)
			odebug_trackers_put(taken[c]);
	}
	/* The chunk map keeps its bits: set bits are never wrong, only slower. */
}
