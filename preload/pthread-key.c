/* SPDX-License-Identifier: MIT */
/*
 * pthread-key.c - the pthread_key_create and pthread_key_delete
 * interposers: a key's destructor runs at each thread's exit while the
 * thread has a value, so a module unloaded with its code as the
 * destructor of a live key is reported at the dlclose
 * (lib/checks/held/held-module.c).  glibc's key table is not public, so the
 * destructors are recorded here.  Disabled, one branch and a tail call;
 * enabled, the real call first; glibc's return value and errno
 * unchanged, and a failed call records nothing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>

#include "held-ext.h"
#include "interpose.h"

#define CHECKING odebug_load(&odebug_held_on)

static __attribute__((noinline)) int
key_create_on(int (*next)(pthread_key_t *, void (*)(void *)), pthread_key_t *key,
	      void (*destructor)(void *))
{
	int r = next(key, destructor), saved;

	if (r != 0 || !destructor || !odebug_held_active())
		return r;
	saved = errno;
	odebug_held_key_create(*key, destructor);
	errno = saved;
	return r;
}

ODEBUG_INLINE int key_create(int (*next)(pthread_key_t *, void (*)(void *)), pthread_key_t *key,
			     void (*destructor)(void *))
{
	if (likely(!CHECKING))
		return next(key, destructor);
	return key_create_on(next, key, destructor);
}
INTERPOSE_BASE_234(int, pthread_key_create, (pthread_key_t *key, void (*destructor)(void *)),
		   (key, destructor), key_create);

static __attribute__((noinline)) int key_delete_on(int (*next)(pthread_key_t), pthread_key_t key)
{
	int r = next(key), saved;

	if (r != 0 || !odebug_load(&odebug_hold_count[ODEBUG_HELD_KEY]) ||
	    !odebug_held_live())
		return r;
	saved = errno;
	odebug_held_key_delete(key);
	errno = saved;
	return r;
}

ODEBUG_INLINE int key_delete(int (*next)(pthread_key_t), pthread_key_t key)
{
	if (likely(!CHECKING))
		return next(key);
	return key_delete_on(next, key);
}
INTERPOSE_BASE_234(int, pthread_key_delete, (pthread_key_t key), (key), key_delete);
