/* SPDX-License-Identifier: MIT */
/*
 * sem.c - the POSIX semaphore interposers (option check_sem).  Waiting is
 * ACTIVE, counting waiters; a post takes one off (the woken waiter may be
 * destroyed behind right away), a waiter that returns or is cancelled
 * takes itself off, never below zero.  sem_open tracks the named
 * semaphore it maps; sem_close of one still waited on is "free active".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <semaphore.h>
#include <stdarg.h>
#include <time.h>

#include "interpose.h"

#define CHECKING odebug_builtin_active(ODEBUG_BUILTIN_SEM)
#define DESCR (&odebug_sem_descr)

ODEBUG_INLINE int sem_init_(int (*next)(sem_t *, int, unsigned int), sem_t *s, int pshared,
			    unsigned int value)
{
	int saved;

	if (likely(!CHECKING))
		return next(s, pshared, value);
	saved = errno;
	odebug_builtin_object_init(s, DESCR);
	errno = saved;
	return next(s, pshared, value);
}
INTERPOSE_BASE_234(int, sem_init, (sem_t *s, int pshared, unsigned int value),
		   (s, pshared, value), sem_init_);

ODEBUG_INLINE int sem_destroy_(int (*next)(sem_t *), sem_t *s)
{
	int saved;

	if (likely(!CHECKING))
		return next(s);
	saved = errno;
	odebug_builtin_object_destroy(s, DESCR);
	errno = saved;
	return next(s);
}
INTERPOSE_BASE_234(int, sem_destroy, (sem_t *s), (s), sem_destroy_);

/*
 * sem_post is async-signal-safe: a handler may leave it by siglongjmp at
 * any point, so odebug_builtin_post() holds nothing of ours where a signal can
 * be taken.
 */
ODEBUG_INLINE int sem_post_(int (*next)(sem_t *), sem_t *s)
{
	if (likely(!(odebug_load(&odebug_builtin_on) & ODEBUG_BUILTIN_SEM)))
		return next(s);
	odebug_builtin_post(s);
	return next(s);
}
INTERPOSE_BASE_234(int, sem_post, (sem_t *s), (s), sem_post_);

ODEBUG_INLINE int sem_trywait_(int (*next)(sem_t *), sem_t *s)
{
	int saved;

	if (likely(!CHECKING))
		return next(s);
	saved = errno;
	odebug_builtin_use(s, DESCR, BUILTIN_PEEK, 0, "wait");
	errno = saved;
	return next(s);
}
INTERPOSE_BASE_234(int, sem_trywait, (sem_t *s), (s), sem_trywait_);

/* Cancelled inside the wait. */
static void wait_cancelled(void *s)
{
	odebug_builtin_step(s, DESCR, BUILTIN_WAKE_ONE, 0);
}

#define WAIT_BODY(call)								\
	int r, saved = errno;							\
										\
	odebug_builtin_use(s, DESCR, BUILTIN_WAIT, 0, "wait");				\
	errno = saved;								\
	pthread_cleanup_push(wait_cancelled, s);				\
	r = call;								\
	pthread_cleanup_pop(0);							\
	saved = errno;								\
	odebug_builtin_step(s, DESCR, BUILTIN_WAKE_ONE, 0);				\
	errno = saved;								\
	return r

/* Out of line: pthread_cleanup_push uses setjmp, which cannot be inlined. */
static __attribute__((noinline)) int wait_checked(int (*next)(sem_t *), sem_t *s)
{
	WAIT_BODY(next(s));
}

static __attribute__((noinline)) int
timedwait_checked(int (*next)(sem_t *, const struct timespec *), sem_t *s,
		  const struct timespec *t)
{
	WAIT_BODY(next(s, t));
}

static __attribute__((noinline)) int
clockwait_checked(int (*next)(sem_t *, clockid_t, const struct timespec *), sem_t *s,
		  clockid_t k, const struct timespec *t)
{
	WAIT_BODY(next(s, k, t));
}

ODEBUG_INLINE int sem_wait_(int (*next)(sem_t *), sem_t *s)
{
	if (likely(!CHECKING))
		return next(s);
	return wait_checked(next, s);
}
INTERPOSE_BASE_234(int, sem_wait, (sem_t *s), (s), sem_wait_);

