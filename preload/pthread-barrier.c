/* SPDX-License-Identifier: MIT */
/*
 * pthread-barrier.c - the pthread_barrier_* interposers.  Waiting is
 * ACTIVE, the tracker counting arrivals (lib/checks/builtin/builtin.c's
 * barrier_arrival()); the last arrival releases them all before any of
 * them returns, so the barrier can be destroyed right after the last wait.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>

#include "interpose.h"

#define CHECKING odebug_builtin_active(ODEBUG_BUILTIN_PTHREAD)
#define DESCR (&odebug_barrier_descr)

/*
 * glibc's struct pthread_barrier: in (arrivals so far), current_round (in
 * at the start of this round), count.  As glibc sees it, ours is arrival
 * number in - current_round + 1 of the round; the count-th releases all
 * (0).  A snapshot: the tracker's own count decides while it has one.
 */
static unsigned int arrival_of(const pthread_barrier_t *b)
{
	const unsigned int *w = (const unsigned int *)(const void *)b;
	unsigned int in = __atomic_load_n(&w[0], __ATOMIC_RELAXED);
	unsigned int round = __atomic_load_n(&w[1], __ATOMIC_RELAXED);
	unsigned int n = in >= round ? in - round + 1 : 1;

	return w[2] && n % w[2] ? n % w[2] : 0;
}

ODEBUG_INLINE int barrier_init(int (*next)(pthread_barrier_t *, const pthread_barrierattr_t *,
					   unsigned int),
			       pthread_barrier_t *b, const pthread_barrierattr_t *a, unsigned int n)
{
	int saved;

	if (likely(!CHECKING))
		return next(b, a, n);
	saved = errno;
	odebug_builtin_object_init(b, DESCR);
	errno = saved;
	return next(b, a, n);
}
INTERPOSE_BASE_234(int, pthread_barrier_init,
		   (pthread_barrier_t *b, const pthread_barrierattr_t *a, unsigned int n),
		   (b, a, n), barrier_init);

ODEBUG_INLINE int barrier_destroy(int (*next)(pthread_barrier_t *), pthread_barrier_t *b)
{
	int saved;

	if (likely(!CHECKING))
		return next(b);
	saved = errno;
	odebug_builtin_object_destroy(b, DESCR);
	errno = saved;
	return next(b);
}
INTERPOSE_BASE_234(int, pthread_barrier_destroy, (pthread_barrier_t *b), (b), barrier_destroy);

ODEBUG_INLINE int barrier_wait(int (*next)(pthread_barrier_t *), pthread_barrier_t *b)
{
	int saved;

	if (likely(!CHECKING))
		return next(b);
	saved = errno;
	odebug_builtin_use(b, DESCR, BUILTIN_ARRIVE, arrival_of(b), "wait");
	errno = saved;
	return next(b);
}
INTERPOSE_BASE_234(int, pthread_barrier_wait, (pthread_barrier_t *b), (b), barrier_wait);
