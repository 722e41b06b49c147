/* SPDX-License-Identifier: MIT */
/*
 * pthread-barrier.c - the pthread_barrier_* interposers.  Waiting is
 * ACTIVE, counting arrivals; the arrival glibc waits for (its count, read
 * from the barrier) releases them all, before any of them returns, so the
 * barrier can be destroyed right after the last wait.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>

#include "interpose.h"

#define ON odebug_builtin_active(ODEBUG_BUILTIN_PTHREAD)
#define D (&odebug_barrier_descr)

/* glibc's count: the third unsigned int of struct pthread_barrier. */
static unsigned int count_of(const pthread_barrier_t *b)
{
	return ((const unsigned int *)(const void *)b)[2];
}

ODEBUG_INLINE int barrier_init(int (*next)(pthread_barrier_t *, const pthread_barrierattr_t *,
					   unsigned int),
			       pthread_barrier_t *b, const pthread_barrierattr_t *a, unsigned int n)
{
	int saved;

	if (likely(!ON))
		return next(b, a, n);
	saved = errno;
	odebug_b_init(b, D);
	errno = saved;
	return next(b, a, n);
}
INTERPOSE_BASE_234(int, pthread_barrier_init,
		   (pthread_barrier_t *b, const pthread_barrierattr_t *a, unsigned int n),
		   (b, a, n), barrier_init);

ODEBUG_INLINE int barrier_destroy(int (*next)(pthread_barrier_t *), pthread_barrier_t *b)
{
	int saved;

	if (likely(!ON))
		return next(b);
	saved = errno;
	odebug_b_destroy(b, D);
	errno = saved;
	return next(b);
}
INTERPOSE_BASE_234(int, pthread_barrier_destroy, (pthread_barrier_t *b), (b), barrier_destroy);

ODEBUG_INLINE int barrier_wait(int (*next)(pthread_barrier_t *), pthread_barrier_t *b)
{
	int saved;

	if (likely(!ON))
		return next(b);
	saved = errno;
	odebug_b_use(b, D, BOP_ARRIVE, count_of(b), "wait");
	errno = saved;
	return next(b);
}
INTERPOSE_BASE_234(int, pthread_barrier_wait, (pthread_barrier_t *b), (b), barrier_wait);