ODEBUG_INLINE int sem_timedwait_(int (*next)(sem_t *, const struct timespec *), sem_t *s,
				 const struct timespec *t)
{
	if (likely(!CHECKING))
		return next(s, t);
	return timedwait_checked(next, s, t);
}
INTERPOSE_BASE_234(int, sem_timedwait, (sem_t *s, const struct timespec *t), (s, t),
		   sem_timedwait_);

ODEBUG_INLINE int sem_clockwait_(int (*next)(sem_t *, clockid_t, const struct timespec *),
				 sem_t *s, clockid_t k, const struct timespec *t)
{
	if (likely(!CHECKING))
		return next(s, k, t);
	return clockwait_checked(next, s, k, t);
}
INTERPOSE_230_234(int, sem_clockwait, (sem_t *s, clockid_t k, const struct timespec *t),
		  (s, k, t), sem_clockwait_);

/*
 * sem_open is variadic: mode and value follow O_CREAT.  glibc reads them
 * only then, so passing them always is harmless.
 */
ODEBUG_INLINE sem_t *sem_open_(sem_t *(*next)(const char *, int, ...), const char *name,
			       int oflag, mode_t mode, unsigned int value)
{
	sem_t *s = next(name, oflag, mode, value);
	int saved;

	if (likely(!CHECKING) || s == SEM_FAILED)
		return s;
	saved = errno;
	/* The same name opened twice maps once: track it the first time only. */
	if (odebug_builtin_step(s, DESCR, BUILTIN_PEEK, 0) == ODEBUG_STATE_NOTAVAILABLE)
		odebug_builtin_object_init(s, DESCR);
	errno = saved;
	return s;
}
#define SEM_OPEN(tag, version, at)						\
	static sem_t *stub_sem_open_##tag(const char *name, int oflag, ...);	\
	static sem_t *(*next_sem_open_##tag)(const char *, int, ...) = stub_sem_open_##tag; \
	static const struct odebug_next_entry entry_sem_open_##tag		\
		__attribute__((used, section("odebug_next"), aligned(8))) =	\
		{ (void **)&next_sem_open_##tag, "sem_open", version };		\
	static sem_t *stub_sem_open_##tag(const char *name, int oflag, ...)	\
	{									\
		va_list ap;							\
		mode_t mode;							\
		unsigned int value;						\
										\
		va_start(ap, oflag);						\
		mode = (oflag & O_CREAT) ? va_arg(ap, mode_t) : 0;		\
		value = (oflag & O_CREAT) ? va_arg(ap, unsigned int) : 0;	\
		va_end(ap);							\
		odebug_next_resolve(&entry_sem_open_##tag);			\
		return next_sem_open_##tag(name, oflag, mode, value);		\
	}									\
	sem_t *odebug_i_sem_open_##tag(const char *name, int oflag, ...) ODEBUG_EXPORT; \
	sem_t *odebug_i_sem_open_##tag(const char *name, int oflag, ...)	\
	{									\
		va_list ap;							\
		mode_t mode = 0;						\
		unsigned int value = 0;						\
										\
		if (oflag & O_CREAT) {						\
			va_start(ap, oflag);					\
			mode = va_arg(ap, mode_t);				\
			value = va_arg(ap, unsigned int);			\
			va_end(ap);						\
		}								\
		return sem_open_(next_sem_open_##tag, name, oflag, mode, value); \
	}									\
	__asm__(".symver odebug_i_sem_open_" #tag ",sem_open" at)
SEM_OPEN(base, ODEBUG_V_BASE, "@" ODEBUG_V_BASE);
SEM_OPEN(234, "GLIBC_2.34", "@@GLIBC_2.34");

/* Closing a semaphore others still wait on. */
ODEBUG_INLINE int sem_close_(int (*next)(sem_t *), sem_t *s)
{
	int saved;

	if (likely(!CHECKING))
		return next(s);
	saved = errno;
	if (odebug_builtin_step(s, DESCR, BUILTIN_PEEK, 0) == ODEBUG_STATE_ACTIVE)
		debug_object_free(s, DESCR);
	errno = saved;
	return next(s);
}
INTERPOSE_BASE_234(int, sem_close, (sem_t *s), (s), sem_close_);
