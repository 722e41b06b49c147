/* SPDX-License-Identifier: MIT */
/*
 * pthread-create.c - a new thread is set up for reporting before its start
 * routine runs (lib/thread.c says why: what a thread sets up lazily may
 * allocate, and its first report may come from a signal handler that
 * interrupted malloc).
 *
 * Two versions, as glibc's: pthread_create@@GLIBC_2.34 and the baseline
 * node programs linked before glibc 2.34 are bound to.  Disabled, each is
 * one branch and a jump to the real one.  Enabled, the start routine and
 * its argument travel in a small block the new thread frees; if it cannot
 * be allocated, the thread starts as it would have, unprepared.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>

#include "internal.h"
#include "next.h"

typedef int create_fn(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

struct start {
	void *(*routine)(void *);
	void *arg;
};

static void *prepared_start(void *p)
{
	struct start s = *(struct start *)p;
	void *ret;

	free(p);
	odebug_thread_begin(false);
	ret = s.routine(s.arg);
	/* Not a tail call: the routine's frames keep a caller to unwind to. */
	__asm__ volatile("" ::: "memory");
	return ret;
}

static int create(create_fn *next, pthread_t *thread, const pthread_attr_t *attr,
		  void *(*routine)(void *), void *arg)
{
	struct start *s;

	if (likely(odebug_load(&odebug_mode) == ODEBUG_MODE_OFF) || odebug_guard)
		return next(thread, attr, routine, arg);
	if (odebug_load(&odebug_mode) == ODEBUG_MODE_ON)
		odebug_thread_begin(false);	/* the creator, if started elsewhere */
	s = malloc(sizeof(*s));
	if (!s)
		return next(thread, attr, routine, arg);
	s->routine = routine;
	s->arg = arg;
	{
		int r = next(thread, attr, prepared_start, s);

		if (r)
			free(s);
		return r;
	}
}

static create_fn *resolve(const char *version)
{
	create_fn *fn;

	*(void **)&fn = dlvsym(RTLD_NEXT, "pthread_create", version);
	if (!fn)
		*(void **)&fn = dlsym(RTLD_NEXT, "pthread_create");
	return fn;
}

static create_fn *next_234, *next_base;

int odebug_pthread_create_234(pthread_t *thread, const pthread_attr_t *attr,
			      void *(*routine)(void *), void *arg) ODEBUG_EXPORT;
int odebug_pthread_create_234(pthread_t *thread, const pthread_attr_t *attr,
			      void *(*routine)(void *), void *arg)
{
	create_fn *next = __atomic_load_n(&next_234, __ATOMIC_ACQUIRE);

	if (unlikely(!next)) {
		next = resolve("GLIBC_2.34");
		__atomic_store_n(&next_234, next, __ATOMIC_RELEASE);
	}
	return create(next, thread, attr, routine, arg);
}
__asm__(".symver odebug_pthread_create_234,pthread_create@@GLIBC_2.34");

int odebug_pthread_create_base(pthread_t *thread, const pthread_attr_t *attr,
			       void *(*routine)(void *), void *arg) ODEBUG_EXPORT;
int odebug_pthread_create_base(pthread_t *thread, const pthread_attr_t *attr,
			       void *(*routine)(void *), void *arg)
{
	create_fn *next = __atomic_load_n(&next_base, __ATOMIC_ACQUIRE);

	if (unlikely(!next)) {
		next = resolve(ODEBUG_V_BASE);
		__atomic_store_n(&next_base, next, __ATOMIC_RELEASE);
	}
	return create(next, thread, attr, routine, arg);
}
__asm__(".symver odebug_pthread_create_base,pthread_create@" ODEBUG_V_BASE);
