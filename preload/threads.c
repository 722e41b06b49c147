/* SPDX-License-Identifier: MIT */
/*
 * threads.c - C11 <threads.h>: mtx_* and cnd_* are pthread mutexes and
 * condition variables underneath, but glibc calls its pthread functions
 * internally, past our interposers; so they are interposed here, with the
 * same descriptors and the same logic.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <threads.h>
#include <time.h>

#include "interpose.h"

#define CHECKING odebug_builtin_active(ODEBUG_BUILTIN_PTHREAD)
#define MD (&odebug_mutex_descr)
#define COND_DESCR (&odebug_cond_descr)

static pthread_mutex_t *pm(mtx_t *m) { return (pthread_mutex_t *)(void *)m; }

ODEBUG_INLINE void mtx_locked(mtx_t *m, int r)
{
	int saved = errno;
	pthread_mutex_t *p = pm(m);

	if (r == thrd_success && odebug_mutex_cached(m))
		;	/* glibc keeps the hold, and we know the mutex: nothing to write */
	else if (r == thrd_success &&
		 !odebug_glibc_mutex_recursed(p))
		odebug_builtin_lock(m, MD, BUILTIN_LOCK);
	else if (r != thrd_success)	/* thrd_error: EINVAL underneath (destroyed, or no mutex) */
		odebug_builtin_mutex_refused(m, r == thrd_error);
	errno = saved;
}

ODEBUG_INLINE int mtx_init_(int (*next)(mtx_t *, int), mtx_t *m, int type)
{
	int saved;

	if (likely(!CHECKING))
		return next(m, type);
	saved = errno;
	odebug_builtin_object_init(m, MD);
	errno = saved;
	return next(m, type);
}
INTERPOSE_228_234(int, mtx_init, (mtx_t *m, int type), (m, type), mtx_init_);

ODEBUG_INLINE int mtx_lock_(int (*next)(mtx_t *), mtx_t *m)
{
	int r;

	if (likely(!CHECKING))
		return next(m);
	r = next(m);
	mtx_locked(m, r);
	return r;
}
INTERPOSE_228_234(int, mtx_lock, (mtx_t *m), (m), mtx_lock_);
INTERPOSE_228_234(int, mtx_trylock, (mtx_t *m), (m), mtx_lock_);

ODEBUG_INLINE int mtx_timedlock_(int (*next)(mtx_t *, const struct timespec *), mtx_t *m,
				 const struct timespec *t)
{
	int r;

	if (likely(!CHECKING))
		return next(m, t);
	r = next(m, t);
	mtx_locked(m, r);
	return r;
}
INTERPOSE_228_234(int, mtx_timedlock, (mtx_t *m, const struct timespec *t), (m, t),
		  mtx_timedlock_);

ODEBUG_INLINE int mtx_unlock_(int (*next)(mtx_t *), mtx_t *m)
{
	int saved;

	if (likely(!CHECKING))
		return next(m);
	saved = errno;
	odebug_builtin_mutex_unlock(m);
	errno = saved;
	return next(m);
}
INTERPOSE_228_234(int, mtx_unlock, (mtx_t *m), (m), mtx_unlock_);

/* void: glibc drops pthread_mutex_destroy's EBUSY; "destroy active" is ours to say. */
ODEBUG_INLINE void mtx_destroy_(void (*next)(mtx_t *), mtx_t *m)
{
	int saved, before;

	if (likely(!CHECKING)) {
		next(m);
		return;
	}
	saved = errno;
	before = odebug_builtin_mutex_peek(m);
	next(m);
	odebug_builtin_mutex_destroy(m, odebug_glibc_mutex_kind(pm(m)) == -1 ? 0 : EBUSY, before);
	errno = saved;
}
INTERPOSE_228_234(void, mtx_destroy, (mtx_t *m), (m), mtx_destroy_);

ODEBUG_INLINE int cnd_init_(int (*next)(cnd_t *), cnd_t *c)
{
	int saved;

	if (likely(!CHECKING))
		return next(c);
	saved = errno;
	odebug_builtin_object_init(c, COND_DESCR);
	errno = saved;
	return next(c);
}
INTERPOSE_228_234(int, cnd_init, (cnd_t *c), (c), cnd_init_);

ODEBUG_INLINE void cnd_destroy_(void (*next)(cnd_t *), cnd_t *c)
{
	int saved;

	if (likely(!CHECKING)) {
		next(c);
		return;
	}
	saved = errno;
	odebug_builtin_object_destroy(c, COND_DESCR);
	errno = saved;
	next(c);
}
INTERPOSE_228_234(void, cnd_destroy, (cnd_t *c), (c), cnd_destroy_);

ODEBUG_WAKE_FN(cnd_signal_, cnd_t, COND_DESCR, BUILTIN_WAKE_ONE, "signal")
ODEBUG_WAKE_FN(cnd_broadcast_, cnd_t, COND_DESCR, BUILTIN_WAKE_ALL, "broadcast")
INTERPOSE_228_234(int, cnd_signal, (cnd_t *c), (c), cnd_signal_);
INTERPOSE_228_234(int, cnd_broadcast, (cnd_t *c), (c), cnd_broadcast_);

struct waiting {
	cnd_t *cond;
	mtx_t *mutex;
};

static void wait_cancelled(void *arg)
{
	struct waiting *w = arg;

	odebug_builtin_cond_wait_end(w->cond, w->mutex);
}

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

static __attribute__((noinline)) int wait_checked(int (*next)(cnd_t *, mtx_t *), cnd_t *c,
						  mtx_t *m)
{
	WAIT_BODY(next(c, m));
}

static __attribute__((noinline)) int
timedwait_checked(int (*next)(cnd_t *, mtx_t *, const struct timespec *), cnd_t *c, mtx_t *m,
		  const struct timespec *t)
{
	WAIT_BODY(next(c, m, t));
}

ODEBUG_INLINE int cnd_wait_(int (*next)(cnd_t *, mtx_t *), cnd_t *c, mtx_t *m)
{
	if (likely(!CHECKING))
		return next(c, m);
	return wait_checked(next, c, m);
}
INTERPOSE_228_234(int, cnd_wait, (cnd_t *c, mtx_t *m), (c, m), cnd_wait_);

ODEBUG_INLINE int cnd_timedwait_(int (*next)(cnd_t *, mtx_t *, const struct timespec *),
				 cnd_t *c, mtx_t *m, const struct timespec *t)
{
	if (likely(!CHECKING))
		return next(c, m, t);
	return timedwait_checked(next, c, m, t);
}
INTERPOSE_228_234(int, cnd_timedwait, (cnd_t *c, mtx_t *m, const struct timespec *t),
		  (c, m, t), cnd_timedwait_);
