/* SPDX-License-Identifier: MIT */
/*
 * pthread-rwlock.c - the pthread_rwlock_* interposers.  Write-held is
 * ACTIVE with no count, by one compare-and-swap of the tracker; read holds
 * are glibc's __readers (lib/checks/builtin/builtin.c), counted in the active state only
 * where the table decides (init, destroy, the free check) or in tracked
 * mode.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include "interpose.h"

#define PT ODEBUG_BUILTIN_PTHREAD
#define DESCR (&odebug_rwlock_descr)

static __attribute__((noinline)) void locked_slow(pthread_rwlock_t *rw, int r,
						  enum odebug_builtin_op op)
{
	int saved = errno;

	if (likely(r == 0))
		odebug_builtin_lock(rw, DESCR, op);
	else if (r == EINVAL)
		odebug_builtin_use(rw, DESCR, BUILTIN_PEEK, 0, "lock");
	errno = saved;
}

/* A read lock of a sealed rwlock: glibc's __readers keeps the hold, nothing to write. */
ODEBUG_INLINE void locked(pthread_rwlock_t *rw, int r, enum odebug_builtin_op op)
{
	if (likely(op == BUILTIN_RDLOCK && r == 0 && odebug_rwlock_sealed(rw)))
		return;
	locked_slow(rw, r, op);
}

/*
 * Each interposer's work is its _body (ODEBUG_INTERPOSER in builtin.h:
 * disabled, the real call; enabled, the body, after the returned-frames
 * compare).
 */
ODEBUG_INLINE int rwlock_init_body(int (*next)(pthread_rwlock_t *, const pthread_rwlockattr_t *),
				   pthread_rwlock_t *rw, const pthread_rwlockattr_t *a)
{
	int saved = errno;

	odebug_builtin_object_init(rw, DESCR);
	errno = saved;
	return next(rw, a);
}
ODEBUG_INTERPOSER(PT, int, rwlock_init, (pthread_rwlock_t *, const pthread_rwlockattr_t *),
		  (pthread_rwlock_t *rw, const pthread_rwlockattr_t *a), (rw, a))
INTERPOSE_BASE_234(int, pthread_rwlock_init,
		   (pthread_rwlock_t *rw, const pthread_rwlockattr_t *a), (rw, a), rwlock_init);

ODEBUG_INLINE int rwlock_destroy_body(int (*next)(pthread_rwlock_t *), pthread_rwlock_t *rw)
{
	int saved = errno;

	odebug_builtin_object_destroy(rw, DESCR);
	odebug_rwlock_unseal(rw);
	errno = saved;
	return next(rw);
}
ODEBUG_INTERPOSER(PT, int, rwlock_destroy, (pthread_rwlock_t *), (pthread_rwlock_t *rw), (rw))
INTERPOSE_BASE_234(int, pthread_rwlock_destroy, (pthread_rwlock_t *rw), (rw), rwlock_destroy);

#define LOCK_FN(fn, op)								\
	ODEBUG_INLINE int fn##_body(int (*next)(pthread_rwlock_t *), pthread_rwlock_t *rw) \
	{									\
		int r = next(rw);						\
										\
		locked(rw, r, op);						\
		return r;							\
	}									\
	ODEBUG_INTERPOSER(PT, int, fn, (pthread_rwlock_t *), (pthread_rwlock_t *rw), (rw))

/* A write lock: of an rwlock in this thread's cache, one compare-and-swap. */
ODEBUG_INLINE int wrlock_body(int (*next)(pthread_rwlock_t *), pthread_rwlock_t *rw)
{
	int r = next(rw);

	if (likely(r == 0 &&
		   odebug_rwlock_writer_cached(rw, ODEBUG_STATE_INACTIVE, ODEBUG_STATE_ACTIVE)))
		return r;
	locked_slow(rw, r, BUILTIN_LOCK);
	return r;
}
ODEBUG_INTERPOSER(PT, int, wrlock, (pthread_rwlock_t *), (pthread_rwlock_t *rw), (rw))

/* Out of line: the sealed read lock's frame stays empty, a tail call. */
static __attribute__((noinline)) int rdlock_slow(int (*next)(pthread_rwlock_t *),
						 pthread_rwlock_t *rw)
{
	int r = next(rw);

	locked_slow(rw, r, BUILTIN_RDLOCK);
	return r;
}

/*
 * A read lock of a sealed rwlock has nothing to do whatever glibc answers
 * (0, or EBUSY, EAGAIN, EDEADLK: glibc's untimed read locks never say
 * EINVAL), so the seal is read first and glibc's call is a tail call.
 * The answer holds across the call: the seal's tracker is INACTIVE or
 * held by a writer, and a read hold changes neither.
 */
