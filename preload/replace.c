/* SPDX-License-Identifier: MIT */
/*
 * replace.c - memory replaced in place, without an unmap: mmap(MAP_FIXED)
 * over a mapping, and madvise(MADV_DONTNEED, MADV_DONTNEED_LOCKED,
 * MADV_FREE, MADV_REMOVE), after which the pages read as zeros (or as the
 * file).  These are release paths: the objects there are gone, so they
 * are checked like munmap's (mmap.c), before the call, while the report
 * and the fixup can still read them, and only for calls the kernel
 * accepts.  Not releases: MAP_FIXED_NOREPLACE (fails rather than
 * replace), and posix_madvise(POSIX_MADV_DONTNEED), which glibc ignores.
 *
 * glibc's malloc and the loader map memory through internal calls that do
 * not come here; what does come (the program's and libraries' calls) pays
 * one flag test when it does not replace anything.  libodebug's own
 * mappings are raw system calls (lib/base/prim.c, mmap.c), never these.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core.h"
#include "next.h"

#ifndef MADV_FREE
#define MADV_FREE		8
#endif
#ifndef MADV_DONTNEED_LOCKED
#define MADV_DONTNEED_LOCKED	24
#endif
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE	0x100000
#endif
#ifndef MAP_SHARED_VALIDATE
#define MAP_SHARED_VALIDATE	0x03
#endif

/* Until the constructor finds the next definitions: the system calls. */
static void *raw_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

static int raw_madvise(void *addr, size_t len, int advice)
{
	return (int)syscall(SYS_madvise, addr, len, advice);
}

static void *(*next_mmap)(void *, size_t, int, int, int, off_t) = raw_mmap;
static void *(*next_mmap64)(void *, size_t, int, int, int, off_t) = raw_mmap;
static int (*next_madvise)(void *, size_t, int) = raw_madvise;

/*
 * Would the kernel replace [addr, addr + len) (do_mmap's checks before
 * it unmaps anything)?  MAP_FIXED without NOREPLACE, an aligned address
 * and offset, a length within the address space, a mapping type; for a
 * file, an open descriptor whose access mode allows the protection.  A
 * failure after these (a file system without mmap, a limit) happens once
 * the old mapping is gone, so it releases too.
 */
static bool map_fixed_ok(uintptr_t addr, size_t len, int prot, int flags, int fd, off_t off)
{
	int type = flags & MAP_SHARED_VALIDATE, mode;

	if ((off & (off_t)(odebug_page_size - 1)) || !odebug_range_ok(addr, len) ||
	    (type != MAP_PRIVATE && type != MAP_SHARED && type != MAP_SHARED_VALIDATE))
		return false;
	if (flags & MAP_ANONYMOUS)
		return true;
	mode = (int)syscall(SYS_fcntl, fd, F_GETFL);
	if (mode == -1 || (mode & O_ACCMODE) == O_WRONLY)
		return false;	/* EBADF, EACCES */
	return type == MAP_PRIVATE || !(prot & PROT_WRITE) || (mode & O_ACCMODE) == O_RDWR;
}

/* Out of line: the common mmap() stays a flag test and a jump. */
static __attribute__((noinline)) void map_fixed(void *addr, size_t len, int prot, int flags,
						 int fd, off_t off)
{
	int saved = errno;

	if (odebug_release_checking() &&
	    odebug_range_may_hold((uintptr_t)addr, (uintptr_t)addr + len) &&
	    map_fixed_ok((uintptr_t)addr, len, prot, flags, fd, off))
		odebug_check_pages((uintptr_t)addr, len);
	errno = saved;
}

/* Enabled and MAP_FIXED without NOREPLACE: two tests, no call. */
#define REPLACES(flags) (unlikely(odebug_load(&odebug_mode) == ODEBUG_MODE_ON) && \
			 unlikely(((flags) & (MAP_FIXED | MAP_FIXED_NOREPLACE)) == MAP_FIXED))

/*
 * Named by assembler labels: with _FILE_OFFSET_BITS=64, <sys/mman.h>
 * renames the C name mmap to mmap64.
 */
ODEBUG_EXPORT void *odebug_i_mmap(void *addr, size_t len, int prot, int flags, int fd,
				  off_t off) __asm__("mmap");
ODEBUG_EXPORT void *odebug_i_mmap64(void *addr, size_t len, int prot, int flags, int fd,
				    off_t off) __asm__("mmap64");

