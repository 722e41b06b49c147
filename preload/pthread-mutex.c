/* SPDX-License-Identifier: MIT */
/*
 * pthread-mutex.c - the pthread_mutex_* interposers (lib/checks/builtin/builtin.c has the
 * state logic).  Each makes the real call and returns glibc's value with
 * errno unchanged; disabled, each is one branch and a tail call.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include "interpose.h"

#define PT ODEBUG_BUILTIN_PTHREAD
#define DESCR (&odebug_mutex_descr)

/* After any lock call but a cache hit: the hold begins, or a refused lock is checked. */
/* (errno: the fast paths leave it alone, the slow ones restore it.) */
static __attribute__((noinline)) void locked_slow(pthread_mutex_t *m, int r)
{
	int saved;

	if (likely(r == 0)) {
		/* A recursive mutex relocked by its owner is held already. */
		if (!odebug_glibc_mutex_recursed(m))
			odebug_builtin_lock(m, DESCR, BUILTIN_LOCK);
		return;
	}
	saved = errno;
	if (r == EOWNERDEAD)
		odebug_builtin_owner_died(m, DESCR);
	else
		odebug_builtin_mutex_refused(m, r == EINVAL);	/* memory that is no mutex, at every call */
	errno = saved;
}

/* glibc keeps the hold, and we know the mutex (@hit): nothing to write. */
ODEBUG_INLINE void locked(pthread_mutex_t *m, int r, const struct odebug_tracker *hit)
{
	if (likely(r == 0 && hit && !odebug_glibc_mutex_pshared(m)))
		return;
	locked_slow(m, r);
}

/*
 * A known plain mutex has nothing to do whatever glibc answers (glibc.h),
 * so the lock is a tail call.  The cache is read first, before glibc's
 * call: a hit holds across it, as only a destroy or a release of the
 * mutex's memory unsettles its tracker, and one during a lock of it is
 * the program's own race.
 */
#define LOCK_BODY(call)								\
	do {									\
		struct odebug_tracker *hit = odebug_mutex_cache_hit(m);		\
		int r;								\
										\
		if (likely(hit && odebug_glibc_mutex_plain(m)))			\
			return call;						\
		r = call;							\
		locked(m, r, hit);						\
		return r;							\
	} while (0)

/*
 * Each interposer's work is its _body (ODEBUG_INTERPOSER in builtin.h:
 * disabled, the real call; enabled, the body, after the returned-frames
 * compare).
 */
ODEBUG_INLINE int mutex_init_body(int (*next)(pthread_mutex_t *, const pthread_mutexattr_t *),
				  pthread_mutex_t *m, const pthread_mutexattr_t *a)
{
	int saved = errno;

	odebug_builtin_object_init(m, DESCR);
	errno = saved;
	return next(m, a);
}
ODEBUG_INTERPOSER(PT, int, mutex_init, (pthread_mutex_t *, const pthread_mutexattr_t *),
		  (pthread_mutex_t *m, const pthread_mutexattr_t *a), (m, a))
INTERPOSE_BASE(int, pthread_mutex_init, (pthread_mutex_t *m, const pthread_mutexattr_t *a),
	       (m, a), mutex_init);

ODEBUG_INLINE int mutex_destroy_body(int (*next)(pthread_mutex_t *), pthread_mutex_t *m)
{
	int saved = errno, before, r;

	before = odebug_builtin_mutex_peek(m);
	r = next(m);
	odebug_builtin_mutex_destroy(m, r, before);
	errno = saved;
	return r;
}
ODEBUG_INTERPOSER(PT, int, mutex_destroy, (pthread_mutex_t *), (pthread_mutex_t *m), (m))
INTERPOSE_BASE(int, pthread_mutex_destroy, (pthread_mutex_t *m), (m), mutex_destroy);

ODEBUG_INLINE int mutex_lock_body(int (*next)(pthread_mutex_t *), pthread_mutex_t *m)
{
	LOCK_BODY(next(m));
}
ODEBUG_INTERPOSER(PT, int, mutex_lock, (pthread_mutex_t *), (pthread_mutex_t *m), (m))
INTERPOSE_BASE(int, pthread_mutex_lock, (pthread_mutex_t *m), (m), mutex_lock);
INTERPOSE_BASE_234(int, pthread_mutex_trylock, (pthread_mutex_t *m), (m), mutex_lock);

ODEBUG_INLINE int mutex_timedlock_body(int (*next)(pthread_mutex_t *, const struct timespec *),
				       pthread_mutex_t *m, const struct timespec *t)
{
	LOCK_BODY(next(m, t));
}
ODEBUG_INTERPOSER(PT, int, mutex_timedlock, (pthread_mutex_t *, const struct timespec *),
		  (pthread_mutex_t *m, const struct timespec *t), (m, t))
INTERPOSE_BASE_234(int, pthread_mutex_timedlock, (pthread_mutex_t *m, const struct timespec *t),
		   (m, t), mutex_timedlock);

ODEBUG_INLINE int mutex_clocklock_body(int (*next)(pthread_mutex_t *, clockid_t,
						   const struct timespec *),
				       pthread_mutex_t *m, clockid_t c, const struct timespec *t)
{
	LOCK_BODY(next(m, c, t));
}
ODEBUG_INTERPOSER(PT, int, mutex_clocklock, (pthread_mutex_t *, clockid_t, const struct timespec *),
		  (pthread_mutex_t *m, clockid_t c, const struct timespec *t), (m, c, t))
INTERPOSE_230_234(int, pthread_mutex_clocklock,
		  (pthread_mutex_t *m, clockid_t c, const struct timespec *t), (m, c, t),
		  mutex_clocklock);

ODEBUG_INLINE int mutex_unlock_body(int (*next)(pthread_mutex_t *), pthread_mutex_t *m)
{
	/* Held by us, and glibc keeps the hold: nothing to check or write. */
	if (likely(odebug_glibc_mutex_lock_word(m) && odebug_mutex_cached(m) &&
		   odebug_mutex_mine(m)))
		return next(m);
	odebug_builtin_mutex_unlock(m);	/* errno: restored by its slow paths */
	return next(m);
}
ODEBUG_INTERPOSER(PT, int, mutex_unlock, (pthread_mutex_t *), (pthread_mutex_t *m), (m))
INTERPOSE_BASE(int, pthread_mutex_unlock, (pthread_mutex_t *m), (m), mutex_unlock);
