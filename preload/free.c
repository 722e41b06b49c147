/* SPDX-License-Identifier: MIT */
/*
 * free.c - the heap's release paths: free, realloc, reallocarray.
 *
 * Each checks the block it releases, [p, p + malloc_usable_size(p)), before
 * the memory goes back to the allocator: the report then names the culprit
 * and the fixup can still read the object.  Disabled, free() is one branch
 * and a jump to the next free.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dynsym.h"
#include "core.h"
#include "next.h"

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif
#ifndef RUNNING_ON_VALGRIND
#define RUNNING_ON_VALGRIND 0
#endif

/* A usable size beyond this is not from a heap block: skip the check. */
#define SANE_BLOCK_SIZE	((size_t)1 << 40)

/*
 * glibc's chunk layout (malloc/malloc.c): the size word before the block,
 * its low bits flags, the previous size before it.
 */
#define SIZE_SZ		sizeof(size_t)
#define MALLOC_ALIGN	(2 * SIZE_SZ < __alignof__(long double) ? \
			 __alignof__(long double) : 2 * SIZE_SZ)
#define MINSIZE		(4 * SIZE_SZ)
#define IS_MMAPPED	((size_t)2)
#define SIZE_BITS	((size_t)7)

/* The next free() is glibc's, with the layout above (odebug_free_probe()). */
static bool ptmalloc;
/*
 * The lowest block free() reads glibc's header of inline: 1 (not NULL)
 * with glibc's allocator, else none, so that one compare tests both.
 */
ODEBUG_HOT static uintptr_t inline_lo = UINTPTR_MAX;

/*
 * The usable size of glibc's block at @mem, 0 if glibc's free() would
 * refuse the pointer.  malloc_usable_size() trusts the pointer: for
 * free(p + 1) or a fake chunk it reads the "next chunk" wherever the
 * garbage size points and faults inside libodebug, before glibc's free()
 * can diagnose it.  This reads only the two words glibc's free() reads
 * first, applies the checks it makes before reading further (alignment,
 * size against the address space, MINSIZE; for an mmapped chunk, its
 * page alignment), and reads nothing else: a pointer that fails goes to
 * glibc's free() unchecked, which prints its own message.
 */
static size_t ptmalloc_size(void *mem)
{
	uintptr_t m = (uintptr_t)mem, page_off = m & (odebug_page_size - 1);
	const size_t *hdr = (const size_t *)mem - 2;	/* prev_size, size */
	size_t size;

	if (m & (MALLOC_ALIGN - 1))
		return 0;
	size = hdr[1] & ~SIZE_BITS;
	if (size < MINSIZE || (size & (MALLOC_ALIGN - 1)) ||
	    m - 2 * SIZE_SZ > (uintptr_t)-size)
		return 0;
	if (hdr[1] & IS_MMAPPED) {
		uintptr_t block = m - 2 * SIZE_SZ - hdr[0];

		if (((block | (hdr[0] + size)) & (odebug_page_size - 1)) ||
		    (page_off & (page_off - 1)))
			return 0;
		return size - 2 * SIZE_SZ;
	}
	return size - SIZE_SZ;
}

/* How many bytes free() releases at @p; 0 for a pointer the allocator refuses. */
static size_t block_size(void *p)
{
	if (ptmalloc)
		return ptmalloc_size(p);
	/* Another allocator: its own answer, for any pointer a free() accepts. */
	if ((uintptr_t)p & (__alignof__(void *) - 1))
		return 0;
	return odebug_next_usable_size(p);
}

/*
 * Under valgrind, has the tool replaced the allocator (memcheck, helgrind,
 * massif...)?  Its blocks have no glibc header, and it would report the
 * read; its malloc_usable_size() is the size asked for, where glibc's
 * smallest chunk gives 24 bytes.  Tools that leave glibc's allocator alone
 * (callgrind, cachegrind) then count the path a run outside valgrind takes.
 */
static bool allocator_replaced(void *(*libc_malloc)(size_t))
{
	void *p;
	size_t n;

	if (!RUNNING_ON_VALGRIND)
		return false;
	p = libc_malloc(1);
	if (!p)
		return true;
	n = odebug_next_usable_size(p);
	odebug_next_free(p);
	return n < MINSIZE - SIZE_SZ;
}

/*
 * The probe's mmapped block.  Freeing an mmapped block raises glibc's
 * dynamic mmap threshold to its size, and the program's blocks below it
 * then go on the heap, which keeps them (python3 with 4 threads: 0.6 MB
 * more RSS): a block above the largest threshold glibc adopts (32 MiB on
 * LP64) leaves it alone, and only its header page is touched.  Unless
 * the program asked malloc to fill its blocks (MALLOC_PERTURB_, or the
 * perturb tunable), which would write all 33 MiB: then a small one.
 */
static size_t mmapped_probe_size(void)
{
	const char *tunables = odebug_getenv("GLIBC_TUNABLES");

	if (odebug_getenv("MALLOC_PERTURB_") || (tunables && strstr(tunables, "perturb")))
		return 300000;
	return (size_t)33 << 20;
}

