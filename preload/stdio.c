/* SPDX-License-Identifier: MIT */
/*
 * stdio.c - the setvbuf, setbuffer, setbuf, fclose, freopen and
 * fcloseall interposers: a stream holds the buffer the program gave it until it is
 * closed, reopened or given another, so memory freed while it is the
 * buffer of an open stream is "free active" (lib/checks/held/held-stdio.c).
 * Disabled, one branch and a tail call; enabled, the real call first,
 * then one event of lib/checks/held/held-stdio.c; glibc's return value and errno
 * unchanged, and a failed call holds nothing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>

#include "fd.h"
#include "held-ext.h"
#include "interpose.h"

/* Disabled: one load, one branch, a tail call (the enabled path is out of line). */
#define CHECKING odebug_load(&odebug_held_on)

/* Any stream buffer held?  fclose and freopen look only then. */
#define ANY_HELD odebug_load(&odebug_hold_count[ODEBUG_HELD_STDIO])

/* After a buffering call that succeeded: a new hold starts libodebug, an end does not. */
static void buffered(FILE *f, void *buf, int mode, size_t size, int how)
{
	int saved;

	if (buf && mode != _IONBF && odebug_held_pointer((uintptr_t)buf)) {
		if (!odebug_held_active())
			return;
	} else if (!ANY_HELD || !odebug_held_live()) {
		return;
	}
	saved = errno;
	odebug_held_stdio_after(f, buf, size, how);
	errno = saved;
}

static __attribute__((noinline)) int
setvbuf_on(int (*next)(FILE *, char *, int, size_t), FILE *f, char *buf, int mode, size_t size)
{
	int r = next(f, buf, mode, size);

	if (r == 0)
		buffered(f, buf, mode, size, 0);
	return r;
}

ODEBUG_INLINE int setvbuf_(int (*next)(FILE *, char *, int, size_t), FILE *f, char *buf,
			   int mode, size_t size)
{
	if (likely(!CHECKING))
		return next(f, buf, mode, size);
	return setvbuf_on(next, f, buf, mode, size);
}
INTERPOSE(int, setvbuf, only, ODEBUG_V_BASE, "@@" ODEBUG_V_BASE,
	  (FILE *f, char *buf, int mode, size_t size), (f, buf, mode, size), setvbuf_);

/* setbuffer and setbuf return nothing: glibc's setvbuf with _IOFBF, or _IONBF for NULL. */
static __attribute__((noinline)) void
setbuffer_on(void (*next)(FILE *, char *, size_t), FILE *f, char *buf, size_t size)
{
	next(f, buf, size);
	buffered(f, buf, buf ? _IOFBF : _IONBF, size, 1);
}

ODEBUG_INLINE void setbuffer_(void (*next)(FILE *, char *, size_t), FILE *f, char *buf,
			      size_t size)
{
	if (likely(!CHECKING)) {
		next(f, buf, size);
		return;
	}
	setbuffer_on(next, f, buf, size);
}
INTERPOSE(void, setbuffer, only, ODEBUG_V_BASE, "@@" ODEBUG_V_BASE,
	  (FILE *f, char *buf, size_t size), (f, buf, size), setbuffer_);

static __attribute__((noinline)) void setbuf_on(void (*next)(FILE *, char *), FILE *f, char *buf)
{
	next(f, buf);
	buffered(f, buf, buf ? _IOFBF : _IONBF, BUFSIZ, 2);
}

ODEBUG_INLINE void setbuf_(void (*next)(FILE *, char *), FILE *f, char *buf)
{
	if (likely(!CHECKING)) {
		next(f, buf);
		return;
	}
	setbuf_on(next, f, buf);
}
INTERPOSE(void, setbuf, only, ODEBUG_V_BASE, "@@" ODEBUG_V_BASE, (FILE *f, char *buf), (f, buf),
	  setbuf_);

/*
 * fclose and freopen end the stream's hold whatever their result (glibc
 * closes the stream even when the flush fails, and freopen's failure
 * leaves it closed).  Nothing of the FILE is read after the call.
 */
static __attribute__((noinline)) void closed(FILE *f)
{
	int saved = errno;

	odebug_held_stdio_closed(f);
	errno = saved;
}