void *odebug_i_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (REPLACES(flags))
		map_fixed(addr, len, prot, flags, fd, off);
	return next_mmap(addr, len, prot, flags, fd, off);
}

/* The same function under its large-file name (off_t is 64 bits here). */
void *odebug_i_mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (REPLACES(flags))
		map_fixed(addr, len, prot, flags, fd, off);
	return next_mmap64(addr, len, prot, flags, fd, off);
}

/*
 * Which pages does @advice release?  MADV_DONTNEED and MADV_FREE discard
 * private pages (a shared mapping keeps its contents in the page cache or
 * shmem), MADV_REMOVE frees a shared mapping's backing store.  0: none.
 */
static int released_kind(int advice)
{
	switch (advice) {
	case MADV_DONTNEED:
	case MADV_DONTNEED_LOCKED:
	case MADV_FREE:
		return 'p';
	case MADV_REMOVE:
		return 's';
	default:
		return 0;
	}
}

/* Parse a hex number at *@s, moving past it. */
static uintptr_t hex(const char **s, const char *end)
{
	uintptr_t v = 0;

	for (; *s < end; (*s)++) {
		char c = **s;

		if (c >= '0' && c <= '9')
			v = v << 4 | (uintptr_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v << 4 | (uintptr_t)(c - 'a' + 10);
		else
			break;
	}
	return v;
}

/* One line of /proc/self/maps: check its part of [start, end) if its kind is @kind. */
static void check_line(const char *s, const char *end, uintptr_t start, uintptr_t stop,
		       int kind)
{
	uintptr_t lo = hex(&s, end), hi;

	if (s >= end || *s++ != '-')
		return;
	hi = hex(&s, end);
	if (end - s < 5 || s[4] != kind)	/* " rwxp" */
		return;
	if (lo < start)
		lo = start;
	if (hi > stop)
		hi = stop;
	if (lo < hi)
		odebug_check_range(lo, hi);
}

/*
 * Check the parts of [start, stop) that the advice releases, by their
 * mapping's kind in /proc/self/maps (raw system calls, a buffer on the
 * stack).  Unreadable maps: the whole range, as munmap would.
 */
static void check_advised(uintptr_t start, uintptr_t stop, int kind)
{
	char buf[2048];
	size_t have = 0;
	bool skip = false;	/* the rest of a line longer than the buffer */
	int fd = odebug_open_proc("maps");

	if (fd < 0) {
		odebug_check_range(start, stop);
		return;
	}
	for (;;) {
		ssize_t n = syscall(SYS_read, fd, buf + have, sizeof(buf) - have);
		char *line = buf, *nl;

		if (n <= 0)
			break;
		have += (size_t)n;
		while ((nl = memchr(line, '\n', (size_t)(buf + have - line)))) {
			if (!skip)
				check_line(line, nl, start, stop, kind);
			skip = false;
			line = nl + 1;
		}
		have = (size_t)(buf + have - line);
		memmove(buf, line, have);
		if (have == sizeof(buf)) {	/* a long path: its range was seen */
			if (!skip)
				check_line(buf, buf + have, start, stop, kind);
			skip = true;
			have = 0;
		}
	}
	syscall(SYS_close, fd);
}

static __attribute__((noinline)) void advised(void *addr, size_t len, int kind)
{
	uintptr_t start = (uintptr_t)addr, stop;
	int saved = errno;

	/* madvise's own EINVAL checks; a length of 0 does nothing. */
	if (odebug_release_checking() && odebug_range_ok(start, len)) {
		stop = odebug_page_up(start + len);
		if (odebug_range_may_hold(start, stop))
			check_advised(start, stop, kind);
	}
	errno = saved;
}

ODEBUG_EXPORT int madvise(void *addr, size_t len, int advice)
{
	int kind;

	if (unlikely(odebug_load(&odebug_mode) == ODEBUG_MODE_ON) &&
	    unlikely(kind = released_kind(advice)))
		advised(addr, len, kind);
	return next_madvise(addr, len, advice);
}

/* Found at start, enabled or not: later calls forward in one jump. */
__attribute__((constructor(101))) static void replace_resolve(void)
{
	void *fn;

	if ((fn = dlsym(RTLD_NEXT, "mmap")))
		*(void **)&next_mmap = fn;
	if ((fn = dlsym(RTLD_NEXT, "mmap64")))
		*(void **)&next_mmap64 = fn;
	if ((fn = dlsym(RTLD_NEXT, "madvise")))
		*(void **)&next_madvise = fn;
}
