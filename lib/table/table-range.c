/* SPDX-License-Identifier: MIT */
/*
 * table-range.c - what a range of memory holds, asked without a lock: the
 * free check's question (odebug_map_may_hold(): can an object tracked now
 * start here?), answered from the chunk map and the occupancy masks, and
 * the buckets and chains a range's trackers can be on
 * (odebug_table_visit()).  table.c keeps the masks and the map under the
 * bucket locks, exact or erring towards "maybe" (its header), so no
 * answer here is a false "no".
 */
#include "table-chunks.h"

/* Bit s of @x to bit s ^ 2^@k: swap its blocks of 2^@k bits (@low: their low halves). */
#define SWAP_BLOCKS(x, k, low)	((((x) & (low)) << (1u << (k))) | (((x) >> (1u << (k))) & (low)))

/*
 * A set of slots as the set of their slot chains: bit s to bit s ^
 * @shuffle.  The masks are immediates, not a table: the free path reads
 * nothing of our read-only data, which stays given back (trim.c).
 */
static inline uint64_t shuffle_set(uint64_t x, unsigned int shuffle)
{
	_Static_assert(CHAIN_BITS == 6, "one swap per bit of the shuffle");
	if (shuffle & 1)
		x = SWAP_BLOCKS(x, 0, 0x5555555555555555ull);
	if (shuffle & 2)
		x = SWAP_BLOCKS(x, 1, 0x3333333333333333ull);
	if (shuffle & 4)
		x = SWAP_BLOCKS(x, 2, 0x0f0f0f0f0f0f0f0full);
	if (shuffle & 8)
		x = SWAP_BLOCKS(x, 3, 0x00ff00ff00ff00ffull);
	if (shuffle & 16)
		x = SWAP_BLOCKS(x, 4, 0x0000ffff0000ffffull);
	if (shuffle & 32)
		x = SWAP_BLOCKS(x, 5, 0x00000000ffffffffull);
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
	const uint64_t *w = odebug_occupied[class_of_hash(hash)][bucket_index(hash)];
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
	const uint64_t *w = odebug_occupied[class_of_hash(hash)][bucket_index(hash)];

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
	const uint64_t *w = odebug_occupied[class_of_hash(hash)][bucket_index(hash)];

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
	/* Most blocks' cells are in one of the two words: the other is 0. */
	return shuffle_set((lo ? cells_to_slots(lo) : 0) | (hi ? cells_to_slots(hi) << 32 : 0),
			   slot_shuffle_of_hash(hash));
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
	const uint8_t *m = odebug_chunk_map;
	uint64_t chains, hash;

	if ((last - chunk) >> ODEBUG_CHUNK_SHIFT >= ODEBUG_HASH_SIZE) {
		odebug_table_visit_all(ALL_CHAINS, start, end, visit, ctx);
		return;
	}
	if ((last >> ODEBUG_CHUNK_SHIFT) >= odebug_map_chunks)
		m = NULL;		/* every chunk counts as marked */
	for (;; chunk += ODEBUG_CHUNK_SIZE) {
		size_t c = chunk >> ODEBUG_CHUNK_SHIFT;

		if (m && !map_byte(m, c)) {
			/* Eight unmarked chunks at a time, while eight are left. */
			if (!(c & 7) && last - chunk >= 7 * ODEBUG_CHUNK_SIZE &&
			    (!map_page_used(c) || !map_load8(&m[c])))
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
 * byte at a time in the map's last eight bytes, or when big-endian.  The
 * caller knows their page was marked once (map_page_used()).
 */
static inline bool map_bytes_zero(const uint8_t *m, size_t c0, size_t c1)
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

/* The same over any chunks: the pages of the map never marked are not read. */
static inline bool map_zero(const uint8_t *m, size_t c0, size_t c1)
{
	size_t c, e;

	if (c0 / MAP_PAGE_CHUNKS == c1 / MAP_PAGE_CHUNKS)	/* most ranges: one page */
		return !map_page_used(c0) || map_bytes_zero(m, c0, c1);
	for (c = c0;; c = e + 1) {
		e = c | (MAP_PAGE_CHUNKS - 1);
		if (e > c1)
			e = c1;
		if (map_page_used(c) && !map_bytes_zero(m, c, e))
			return false;
		if (e == c1)
			return true;
	}
}

/*
 * Was no page of the map over chunks [c0, c1] ever marked?  A word of the
 * page bits answers for 64 pages (1 GiB), and the bit over that word for
 * the word.  False past 1,024 such words (64 TiB): the caller visits.
 */
static bool map_pages_unused(size_t c0, size_t c1)
{
	size_t p = c0 / MAP_PAGE_CHUNKS, p1 = c1 / MAP_PAGE_CHUNKS, w;
	uint64_t bits;

	if (p1 / 64 - p / 64 > 1024)
		return false;
	for (; p <= p1; p = (w + 1) * 64) {
		w = p / 64;
		if (!(odebug_load(&odebug_map_used_words[w / 64]) >> (w % 64) & 1))
			continue;
		bits = odebug_load(&odebug_map_used[w]) >> (p % 64);
		if (w == p1 / 64)
			bits &= ~0ull >> (63 - (p1 % 64) + (p % 64));
		if (bits)
			return false;
	}
	return true;
}

/*
 * odebug_range_may_hold() of a range over more than one chunk: a chunk the
 * map marks is asked of its mask; eight unmarked ones are passed over with
 * one load.  A range larger than the table (a program's reservation) is
 * visited bucket by bucket, unless no page of the map over it was ever
 * marked.
 */
static __attribute__((noinline)) bool range_may_hold_long(uintptr_t start, uintptr_t end)
{
	uintptr_t chunk = start & ODEBUG_CHUNK_MASK, last = (end - 1) & ODEBUG_CHUNK_MASK;
	size_t c = chunk >> ODEBUG_CHUNK_SHIFT, c1 = last >> ODEBUG_CHUNK_SHIFT;
	const uint8_t *m = odebug_chunk_map;
	bool raw;

	if (c1 - c >= ODEBUG_HASH_SIZE)	/* the slow path visits every bucket once */
		return !(m && c1 < odebug_map_chunks && map_pages_unused(c, c1));
	if (c1 >= odebug_map_chunks)
		m = NULL;		/* every chunk counts as marked */
	/* The map's pages of the range (three at most) all marked once: read as they are. */
	raw = m && map_page_used(c) &&
	      (c / MAP_PAGE_CHUNKS == c1 / MAP_PAGE_CHUNKS ||
	       (map_page_used(c1) &&
		(c1 / MAP_PAGE_CHUNKS - c / MAP_PAGE_CHUNKS < 2 || map_page_used(c + MAP_PAGE_CHUNKS))));
	/* A large block far from every tracker: its bytes, eight a load. */
	if (m && !map_byte_raw(m, c, raw) && map_zero(m, c, c1))
		return false;
	if ((!m || map_byte_raw(m, c, raw)) && chunk_may_hold(chunk, cell_of(start), LAST_CELL))
		return true;
	for (c++; c < c1; c++) {	/* whole chunks: any cell will do */
		if (m && !map_byte_raw(m, c, raw)) {
			/* Eight chunks at a time (one page of the map holds all eight). */
			if (!(c & 7) && c + 8 <= c1 && (!(raw || map_page_used(c)) || !map_load8(&m[c])))
				c += 7;
		} else if (chunk_any(c << ODEBUG_CHUNK_SHIFT)) {
			return true;
		}
	}
	return (!m || map_byte_raw(m, c1, raw)) && chunk_may_hold(last, 0, cell_of(end - 1));
}

/*
 * odebug_map_may_hold() of a nonempty range within one chunk the map
 * marks: the free path read the map itself (tracker.h's
 * odebug_chunk_look()).
 */
bool odebug_chunk_may_hold(uintptr_t start, uintptr_t end)
{
	return chunk_may_hold(start & ODEBUG_CHUNK_MASK, cell_of(start), cell_of(end - 1));
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
	const uint8_t *m = odebug_chunk_map;

	if (c1 == c0 && c1 < odebug_map_chunks) {	/* most blocks: one chunk */
		if (!map_byte(m, c0))
			return false;
		return chunk_may_hold(start & ODEBUG_CHUNK_MASK, cell_of(start), cell_of(end - 1));
	}
	if (c0 != c1)
		return range_may_hold_long(start, end);
	return chunk_may_hold(start & ODEBUG_CHUNK_MASK, cell_of(start), cell_of(end - 1));
}
