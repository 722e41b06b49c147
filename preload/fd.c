/* SPDX-License-Identifier: MIT */
/*
 * fd.c - the interposers of descriptors' owners (lib/checks/fd/fd.h): the calls
 * that make a stream or a directory stream own its descriptor (fopen,
 * fdopen, popen, tmpfile, opendir, fdopendir), the ends of a stream's
 * and a directory's own (pclose, closedir; fclose and freopen are in
 * stdio.c, close in epoll.c), and the calls that close a descriptor
 * another may own (dup2, dup3, close_range, closefrom).  Disabled, one
 * load, one branch and a tail call; enabled, the real call, then the
 * owner noted, glibc's return value and errno unchanged.  The one
 * exception is the fixup: a close of a descriptor another owns, reported,
 * is not made (close_range, closefrom) or fails with EBUSY (dup2, dup3).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

#include "fd.h"
#include "interpose.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC	(1u << 2)
#endif

/* Disabled: one load, one branch, a tail call (the enabled path is out of line). */
#define OWNING odebug_load(&odebug_fd_on)
/* Any descriptor ever owned: the closing calls look only then. */
#define ANY_OWNED odebug_load(&odebug_fd_tags)

/* A stream @f (or NULL) made by @how now owns its descriptor. */
static __attribute__((noinline)) FILE *owned_stream(FILE *f, enum odebug_fd_how how)
{
	int saved = errno;

	if (f && f->_fileno > 2 && odebug_fd_ready())
		odebug_fd_own(f->_fileno, odebug_fd_make_tag(ODEBUG_FD_FILE, (uintptr_t)f), how);
	errno = saved;
	return f;
}

ODEBUG_INLINE FILE *fopen_(FILE *(*next)(const char *, const char *), const char *path,
			   const char *mode)
{
	if (likely(!OWNING))
		return next(path, mode);
	return owned_stream(next(path, mode), ODEBUG_FD_BY_FOPEN);
}
INTERPOSE(FILE *, fopen, only, ODEBUG_V_BASE, "@@" ODEBUG_V_BASE,
	  (const char *path, const char *mode), (path, mode), fopen_);
INTERPOSE(FILE *, fopen64, only, ODEBUG_V_BASE, "@@" ODEBUG_V_BASE,
	  (const char *path, const char *mode), (path, mode), fopen_);

/* fdopen: the descriptor's ownership moves to the stream (a failure leaves it as it was). */
ODEBUG_INLINE FILE *fdopen_(FILE *(*next)(int, const char *), int fd, const char *mode)
{
	if (likely(!OWNING))
		return next(fd, mode);
	return owned_stream(next(fd, mode), ODEBUG_FD_BY_FDOPEN);
}
INTERPOSE(FILE *, fdopen, only, ODEBUG_V_BASE, "@@" ODEBUG_V_BASE,
	  (int fd, const char *mode), (fd, mode), fdopen_);

ODEBUG_INLINE FILE *popen_(FILE *(*next)(const char *, const char *), const char *cmd,
			   const char *mode)
{
	if (likely(!OWNING))
		return next(cmd, mode);
	return owned_stream(next(cmd, mode), ODEBUG_FD_BY_POPEN);
}
INTERPOSE(FILE *, popen, only, ODEBUG_V_BASE, "@@" ODEBUG_V_BASE,
	  (const char *cmd, const char *mode), (cmd, mode), popen_);

ODEBUG_INLINE FILE *tmpfile_(FILE *(*next)(void))
{
	if (likely(!OWNING))
		return next();
	return owned_stream(next(), ODEBUG_FD_BY_TMPFILE);
}
INTERPOSE(FILE *, tmpfile, only, ODEBUG_V_BASE, "@@" ODEBUG_V_BASE, (void), (), tmpfile_);
INTERPOSE(FILE *, tmpfile64, only, ODEBUG_V_BASE, "@@" ODEBUG_V_BASE, (void), (), tmpfile_);

/* The stream's own close: its tag goes first (after it, the number may be another's). */
static __attribute__((noinline)) void stream_closing(FILE *f)
{
	int saved = errno;

	if (f && f->_fileno > 2)
		odebug_fd_disown(f->_fileno, odebug_fd_make_tag(ODEBUG_FD_FILE, (uintptr_t)f),
				 "pclose");
	errno = saved;
}

ODEBUG_INLINE int pclose_(int (*next)(FILE *), FILE *f)
{
	if (unlikely(ANY_OWNED))
		stream_closing(f);
	return next(f);
}
INTERPOSE(int, pclose, only, ODEBUG_V_BASE, "@@" ODEBUG_V_BASE, (FILE *f), (f), pclose_);

/* A directory stream @d (or NULL) made by @how now owns its descriptor. */
static __attribute__((noinline)) DIR *owned_dir(DIR *d, enum odebug_fd_how how)
{
	int saved = errno, fd;

	if (d && (fd = dirfd(d)) > 2 && odebug_fd_ready())
		odebug_fd_own(fd, odebug_fd_make_tag(ODEBUG_FD_DIR, (uintptr_t)d), how);
	errno = saved;
	return d;
}

ODEBUG_INLINE DIR *opendir_(DIR *(*next)(const char *), const char *path)
{
	if (likely(!OWNING))
		return next(path);
	return owned_dir(next(path), ODEBUG_FD_BY_OPENDIR);
}
INTERPOSE(DIR *, opendir, only, ODEBUG_V_BASE, "@@" ODEBUG_V_BASE, (const char *path), (path),
	  opendir_);

