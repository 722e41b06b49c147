/* SPDX-License-Identifier: MIT */
/*
 * pthread-cond.c - the pthread_cond_* interposers, at glibc 2.3.2's
 * condition variable ABI (and 2.30/2.34 for clockwait); the pre-2.3.2 ABI,
 * pthread_cond_*@GLIBC_2.2.5, has another layout and is left alone.
 *
 * Waiting is ACTIVE, counting waiters.  A signal takes one off and a
 * broadcast all of them at once: after it, destroying or freeing the
 * condition variable is allowed while the woken waiters are still on their
 * way out (glibc waits for them).  A waiter that returns, times out or is
 * cancelled takes itself off, never below zero; so the count may miss a
 * waiter, never invent one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include "interpose.h"

#define CHECKING odebug_builtin_active(ODEBUG_BUILTIN_PTHREAD)
#define DESCR (&odebug_cond_descr)

struct waiting {
	pthread_cond_t *cond;
	pthread_mutex_t *mutex;
};

/* Cancelled inside the wait: glibc retook the mutex before unwinding. */
static void wait_cancelled(void *arg)
{
	struct waiting *w = arg;

	odebug_builtin_cond_wait_end(w->cond, w->mutex);
}

ODEBUG_INLINE int cond_init(int (*next)(pthread_cond_t *, const pthread_condattr_t *),
			    pthread_cond_t *c, const pthread_condattr_t *a)
{
	int saved;

	if (likely(!CHECKING))
		return next(c, a);
	saved = errno;
	odebug_builtin_object_init(c, DESCR);
	errno = saved;
	return next(c, a);
}
INTERPOSE(int, pthread_cond_init, 232, ODEBUG_V_COND, "@@" ODEBUG_V_COND,
	  (pthread_cond_t *c, const pthread_condattr_t *a), (c, a), cond_init);

ODEBUG_INLINE int cond_destroy(int (*next)(pthread_cond_t *), pthread_cond_t *c)
{
	int saved;

	if (likely(!CHECKING))
		return next(c);
	saved = errno;
	odebug_builtin_object_destroy(c, DESCR);
	errno = saved;
	return next(c);
}
INTERPOSE(int, pthread_cond_destroy, 232, ODEBUG_V_COND, "@@" ODEBUG_V_COND,
	  (pthread_cond_t *c), (c), cond_destroy);

ODEBUG_WAKE_FN(cond_signal, pthread_cond_t, DESCR, BUILTIN_WAKE_ONE, "signal")
ODEBUG_WAKE_FN(cond_broadcast, pthread_cond_t, DESCR, BUILTIN_WAKE_ALL, "broadcast")
INTERPOSE(int, pthread_cond_signal, 232, ODEBUG_V_COND, "@@" ODEBUG_V_COND,
	  (pthread_cond_t *c), (c), cond_signal);
INTERPOSE(int, pthread_cond_broadcast, 232, ODEBUG_V_COND, "@@" ODEBUG_V_COND,
	  (pthread_cond_t *c), (c), cond_broadcast);

/* The wait itself, with the mutex's hold handed to glibc and back. */
#define WAIT_BODY(call)								\
	struct waiting w = { c, m };						\
	int r, saved = errno;							\
										\
	odebug_builtin_cond_wait_begin(c, m);						\
	errno = saved;								\
	pthread_cleanup_push(wait_cancelled, &w);				\
	r = call;								\
	pthread_cleanup_pop(0);							\
	odebug_builtin_cond_wait_end(c, m);						\
	return r

/* Out of line: pthread_cleanup_push uses setjmp, which cannot be inlined. */
static __attribute__((noinline)) int
wait_checked(int (*next)(pthread_cond_t *, pthread_mutex_t *), pthread_cond_t *c,
	     pthread_mutex_t *m)
{
	WAIT_BODY(next(c, m));
}

static __attribute__((noinline)) int
timedwait_checked(int (*next)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *),
		  pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *t)
{
	WAIT_BODY(next(c, m, t));
}

static __attribute__((noinline)) int
clockwait_checked(int (*next)(pthread_cond_t *, pthread_mutex_t *, clockid_t,
			      const struct timespec *),
		  pthread_cond_t *c, pthread_mutex_t *m, clockid_t k, const struct timespec *t)
{
	WAIT_BODY(next(c, m, k, t));
}

ODEBUG_INLINE int cond_wait(int (*next)(pthread_cond_t *, pthread_mutex_t *),
			    pthread_cond_t *c, pthread_mutex_t *m)
{
	if (likely(!CHECKING))
		return next(c, m);
	return wait_checked(next, c, m);
}
INTERPOSE(int, pthread_cond_wait, 232, ODEBUG_V_COND, "@@" ODEBUG_V_COND,
	  (pthread_cond_t *c, pthread_mutex_t *m), (c, m), cond_wait);

ODEBUG_INLINE int cond_timedwait(int (*next)(pthread_cond_t *, pthread_mutex_t *,
					     const struct timespec *),
				 pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *t)
{
	if (likely(!CHECKING))
		return next(c, m, t);
	return timedwait_checked(next, c, m, t);
}
INTERPOSE(int, pthread_cond_timedwait, 232, ODEBUG_V_COND, "@@" ODEBUG_V_COND,
	  (pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *t), (c, m, t),
	  cond_timedwait);

ODEBUG_INLINE int cond_clockwait(int (*next)(pthread_cond_t *, pthread_mutex_t *, clockid_t,
					     const struct timespec *),
				 pthread_cond_t *c, pthread_mutex_t *m, clockid_t k,
				 const struct timespec *t)
{
	if (likely(!CHECKING))
		return next(c, m, k, t);
	return clockwait_checked(next, c, m, k, t);
}
INTERPOSE_230_234(int, pthread_cond_clockwait,
		  (pthread_cond_t *c, pthread_mutex_t *m, clockid_t k, const struct timespec *t),
		  (c, m, k, t), cond_clockwait);
