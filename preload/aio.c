/* SPDX-License-Identifier: MIT */
/*
 * aio.c - the aio_read, aio_write, aio_fsync and lio_listio interposers
 * (and their 64-bit names): a request in flight holds its aiocb and its
 * buffer (lib/checks/held/held-aio.c).  Disabled, one branch and a tail call;
 * enabled, the real call first, then one event of lib/checks/held/held-io.c; glibc's
 * return value and errno unchanged, and a failed call holds nothing.
 *
 * glibc 2.34 moved POSIX AIO from librt into libc: each function is at
 * GLIBC_2.2.5 (what programs linked before 2.34 ask for, in librt's name)
 * and at 2.34's default; lio_listio also at 2.4 (the 2.2.5 node is the
 * older function that ignored LIO_NOP entries' sigevents).  Each
 * interposer forwards to the same version.  On 64-bit targets the 64-bit
 * names are the same functions on the same struct.
 */
#define _GNU_SOURCE
#include <aio.h>
#include <errno.h>

#include "held-io.h"
#include "interpose.h"

#define CHECKING odebug_load(&odebug_held_on)

static __attribute__((noinline)) void submitted(const struct aiocb *cb, int op)
{
	int saved;

	if (!odebug_held_active())	/* the first hold starts libodebug */
		return;
	saved = errno;
	odebug_held_aio_submit(cb, op);
	errno = saved;
}

/* aio_read and aio_write: one request. */
static __attribute__((noinline)) int
rw_on(int (*next)(struct aiocb *), struct aiocb *cb, int op)
{
	int r = next(cb);

	if (r == 0)
		submitted(cb, op);
	return r;
}

ODEBUG_INLINE int read_(int (*next)(struct aiocb *), struct aiocb *cb)
{
	if (likely(!CHECKING))
		return next(cb);
	return rw_on(next, cb, LIO_READ);
}

ODEBUG_INLINE int write_(int (*next)(struct aiocb *), struct aiocb *cb)
{
	if (likely(!CHECKING))
		return next(cb);
	return rw_on(next, cb, LIO_WRITE);
}

/* aio_fsync: the aiocb only (its buffer is not used). */
static __attribute__((noinline)) int
fsync_on(int (*next)(int, struct aiocb *), int op, struct aiocb *cb)
{
	int r = next(op, cb);

	if (r == 0)
		submitted(cb, LIO_NOP);
	return r;
}

ODEBUG_INLINE int fsync_(int (*next)(int, struct aiocb *), int op, struct aiocb *cb)
{
	if (likely(!CHECKING))
		return next(op, cb);
	return fsync_on(next, op, cb);
}

/*
 * lio_listio: LIO_WAIT returns when every request ended, holding nothing.
 * LIO_NOWAIT: each read or write glibc took is in flight; when the call
 * failed (EAGAIN, EIO) some may have been taken all the same, and
 * aio_error says which.
 */
static __attribute__((noinline)) int
lio_on(int (*next)(int, struct aiocb *const[], int, struct sigevent *), int mode,
       struct aiocb *const list[], int n, struct sigevent *sig)
{
	int r = next(mode, list, n, sig), saved, i;

	if (mode != LIO_NOWAIT || !odebug_held_active())
		return r;
	saved = errno;
	for (i = 0; i < n; i++) {
		const struct aiocb *cb = list[i];

		if (!cb || (cb->aio_lio_opcode != LIO_READ && cb->aio_lio_opcode != LIO_WRITE))
			continue;
		if (r == 0 || aio_error(cb) == EINPROGRESS)
			odebug_held_aio_submit(cb, cb->aio_lio_opcode);
	}
	errno = saved;
	return r;
}

ODEBUG_INLINE int lio(int (*next)(int, struct aiocb *const[], int, struct sigevent *),
		      int mode, struct aiocb *const list[], int n, struct sigevent *sig)
{
	if (likely(!CHECKING))
		return next(mode, list, n, sig);
	return lio_on(next, mode, list, n, sig);
}

#define AIO_FUNCS(sfx)								\
INTERPOSE_BASE_234(int, aio_read##sfx, (struct aiocb *cb), (cb), read_);	\
INTERPOSE_BASE_234(int, aio_write##sfx, (struct aiocb *cb), (cb), write_);	\
INTERPOSE_BASE_234(int, aio_fsync##sfx, (int op, struct aiocb *cb), (op, cb), fsync_); \
INTERPOSE(int, lio_listio##sfx, base, ODEBUG_V_BASE, "@" ODEBUG_V_BASE,		\
	  (int mode, struct aiocb *const list[], int n, struct sigevent *sig),	\
	  (mode, list, n, sig), lio);						\
LIO_24(sfx)								\
INTERPOSE(int, lio_listio##sfx, 234, "GLIBC_2.34", "@@GLIBC_2.34",		\
	  (int mode, struct aiocb *const list[], int n, struct sigevent *sig),	\
	  (mode, list, n, sig), lio)

/* x86-64 has lio_listio at 2.4 too (elsewhere glibc's first node is later). */
#ifdef __x86_64__
#define LIO_24(sfx)								\
INTERPOSE(int, lio_listio##sfx, 24, "GLIBC_2.4", "@GLIBC_2.4",			\
	  (int mode, struct aiocb *const list[], int n, struct sigevent *sig),	\
	  (mode, list, n, sig), lio);
#else
#define LIO_24(sfx)
#endif

AIO_FUNCS();
#if __WORDSIZE == 64
AIO_FUNCS(64);
#endif

/* --- lib/checks/held/held-aio.c's questions: glibc's own answers ------------------ */

static int error_of(const void *cb)
{
	return aio_error(cb);
}

static int cancel(int fd, void *cb)
{
	return aio_cancel(fd, cb);
}

static const struct odebug_held_aio_ops ops = { error_of, cancel };

__attribute__((constructor)) static void aio_ops(void)
{
	odebug_held_aio_ops = &ops;
}