/*
 * At start, with the next allocator resolved: is it glibc's, and does our
 * reading of its chunks agree with malloc_usable_size() on blocks of every
 * kind (small, large, mmapped)?  Not under a valgrind tool that replaced
 * the allocator (allocator_replaced()).
 */
void odebug_free_probe(void)
{
	size_t sizes[] = { 1, 24, 100, 1000, 5000, 70000, mmapped_probe_size() };
	void *(*libc_malloc)(size_t) = NULL;
	bool same = false;
	size_t i;

	if (odebug_next_usable_size) {
		*(void **)&libc_malloc = odebug_object_definition("libc.so.6", "malloc");
		/* Blocks made by the program's malloc, freed by our next free(). */
		same = libc_malloc && *(void **)&libc_malloc == odebug_program_definition("malloc") &&
		       odebug_object_definition("libc.so.6", "free") == *(void **)&odebug_next_free &&
		       odebug_object_definition("libc.so.6", "malloc_usable_size") ==
		       *(void **)&odebug_next_usable_size;
	}
	if (same && allocator_replaced(libc_malloc))
		same = false;
	for (i = 0; same && i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		void *p = libc_malloc(sizes[i]);

		if (!p)
			return;
		same = ptmalloc_size(p) == odebug_next_usable_size(p);
		odebug_next_free(p);
	}
	ptmalloc = same;
	inline_lo = same ? 1 : UINTPTR_MAX;
	if (!same && odebug_opt.verbosity)
		odebug_message("free(): not glibc's allocator as libodebug reads it: each block "
			       "is sized by malloc_usable_size(), a call per free()", (char *)NULL);
}

/*
 * The slow path: something is tracked; is any of it in this block?  @sp:
 * the stack pointer of free()'s caller, for the returned-frames check.
 */
__attribute__((noinline)) static void check_block(void *p, uintptr_t sp)
{
	size_t size;

	if (odebug_tls.guard || !odebug_opt.check_free || !odebug_next_usable_size)
		return;
	if (unlikely(sp > odebug_tls.onstack_low))
		odebug_stack_check_returned(sp);
	size = block_size(p);	/* errno: odebug_check_range() */
	if (size && size < SANE_BLOCK_SIZE)
		odebug_check_range((uintptr_t)p, (uintptr_t)p + size);
}

/*
 * Something may be tracked here: the block starts below the span's end
 * (tracker.h).  Most blocks are still far from every tracker: below the
 * span's start, or odebug_range_may_hold() proves it with a load or two of
 * the chunk map (table.c), given an upper bound of the block's end:
 * glibc's chunk size word, or the usable size.  The size word is read
 * before any validation: a pointer glibc's free() would refuse either gets
 * "nothing here" and glibc's own message, or goes through check_block(),
 * which validates it as before.  The guard and the check_free option only
 * ever turn a check off, so they are tested after a "maybe", never before
 * a "no".  The returned-frames check comes first: it is about the
 * caller's stack.
 */
static inline __attribute__((always_inline)) void free_tracking(void *p, uintptr_t sp)
{
	uintptr_t m = (uintptr_t)p;
	size_t size;

	if (unlikely(sp > odebug_tls.onstack_low))
		goto check;
	if (ptmalloc) {
		/* memcpy: p may be misaligned (free(p + 1)), as glibc's own read. */
		memcpy(&size, (const char *)p - sizeof(size), sizeof(size));
		size &= ~SIZE_BITS;	/* >= the usable size */
		if (size < SANE_BLOCK_SIZE && (odebug_span_above(m + size + !size) ||
					       !odebug_map_may_hold(m, m + size + !size)))
			goto done;
		goto check;	/* validated there */
	}
	if ((m & (__alignof__(void *) - 1)) || !odebug_next_usable_size)
		goto check;
	size = odebug_next_usable_size(p);	/* exact: no need to ask again */
	if (size && size < SANE_BLOCK_SIZE && odebug_range_may_hold(m, m + size) &&
	    !odebug_tls.guard && odebug_opt.check_free)
		odebug_check_range_slow(m, m + size);	/* errno: kept there */
done:
	odebug_next_free(p);
	return;
check:
	check_block(p, sp);
	odebug_next_free(p);
}

/* Set by free(NULL) while enabled: proves calls to free() reach us. */
ODEBUG_TLS int odebug_free_reached;

/* free() enabled, the block below the span's end (see free()). */
__attribute__((noinline)) static void free_enabled(void *p, uintptr_t sp)
{
	if (!p)
		odebug_free_reached = 1;
	else
		return free_tracking(p, sp);
	odebug_next_free(p);
}

/* free() enabled, the returned-frames mark below the caller: the frames, then the block. */
__attribute__((noinline)) static void free_returned(void *p, uintptr_t sp)
{
	if (!p)
		return free_enabled(p, sp);
	check_block(p, sp);
	odebug_next_free(p);
}

