/* SPDX-License-Identifier: MIT */
/*
 * table-chunks.h - what table.c (the chains, the masks and the chunk map, kept
 * under the bucket locks) and table-range.c (what a range holds, asked
 * without a lock) share: the bits of an address and of its chunk's hash,
 * which table.c's header draws, and where the masks and the map live.
 * Not table-kernel.c's.
 */
#ifndef ODEBUG_TABLE_CHUNKS_H
#define ODEBUG_TABLE_CHUNKS_H

#include "table.h"

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
#define SHUFFLE_SHIFT	ODEBUG_KEY_SHIFT			/* tracker.h */
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
#define EIGHTH_SHIFT	ODEBUG_EIGHTH_SHIFT

_Static_assert(CHAINS == 64 && SHUFFLE_BITS == 7 && HEADS == 128 && CELL_SHIFT == 5,
	       "odebug_chain_head() in tracker.h agrees");
_Static_assert(CHAINS <= 64, "a bucket's chains fit in one 64-bit set");
_Static_assert(CELLS == 2 * CHAINS, "cells_to_slots() folds two cells into a slot");
_Static_assert(MASK_WORDS == 2, "cells_in() reads a class's cells as two words");
_Static_assert(CLASS_BITS == CHAIN_BITS, "the class fixes the slot shuffle (vacate())");
_Static_assert(SHUFFLE_SHIFT + SHUFFLE_BITS <= 64 - ODEBUG_HASH_BITS,
	       "the shuffle is below the bucket index");
_Static_assert(EIGHTH_SHIFT > CELL_SHIFT && CELLS / 8 == 16,
	       "an eighth is 16 cells: a quarter of a mask word");

/*
 * The chain heads are the bucket's own (tracker.h: beside its lock, read
 * by the lockless walk, whose odebug_chain_head() is chain_of() below, bit
 * for bit).  Per class and bucket: the occupied cells, 128 bits; class
 * first, so that the 64 buckets of a region, which share a class, have
 * their masks on 1 KiB of one page.
 */
extern ODEBUG_HIDDEN uint64_t (*odebug_occupied)[ODEBUG_HASH_SIZE][MASK_WORDS];
/* Per chunk below MAP_LIMIT: the eighths that may hold a tracker; NULL if unmapped. */
/* The chunks the map covers (tracker.h). */
/*
 * Per page of the chunk map (4096 chunks: 16 MiB of address space), a bit
 * set before any byte of that page is first marked, never cleared; and
 * per word of those bits (1 GiB), a bit in the same way.  The lockless
 * readers of a range look at both before the page: a read of a page
 * never written would map one, a page fault, and the reserved map spans
 * the whole address space (a munmap() of a program's reservation far from
 * every tracker).  A word of the first bits is read only where the second
 * says it was written: its 4 KiB cover 512 GiB, and the second's 16 KiB
 * the whole address space.
 */
#define MAP_PAGE_CHUNKS	((size_t)4096)
extern ODEBUG_HIDDEN uint64_t odebug_map_used[], odebug_map_used_words[];

static inline bool map_page_used(size_t c)
{
	size_t p = c / MAP_PAGE_CHUNKS, w = p / 64;

	return (odebug_load(&odebug_map_used_words[w / 64]) >> (w % 64) & 1) &&
	       (odebug_load(&odebug_map_used[w]) >> (p % 64) & 1);
}

/* Chunk @c's byte of the map @m, read only where its page was ever marked. */
static inline uint8_t map_byte(const uint8_t *m, size_t c)
{
	return map_page_used(c) ? __atomic_load_n(&m[c], __ATOMIC_RELAXED) : 0;
}

/* The same, @raw: the caller knows the page was marked. */
static inline uint8_t map_byte_raw(const uint8_t *m, size_t c, bool raw)
{
	return raw ? __atomic_load_n(&m[c], __ATOMIC_RELAXED) : map_byte(m, c);
}

static inline size_t bucket_index(uint64_t hash)
{
	return hash >> (64 - ODEBUG_HASH_BITS);
}

/*
 * The shuffle of a chunk's cells over the chains (hash bits below the
 * index, xored with the cell), and of its slots over the slot chains.
 */
static inline unsigned int key_of_hash(uint64_t hash)
{
	return (unsigned int)(hash >> SHUFFLE_SHIFT) & (HEADS - 1);
}

/* The chunk's class: the six bits below the bucket index, which pick its mask. */
static inline unsigned int class_of_hash(uint64_t hash)
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
static inline unsigned int slot_shuffle_of_class(unsigned int c)
{
	return c ^ c >> 2 ^ c >> 4;
}

static inline unsigned int slot_shuffle_of_hash(uint64_t hash)
{
	return slot_shuffle_of_class(class_of_hash(hash));
}

static inline unsigned int shuffle_of_hash(uint64_t hash)
{
	return slot_shuffle_of_hash(hash) << 1 | (key_of_hash(hash) & 1);
}

static inline unsigned int class_of(uintptr_t addr)
{
	return class_of_hash(odebug_chunk_hash(addr));
}

/*
 * The 32-byte cell of @addr in its chunk: what the occupancy masks record.
 * Half a slot, so that an object near the start of its heap block does not
 * share a cell with the end of the block before.
 */
static inline unsigned int cell_of(uintptr_t addr)
{
	return (unsigned int)(addr >> CELL_SHIFT) & LAST_CELL;
}

/* The 64-byte slot of @addr in its chunk: what picks the chain. */
static inline unsigned int slot_of(uintptr_t addr)
{
	return (unsigned int)(addr >> SLOT_SHIFT) & (CHAINS - 1);
}

static inline uint64_t *word_of(struct odebug_bucket *b, uintptr_t addr)
{
	return &odebug_occupied[class_of_hash(odebug_chunk_hash(addr))][b - odebug_buckets]
			[cell_of(addr) / 64];
}

/* The chains of slot chain @slot_chain: heads [2 * slot chain + half]. */
static inline unsigned int head_of(unsigned int slot_chain, unsigned int half)
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
static inline unsigned int chain_of(uintptr_t addr)
{
	return cell_of(addr) ^ shuffle_of_hash(odebug_chunk_hash(addr));
}

/* The 512-byte eighth of @addr in its chunk: its bit in the chunk map. */
static inline unsigned int eighth_of(uintptr_t addr)
{
	return (unsigned int)(addr >> EIGHTH_SHIFT) & 7;
}
#endif /* ODEBUG_TABLE_CHUNKS_H */
