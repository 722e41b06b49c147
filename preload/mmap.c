/* SPDX-License-Identifier: MIT */
/*
 * mmap.c - the mapping release paths: munmap and mremap (replace.c: the
 * paths that replace memory in place, mmap(MAP_FIXED) and madvise).
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
#include <sys/syscall.h>
#include <unistd.h>

#include "core.h"
#include "next.h"

/* Is a release to be checked?  (replace.c's interposers ask too.) */
bool odebug_release_checking(void)
{
	return unlikely(odebug_load(&odebug_mode) == ODEBUG_MODE_ON) &&
	       !odebug_tls.guard && odebug_opt.check_free &&
	       odebug_tracking_any();
}

uintptr_t odebug_page_up(uintptr_t v)
{
	uintptr_t up = (v + odebug_page_size - 1) & ~(uintptr_t)(odebug_page_size - 1);

	return up < v ? UINTPTR_MAX : up;	/* clamp at the top */
}

/* Check [start, start + len) rounded to whole pages, errno kept. */
void odebug_check_pages(uintptr_t start, size_t len)
{
	int saved = errno;
	uintptr_t end = start + len < start ? UINTPTR_MAX : odebug_page_up(start + len);

	if (end > start)
		odebug_check_range(start, end);
	errno = saved;
}

static bool aligned(uintptr_t addr)
{
	return (addr & (odebug_page_size - 1)) == 0;
}

/*
 * The end of the user address space, as munmap() and mremap() check it
 * (TASK_SIZE).  On x86-64 it is 2^47 less a page, or 2^56 less a page with
 * 5-level paging, found once by asking for a page at 2^47 without
 * replacing anything; elsewhere no bound is known and none is applied.
 */
uintptr_t odebug_user_top(void)
{
	static uintptr_t top;
#if defined(__x86_64__)
	uintptr_t t = odebug_load(&top);
	void *probe;

	if (likely(t))
		return t;
	/* Raw: mmap() is our own interposer (replace.c). */
	probe = (void *)syscall(SYS_mmap, (uintptr_t)1 << 47, odebug_page_size, PROT_NONE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	t = ((uintptr_t)1 << 47) - odebug_page_size;
	if (probe != MAP_FAILED) {
		if ((uintptr_t)probe == (uintptr_t)1 << 47)
			t = ((uintptr_t)1 << 56) - odebug_page_size;
		odebug_next_munmap(probe, odebug_page_size);
	}
	odebug_store(&top, t);
	return t;
#else
	return top ? top : UINTPTR_MAX;
#endif
}

/*
 * Would the kernel accept [start, start + len) for release?  The checks it
 * makes before touching anything (EINVAL): page-aligned start, a length
 * that is not 0 once rounded up, and an end within the user address space.
 * A call it refuses releases nothing, so nothing is checked.
 */
bool odebug_range_ok(uintptr_t start, size_t len)
{
	uintptr_t rounded = odebug_page_up(len);

	return aligned(start) && len && rounded != UINTPTR_MAX &&
	       rounded <= odebug_user_top() && start <= odebug_user_top() - rounded;
}

ODEBUG_EXPORT int munmap(void *addr, size_t len)
{
	if (odebug_release_checking() && odebug_range_ok((uintptr_t)addr, len))
		odebug_check_pages((uintptr_t)addr, len);
	return odebug_next_munmap(addr, len);
}

/*
 * mremap's own EINVAL checks (mm/mremap.c), made before it touches
 * anything: known flags, MREMAP_FIXED and MREMAP_DONTUNMAP only with
 * MREMAP_MAYMOVE, DONTUNMAP without a change of size, an aligned old
 * address, a new size that is not 0 once rounded; with FIXED, an aligned
 * destination within the address space that does not overlap the source.
 */
static bool mremap_ok(uintptr_t old, size_t old_size, size_t new_size, int flags,
		      uintptr_t dest)
{
	uintptr_t old_len = odebug_page_up(old_size), new_len = odebug_page_up(new_size);

	if (flags & ~(MREMAP_FIXED | MREMAP_MAYMOVE | MREMAP_DONTUNMAP))
		return false;
	if ((flags & (MREMAP_FIXED | MREMAP_DONTUNMAP)) && !(flags & MREMAP_MAYMOVE))
		return false;
	if ((flags & MREMAP_DONTUNMAP) && old_size != new_size)
		return false;
	if (!aligned(old) || !new_size || new_len == UINTPTR_MAX)
		return false;
	if (old_len == UINTPTR_MAX || old > UINTPTR_MAX - old_len)
		return false;	/* not a mapping: the kernel finds none (EFAULT) */
	if (flags & MREMAP_FIXED)
		return aligned(dest) && new_len <= odebug_user_top() &&
		       dest <= odebug_user_top() - new_len &&
		       !(old + old_len > dest && dest + new_len > old);
	return true;
}

/*
 * Shrinking releases the tail.  A move makes every object in the old range
 * stale, but MREMAP_MAYMOVE may well grow in place: when the old range
 * holds trackers, try in place first (the kernel would too) and check the
 * whole range only before a real move.  MREMAP_FIXED also releases what
 * was mapped at the destination.  A move can still fail after its check
 * (ENOMEM from the kernel's limits): that is the one release checked that
 * may not happen.
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
	if (!odebug_release_checking() ||
	    !mremap_ok(start, old_size, new_size, flags, (uintptr_t)new_addr))
		return odebug_next_mremap(old, old_size, new_size, flags, new_addr);

	old_len = (size_t)(odebug_page_up(start + old_size) - start);
	new_len = (size_t)(odebug_page_up(start + new_size) - start);
	if (flags & MREMAP_FIXED)
		odebug_check_pages((uintptr_t)new_addr, new_size);
	if (flags & (MREMAP_FIXED | MREMAP_DONTUNMAP)) {
		if (old_size)
			odebug_check_pages(start, old_size);
	} else if (new_len < old_len) {
		odebug_check_pages(start + new_len, old_len - new_len);
	} else if ((flags & MREMAP_MAYMOVE) && old_size &&
		   odebug_range_tracked(start, start + old_len)) {
		int saved = errno;

		res = odebug_next_mremap(old, old_size, new_size,
					 flags & ~MREMAP_MAYMOVE, NULL);
		if (res != MAP_FAILED)
			return res;
		errno = saved;
		odebug_check_pages(start, old_size);
	}
	return odebug_next_mremap(old, old_size, new_size, flags, new_addr);
}
