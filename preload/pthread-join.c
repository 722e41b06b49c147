/* SPDX-License-Identifier: MIT */
/*
 * pthread-join.c - the calls that end a thread stack's hold
 * (lib/checks/held/held-tstack.c): a successful pthread_join, pthread_tryjoin_np,
 * pthread_timedjoin_np or pthread_clockjoin_np gives the program its
 * stack back; pthread_detach makes the hold end with the thread.
 * Disabled, one branch and a tail call; enabled, the real call first,
 * and only a success with a thread stack recorded does more; glibc's
 * return value and errno unchanged.
 *
 * Versions: pthread_join and pthread_detach at the baseline and 2.34;
 * the _np joins at 2.3.3 (x86-64; the baseline elsewhere) and 2.34,
 * pthread_clockjoin_np at 2.31 and 2.34.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include "held-ext.h"
#include "interpose.h"

#define CHECKING odebug_load(&odebug_held_on)

#ifdef __x86_64__
#define V_NP "GLIBC_2.3.3"
#else
#define V_NP ODEBUG_V_BASE
#endif

/* After the real call: @r is its result; 0 ends (or, detached, changes) @t's hold. */
static __attribute__((noinline)) int after(int r, pthread_t t, bool detach)
{
	int saved;

	if (r != 0 || !odebug_load(&odebug_hold_count[ODEBUG_HELD_TSTACK]))
		return r;
	saved = errno;
	if (detach)
		odebug_held_tstack_detached((uintptr_t)t);
	else
		odebug_held_tstack_joined((uintptr_t)t);
	errno = saved;
	return r;
}

ODEBUG_INLINE int join(int (*next)(pthread_t, void **), pthread_t t, void **ret)
{
	if (likely(!CHECKING))
		return next(t, ret);
	return after(next(t, ret), t, false);
}
INTERPOSE_BASE_234(int, pthread_join, (pthread_t t, void **ret), (t, ret), join);

ODEBUG_INLINE int tryjoin(int (*next)(pthread_t, void **), pthread_t t, void **ret)
{
	if (likely(!CHECKING))
		return next(t, ret);
	return after(next(t, ret), t, false);
}
INTERPOSE(int, pthread_tryjoin_np, np, V_NP, "@" V_NP, (pthread_t t, void **ret), (t, ret),
	  tryjoin);
INTERPOSE(int, pthread_tryjoin_np, 234, "GLIBC_2.34", "@@GLIBC_2.34",
	  (pthread_t t, void **ret), (t, ret), tryjoin);

ODEBUG_INLINE int timedjoin(int (*next)(pthread_t, void **, const struct timespec *),
			    pthread_t t, void **ret, const struct timespec *abstime)
{
	if (likely(!CHECKING))
		return next(t, ret, abstime);
	return after(next(t, ret, abstime), t, false);
}
INTERPOSE(int, pthread_timedjoin_np, np, V_NP, "@" V_NP,
	  (pthread_t t, void **ret, const struct timespec *abstime), (t, ret, abstime),
	  timedjoin);
INTERPOSE(int, pthread_timedjoin_np, 234, "GLIBC_2.34", "@@GLIBC_2.34",
	  (pthread_t t, void **ret, const struct timespec *abstime), (t, ret, abstime),
	  timedjoin);

ODEBUG_INLINE int clockjoin(int (*next)(pthread_t, void **, clockid_t, const struct timespec *),
			    pthread_t t, void **ret, clockid_t clock,
			    const struct timespec *abstime)
{
	if (likely(!CHECKING))
		return next(t, ret, clock, abstime);
	return after(next(t, ret, clock, abstime), t, false);
}
INTERPOSE(int, pthread_clockjoin_np, 231, "GLIBC_2.31", "@GLIBC_2.31",
	  (pthread_t t, void **ret, clockid_t clock, const struct timespec *abstime),
	  (t, ret, clock, abstime), clockjoin);
INTERPOSE(int, pthread_clockjoin_np, 234, "GLIBC_2.34", "@@GLIBC_2.34",
	  (pthread_t t, void **ret, clockid_t clock, const struct timespec *abstime),
	  (t, ret, clock, abstime), clockjoin);

ODEBUG_INLINE int detach(int (*next)(pthread_t), pthread_t t)
{
	if (likely(!CHECKING))
		return next(t);
	return after(next(t), t, true);
}
INTERPOSE_BASE_234(int, pthread_detach, (pthread_t t), (t), detach);