static __attribute__((noinline)) int fclose_on(int (*next)(FILE *), FILE *f)
{
	bool any = ANY_HELD;
	int r = next(f);

	if (unlikely(any) && odebug_held_live())
		closed(f);
	return r;
}

/*
 * A stream's own close of its descriptor (lib/checks/fd/fd.h): its tag goes
 * before the call, after which the number may be another's.
 */
static __attribute__((noinline)) void stream_closing(FILE *f, const char *op)
{
	int saved = errno;

	if (f && f->_fileno > 2)
		odebug_fd_disown(f->_fileno, odebug_fd_make_tag(ODEBUG_FD_FILE, (uintptr_t)f), op);
	errno = saved;
}

ODEBUG_INLINE int fclose_(int (*next)(FILE *), FILE *f)
{
	if (unlikely(odebug_load(&odebug_fd_tags)))
		stream_closing(f, "fclose");
	if (likely(!CHECKING))
		return next(f);
	return fclose_on(next, f);
}
INTERPOSE(int, fclose, only, ODEBUG_V_BASE, "@@" ODEBUG_V_BASE, (FILE *f), (f), fclose_);

static __attribute__((noinline)) FILE *
freopen_on(FILE *(*next)(const char *, const char *, FILE *), const char *path,
	   const char *mode, FILE *f)
{
	bool any = ANY_HELD;
	FILE *r = next(path, mode, f);

	if (unlikely(any) && odebug_held_live())
		closed(f);
	return r;
}

/* The reopened stream owns its new descriptor, unless it is a standard stream. */
static __attribute__((noinline)) FILE *reopened(FILE *r, FILE *f)
{
	int saved = errno;

	if (r && f != stdin && f != stdout && f != stderr && r->_fileno > 2 && odebug_fd_ready())
		odebug_fd_own(r->_fileno, odebug_fd_make_tag(ODEBUG_FD_FILE, (uintptr_t)r),
			      ODEBUG_FD_BY_FREOPEN);
	errno = saved;
	return r;
}

ODEBUG_INLINE FILE *freopen_(FILE *(*next)(const char *, const char *, FILE *), const char *path,
			     const char *mode, FILE *f)
{
	FILE *r;

	if (unlikely(odebug_load(&odebug_fd_tags)))
		stream_closing(f, "freopen");
	if (likely(!CHECKING))
		r = next(path, mode, f);
	else
		r = freopen_on(next, path, mode, f);
	if (unlikely(odebug_load(&odebug_fd_on)))
		return reopened(r, f);
	return r;
}
INTERPOSE(FILE *, freopen, only, ODEBUG_V_BASE, "@@" ODEBUG_V_BASE,
	  (const char *path, const char *mode, FILE *f), (path, mode, f), freopen_);
INTERPOSE(FILE *, freopen64, only, ODEBUG_V_BASE, "@@" ODEBUG_V_BASE,
	  (const char *path, const char *mode, FILE *f), (path, mode, f), freopen_);

/*
 * fcloseall closes every stream: none may be used again, so every
 * stream's hold ends, whatever glibc left in its FILE (it flushes the
 * streams and unbuffers those that were used, and leaves one never used
 * with the program's buffer: a pointer it only follows if the stream is
 * used after its close).
 */
static __attribute__((noinline)) int fcloseall_on(int (*next)(void))
{
	bool any = ANY_HELD;
	int r = next(), saved;

	if (unlikely(any) && odebug_held_live()) {
		saved = errno;
		odebug_held_stdio_closed_all();
		errno = saved;
	}
	return r;
}

ODEBUG_INLINE int fcloseall_(int (*next)(void))
{
	if (likely(!CHECKING))
		return next();
	return fcloseall_on(next);
}
INTERPOSE(int, fcloseall, only, ODEBUG_V_BASE, "@@" ODEBUG_V_BASE, (void), (), fcloseall_);

/* The fixup's call: glibc's setvbuf, unbuffered (lib/checks/held/held-stdio.c says why that one). */
static int unbuffer(void *stream)
{
	int saved = errno, r;

	r = next_setvbuf_only(stream, NULL, _IONBF, 0);
	errno = saved;
	return r;
}

static const struct odebug_held_stdio_calls calls = { unbuffer };

__attribute__((constructor)) static void stdio_calls(void)
{
	odebug_held_stdio_calls = &calls;
}
