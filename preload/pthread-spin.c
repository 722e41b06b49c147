/* SPDX-License-Identifier: MIT */
/*
 * pthread-spin.c - the pthread_spin_* interposers.  A spinlock is a plain
 * int with no owner and no initializer: held or not is all there is.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>

#include "interpose.h"

#define CHECKING odebug_builtin_active(ODEBUG_BUILTIN_PTHREAD)
#define DESCR (&odebug_spin_descr)

ODEBUG_INLINE int spin_init(int (*next)(pthread_spinlock_t *, int), pthread_spinlock_t *l,
			    int pshared)
{
	int saved;

	if (likely(!CHECKING))
		return next(l, pshared);
	saved = errno;
	odebug_builtin_object_init((void *)l, DESCR);
	errno = saved;
	return next(l, pshared);
}
INTERPOSE_BASE_234(int, pthread_spin_init, (pthread_spinlock_t *l, int pshared), (l, pshared),
		   spin_init);

ODEBUG_INLINE int spin_destroy(int (*next)(pthread_spinlock_t *), pthread_spinlock_t *l)
{
	int saved;

	if (likely(!CHECKING))
		return next(l);
	saved = errno;
	odebug_builtin_object_destroy((void *)l, DESCR);
	errno = saved;
	return next(l);
}
INTERPOSE_BASE_234(int, pthread_spin_destroy, (pthread_spinlock_t *l), (l), spin_destroy);

ODEBUG_INLINE int spin_lock(int (*next)(pthread_spinlock_t *), pthread_spinlock_t *l)
{
	int r, saved;

	if (likely(!CHECKING))
		return next(l);
	r = next(l);
	if (r == 0) {
		saved = errno;
		odebug_builtin_lock((void *)l, DESCR, BUILTIN_LOCK);
		errno = saved;
	}
	return r;
}
INTERPOSE_BASE_234(int, pthread_spin_lock, (pthread_spinlock_t *l), (l), spin_lock);
INTERPOSE_BASE_234(int, pthread_spin_trylock, (pthread_spinlock_t *l), (l), spin_lock);

ODEBUG_INLINE int spin_unlock(int (*next)(pthread_spinlock_t *), pthread_spinlock_t *l)
{
	int saved;

	if (likely(!CHECKING))
		return next(l);
	saved = errno;
	if (unlikely(odebug_builtin_step((void *)l, DESCR, BUILTIN_UNLOCK, 0) == ODEBUG_STATE_DESTROYED))
		odebug_builtin_misuse((void *)l, DESCR, "unlock");
	errno = saved;
	return next(l);
}
INTERPOSE_BASE_234(int, pthread_spin_unlock, (pthread_spinlock_t *l), (l), spin_unlock);