ODEBUG_INLINE DIR *fdopendir_(DIR *(*next)(int), int fd)
{
	if (likely(!OWNING))
		return next(fd);
	return owned_dir(next(fd), ODEBUG_FD_BY_FDOPENDIR);
}
#ifdef __x86_64__
#define ODEBUG_V_FDOPENDIR "GLIBC_2.4"
#else
#define ODEBUG_V_FDOPENDIR ODEBUG_V_BASE
#endif
INTERPOSE(DIR *, fdopendir, only, ODEBUG_V_FDOPENDIR, "@@" ODEBUG_V_FDOPENDIR, (int fd), (fd),
	  fdopendir_);

static __attribute__((noinline)) void dir_closing(DIR *d)
{
	int saved = errno, fd = d ? dirfd(d) : -1;

	if (fd > 2)
		odebug_fd_disown(fd, odebug_fd_make_tag(ODEBUG_FD_DIR, (uintptr_t)d), "closedir");
	errno = saved;
}

ODEBUG_INLINE int closedir_(int (*next)(DIR *), DIR *d)
{
	if (unlikely(ANY_OWNED))
		dir_closing(d);
	return next(d);
}
INTERPOSE(int, closedir, only, ODEBUG_V_BASE, "@@" ODEBUG_V_BASE, (DIR *d), (d), closedir_);

/*
 * dup2 and dup3 onto a descriptor another owns close it: reported, and
 * not made (EBUSY, which Linux's dup2 already returns when it races an
 * open), so that nothing the program writes there lands in the owner's file.
 */
static __attribute__((noinline)) bool dup_onto_owned(int old, int fd, const char *op)
{
	int saved = errno;
	bool kept = old != fd && odebug_fd_close_owned(fd, op);

	errno = kept ? EBUSY : saved;
	return kept;
}

ODEBUG_INLINE int dup2_(int (*next)(int, int), int old, int fd)
{
	if (unlikely(odebug_fd_owned(fd)) && dup_onto_owned(old, fd, "dup2"))
		return -1;
	return next(old, fd);
}
INTERPOSE(int, dup2, only, ODEBUG_V_BASE, "@@" ODEBUG_V_BASE, (int old, int fd), (old, fd), dup2_);

ODEBUG_INLINE int dup3_(int (*next)(int, int, int), int old, int fd, int flags)
{
	if (unlikely(odebug_fd_owned(fd)) && dup_onto_owned(old, fd, "dup3"))
		return -1;
	return next(old, fd, flags);
}
#ifdef __x86_64__
#define ODEBUG_V_DUP3 "GLIBC_2.9"
#else
#define ODEBUG_V_DUP3 ODEBUG_V_BASE
#endif
INTERPOSE(int, dup3, only, ODEBUG_V_DUP3, "@@" ODEBUG_V_DUP3, (int old, int fd, int flags),
	  (old, fd, flags), dup3_);

#ifdef ODEBUG_HAVE_CLOSE_RANGE
/*
 * close_range and closefrom: the owned descriptors in the range are
 * judged one by one; those kept are left out and the rest closed, in the
 * pieces between them.  A fork child's are never judged (lib/checks/fd/fd.c).
 * Returns 0 with *@from the first descriptor left to close, or the
 * failure of a piece's close.
 */
static int close_pieces(int (*range)(unsigned int, unsigned int, int), unsigned int first,
			unsigned int last, unsigned int *from, const char *op)
{
	unsigned int cur = first, scan = first;
	long o;
	int r, saved;
	bool kept;

	while ((o = odebug_fd_next_owned(scan, last)) >= 0) {
		scan = (unsigned int)o + 1;
		saved = errno;
		kept = odebug_fd_close_owned((int)o, op);
		errno = saved;
		if (!kept)
			continue;	/* it closes with its piece */
		if ((unsigned int)o > cur && (r = range(cur, (unsigned int)o - 1, 0)))
			return r;
		cur = (unsigned int)o + 1;
	}
	*from = cur;
	return 0;
}

static __attribute__((noinline)) int
close_range_on(int (*next)(unsigned int, unsigned int, int), unsigned int first,
	       unsigned int last, int flags)
{
	unsigned int from;
	int r = close_pieces(next, first, last, &from, "close_range");

	if (r || from > last)
		return r;
	return next(from, last, flags);
}

ODEBUG_INLINE int close_range_(int (*next)(unsigned int, unsigned int, int), unsigned int first,
			       unsigned int last, int flags)
{
	/* Setting close-on-exec closes nothing. */
	if (likely(!ANY_OWNED) || first > last || (flags & CLOSE_RANGE_CLOEXEC))
		return next(first, last, flags);
	return close_range_on(next, first, last, flags);
}
INTERPOSE(int, close_range, only, "GLIBC_2.34", "@@GLIBC_2.34",
	  (unsigned int first, unsigned int last, int flags), (first, last, flags), close_range_);

static __attribute__((noinline)) void closefrom_on(void (*next)(int), int low)
{
	unsigned int from;

	if (close_pieces(next_close_range_only, (unsigned int)low, UINT_MAX, &from, "closefrom"))
		from = (unsigned int)low;	/* a piece failed: glibc's own way for the rest */
	next((int)from);
}

ODEBUG_INLINE void closefrom_(void (*next)(int), int low)
{
	if (likely(!ANY_OWNED) || low < 0) {
		next(low);
		return;
	}
	closefrom_on(next, low);
}
INTERPOSE(void, closefrom, only, "GLIBC_2.34", "@@GLIBC_2.34", (int low), (low), closefrom_);
#endif