/*
 * glibc's block of @size bytes at @p, below the span's end, within one
 * chunk the map marks: its cells' occupancy answers, without the work
 * free_enabled() would do again.  A "maybe" goes through check_block(),
 * which validates the pointer.
 */
__attribute__((noinline)) static void free_marked(void *p, size_t size, uintptr_t sp)
{
	uintptr_t m = (uintptr_t)p;

	if (odebug_chunk_may_hold(m, m + size))
		check_block(p, sp);
	odebug_next_free(p);
}

/*
 * Enabled, a block at or above the span's end holds no tracked object:
 * one compare, after the returned-frames check's one (which a tracked
 * on-stack object of this thread makes), and free() has no frame of its
 * own.  Below it, glibc's size word and the chunk map answer for a block
 * within one unmarked chunk a few loads later, still without a frame;
 * within one marked chunk, free_marked() asks its masks; anything else
 * (another allocator, NULL, a larger block, a size glibc would refuse)
 * goes to free_enabled().  The span's end is at least 1, so NULL goes on
 * to count as a proof that free() reaches us.  Nothing tracked, the span
 * is empty.
 */
ODEBUG_EXPORT void free(void *p)
{
	/* Started or not: before the start nothing is out of the pool. */
	if (unlikely(odebug_load_folded(&odebug_mode) >= ODEBUG_MODE_ON)) {
		uintptr_t sp = odebug_caller_sp(), m = (uintptr_t)p;
		size_t size;

		if (unlikely(sp > odebug_tls.onstack_low))
			return free_returned(p, sp);
		if (unlikely(!odebug_span_below(m))) {
			if (m < odebug_load_folded(&inline_lo))	/* NULL, or not glibc's */
				return free_enabled(p, sp);
			/* memcpy: p may be misaligned (free(p + 1)), as glibc's own read. */
			memcpy(&size, (const char *)p - sizeof(size), sizeof(size));
			/*
			 * Its flag bits masked: p + size is then the next
			 * block's start, so the range looked at holds this
			 * block and never the neighbour's first bytes (with
			 * the bits in, an object tracked at the start of the
			 * next block would make every free here a "maybe").  A size
			 * glibc would refuse (0, or past any block) ends in
			 * another chunk, or wraps: no eighth, glibc's own
			 * free() refuses it; or a marked one, checked here.
			 */
			size &= ~SIZE_BITS;
			switch (odebug_chunk_look(m, m + size)) {
			case 0:
				break;
			case 1:
				if (size - 1 < SANE_BLOCK_SIZE - 1)
					return free_marked(p, size, sp);
				/* fall through */
			default:
				return free_enabled(p, sp);
			}
		}
	}
	odebug_next_free(p);
}

/*
 * A realloc that fails releases nothing: p is still the program's, with
 * its objects.  C ends the old object's lifetime even when realloc keeps
 * the address, and checking afterwards would race with another thread
 * reusing the block, so a block that holds a tracker is not handed to the
 * allocator's realloc at all: the new block is allocated first, and only
 * once that succeeded is the old one checked (its objects still readable
 * by the fixups), copied and freed.  A block without trackers, and a size
 * the allocator refuses before looking at p (over PTRDIFF_MAX), go straight
 * through.  realloc(p, 0) frees p (glibc): a checked free.
 */
__attribute__((noinline)) static void *checked_realloc(void *p, size_t size)
{
	size_t old;
	void *q;

	if (odebug_tls.guard || !odebug_opt.check_free || !odebug_next_usable_size ||
	    size > PTRDIFF_MAX)
		return odebug_next_realloc(p, size);
	if (!size) {
		check_block(p, odebug_caller_sp());
		return odebug_next_realloc(p, size);
	}
	old = block_size(p);
	if (!old || old >= SANE_BLOCK_SIZE ||
	    !odebug_range_may_hold((uintptr_t)p, (uintptr_t)p + old) ||
	    !odebug_range_tracked((uintptr_t)p, (uintptr_t)p + old))
		return odebug_next_realloc(p, size);
	q = malloc(size);	/* the allocator's own: ours is never interposed */
	if (!q)
		return NULL;	/* errno is the allocator's ENOMEM */
	odebug_check_range((uintptr_t)p, (uintptr_t)p + old);
	memcpy(q, p, old < size ? old : size);
	odebug_next_free(p);
	return q;
}

ODEBUG_EXPORT void *realloc(void *p, size_t size)
{
	if (unlikely(odebug_load(&odebug_mode) == ODEBUG_MODE_ON) && p &&
	    odebug_tracking_any())
		return checked_realloc(p, size);
	return odebug_next_realloc(p, size);
}

/*
 * glibc's reallocarray calls realloc through the PLT, which is ours: to
 * check each block once, do the overflow check here and go through our
 * realloc only.
 */
ODEBUG_EXPORT void *reallocarray(void *p, size_t nmemb, size_t size)
{
	size_t bytes;

	if (__builtin_mul_overflow(nmemb, size, &bytes)) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(p, bytes);
}