ODEBUG_INLINE int rdlock_body(int (*next)(pthread_rwlock_t *), pthread_rwlock_t *rw)
{
	if (likely(odebug_rwlock_sealed(rw)))
		return next(rw);
	return rdlock_slow(next, rw);
}
/* A seal matches only while libodebug runs (builtin.h). */
ODEBUG_INTERPOSER_QUICK(PT, int, rdlock, (pthread_rwlock_t *), (pthread_rwlock_t *rw), (rw),
			odebug_rwlock_sealed(rw))
INTERPOSE_BASE_234(int, pthread_rwlock_rdlock, (pthread_rwlock_t *rw), (rw), rdlock);
INTERPOSE_BASE_234(int, pthread_rwlock_tryrdlock, (pthread_rwlock_t *rw), (rw), rdlock);
INTERPOSE_BASE_234(int, pthread_rwlock_wrlock, (pthread_rwlock_t *rw), (rw), wrlock);
INTERPOSE_BASE_234(int, pthread_rwlock_trywrlock, (pthread_rwlock_t *rw), (rw), wrlock);

#define TIMED_FN(fn, op)							\
	ODEBUG_INLINE int fn##_body(int (*next)(pthread_rwlock_t *, const struct timespec *), \
				    pthread_rwlock_t *rw, const struct timespec *t) \
	{									\
		int r = next(rw, t);						\
										\
		locked(rw, r, op);						\
		return r;							\
	}									\
	ODEBUG_INTERPOSER(PT, int, fn, (pthread_rwlock_t *, const struct timespec *), \
			  (pthread_rwlock_t *rw, const struct timespec *t), (rw, t))
TIMED_FN(timedrdlock, BUILTIN_RDLOCK)
TIMED_FN(timedwrlock, BUILTIN_LOCK)
INTERPOSE_BASE_234(int, pthread_rwlock_timedrdlock,
		   (pthread_rwlock_t *rw, const struct timespec *t), (rw, t), timedrdlock);
INTERPOSE_BASE_234(int, pthread_rwlock_timedwrlock,
		   (pthread_rwlock_t *rw, const struct timespec *t), (rw, t), timedwrlock);

#define CLOCK_FN(fn, op)							\
	ODEBUG_INLINE int fn##_body(int (*next)(pthread_rwlock_t *, clockid_t,	\
						const struct timespec *),	\
				    pthread_rwlock_t *rw, clockid_t c,		\
				    const struct timespec *t)			\
	{									\
		int r = next(rw, c, t);						\
										\
		locked(rw, r, op);						\
		return r;							\
	}									\
	ODEBUG_INTERPOSER(PT, int, fn, (pthread_rwlock_t *, clockid_t, const struct timespec *), \
			  (pthread_rwlock_t *rw, clockid_t c, const struct timespec *t), (rw, c, t))
CLOCK_FN(clockrdlock, BUILTIN_RDLOCK)
CLOCK_FN(clockwrlock, BUILTIN_LOCK)
INTERPOSE_230_234(int, pthread_rwlock_clockrdlock,
		  (pthread_rwlock_t *rw, clockid_t c, const struct timespec *t), (rw, c, t),
		  clockrdlock);
INTERPOSE_230_234(int, pthread_rwlock_clockwrlock,
		  (pthread_rwlock_t *rw, clockid_t c, const struct timespec *t), (rw, c, t),
		  clockwrlock);

/* Out of line: the quiet unlock's frame stays empty, a tail call. */
static __attribute__((noinline)) int unlock_slow(int (*next)(pthread_rwlock_t *),
						 pthread_rwlock_t *rw)
{
	int saved = errno;

	odebug_builtin_rwlock_unlock(rw);
	errno = saved;
	return next(rw);
}

/*
 * Out of line: the quiet unlock's frame stays empty.  The writer glibc
 * names, of an rwlock in this thread's cache: one compare-and-swap.
 */
static __attribute__((noinline)) int unlock_unquiet(int (*next)(pthread_rwlock_t *),
						    pthread_rwlock_t *rw)
{
	if (odebug_glibc_rwlock_writer(rw) == odebug_tls.self_tid &&
	    odebug_tls.self_tid &&
	    odebug_rwlock_writer_cached(rw, ODEBUG_STATE_ACTIVE, ODEBUG_STATE_INACTIVE))
		return next(rw);
	return unlock_slow(next, rw);
}

ODEBUG_INLINE int rwlock_unlock_body(int (*next)(pthread_rwlock_t *), pthread_rwlock_t *rw)
{
	/* A reader's unlock of a sealed rwlock: nothing to check or write. */
	if (likely(odebug_rwlock_read_unlock_quiet(rw)))
		return next(rw);
	return unlock_unquiet(next, rw);
}
ODEBUG_INTERPOSER_QUICK(PT, int, rwlock_unlock, (pthread_rwlock_t *), (pthread_rwlock_t *rw), (rw),
			odebug_rwlock_read_unlock_quiet(rw))
INTERPOSE_BASE_234(int, pthread_rwlock_unlock, (pthread_rwlock_t *rw), (rw), rwlock_unlock);
