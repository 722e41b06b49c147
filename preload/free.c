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

#include "internal.h"
#include "next.h"

/* A usable size beyond this is not from a heap block: skip the check. */
#define SANE_BLOCK_SIZE	((size_t)1 << 40)

/* The slow path: something is tracked; is any of it in this block? */
__attribute__((noinline)) static void check_block(void *p)
{
	size_t size;

	if (odebug_guard || !odebug_opt.check_free || !odebug_next_usable_size)
		return;
	size = odebug_next_usable_size(p);	/* errno: odebug_check_range() */
	if (size && size < SANE_BLOCK_SIZE)
		odebug_check_range((uintptr_t)p, (uintptr_t)p + size);
}

/* Set by free(NULL) while enabled: proves calls to free() reach us. */
ODEBUG_TLS int odebug_free_reached;

ODEBUG_EXPORT void free(void *p)
{
	/* Started or not: before the start nothing is out of the pool. */
	if (unlikely(odebug_load(&odebug_mode) >= ODEBUG_MODE_ON)) {
		if (!p)
			odebug_free_reached = 1;
		else if (odebug_tracking_any())
			check_block(p);
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

	if (odebug_guard || !odebug_opt.check_free || !odebug_next_usable_size ||
	    size > PTRDIFF_MAX)
		return odebug_next_realloc(p, size);
	if (!size) {
		check_block(p);
		return odebug_next_realloc(p, size);
	}
	old = odebug_next_usable_size(p);
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
