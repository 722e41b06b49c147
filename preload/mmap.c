/* SPDX-License-Identifier: MIT */
/*
 * mmap.c - the mapping release paths: munmap and mremap.
 *
 * Only the program's own calls (and libraries calling through the PLT) come
 * here; glibc's internal unmaps (large malloc blocks, thread stacks, dlclose)
 * do not, which is why free() checks the block and stack.c watches threads.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/mman.h>

#include "internal.h"
#include "next.h"

static bool checking(void)
{
	return unlikely(odebug_load(&odebug_mode) == ODEBUG_MODE_ON) &&
	       !odebug_guard && odebug_opt.check_free &&
	       odebug_tracking_any();
}

static uintptr_t page_up(uintptr_t v)
{
	uintptr_t up = (v + odebug_page_size - 1) & ~(uintptr_t)(odebug_page_size - 1);

	return up < v ? UINTPTR_MAX : up;	/* clamp at the top */
}

/* Check [start, start + len) rounded to whole pages, errno kept. */
static void check_pages(uintptr_t start, size_t len)
{
	int saved = errno;
	uintptr_t end = start + len < start ? UINTPTR_MAX : page_up(start + len);

	if (end > start)
		odebug_check_range(start, end);
	errno = saved;
}

static bool aligned(const void *addr)
{
	return ((uintptr_t)addr & (odebug_page_size - 1)) == 0;
}

ODEBUG_EXPORT int munmap(void *addr, size_t len)
{
	/* A misaligned address fails with EINVAL and releases nothing. */
	if (checking() && len && aligned(addr))
		check_pages((uintptr_t)addr, len);
	return odebug_next_munmap(addr, len);
}

/*
 * Shrinking releases the tail.  A move makes every object in the old range
 * stale, but MREMAP_MAYMOVE may well grow in place: when the old range
 * holds trackers, try in place first (the kernel would too) and check the
 * whole range only before a real move.
 */
ODEBUG_EXPORT void *mremap(void *old, size_t old_size, size_t new_size,
			   int flags, ...)
{
	void *new_addr = NULL, *res;
	uintptr_t start = (uintptr_t)old;
	size_t old_len, new_len;
	va_list ap;

	if (flags & MREMAP_FIXED) {
		va_start(ap, flags);
		new_addr = va_arg(ap, void *);
		va_end(ap);
	}
	if (!checking() || !aligned(old))
		return odebug_next_mremap(old, old_size, new_size, flags, new_addr);

	old_len = (size_t)(page_up(start + old_size) - start);
	new_len = (size_t)(page_up(start + new_size) - start);
	if (flags & (MREMAP_FIXED | MREMAP_DONTUNMAP)) {
		check_pages(start, old_size);
	} else if (new_len < old_len) {
		check_pages(start + new_len, old_len - new_len);
	} else if ((flags & MREMAP_MAYMOVE) && old_size &&
		   odebug_range_tracked(start, start + old_len)) {
		int saved = errno;

		res = odebug_next_mremap(old, old_size, new_size,
					 flags & ~MREMAP_MAYMOVE, NULL);
		if (res != MAP_FAILED)
			return res;
		errno = saved;
		check_pages(start, old_size);
	}
	return odebug_next_mremap(old, old_size, new_size, flags, new_addr);
}
