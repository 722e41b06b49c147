/* SPDX-License-Identifier: MIT */
/*
 * glibc.h - every glibc layout libodebug reads, named once: the bits of a
 * mutex's __kind and __lock (glibc's nptl/pthreadP.h and
 * sysdeps/nptl/lowlevellock.h, x86-64 and the other LP64 layouts, 2.34+).
 * Only read, never written.  Included through base.h.
 */
#ifndef ODEBUG_GLIBC_H
#define ODEBUG_GLIBC_H

#include <pthread.h>

/* pthread_mutex_t's __kind: the type in the low bits, then these flags. */
#define ODEBUG_GLIBC_MUTEX_ROBUST	16	/* PTHREAD_MUTEX_ROBUST_NORMAL_NP */
#define ODEBUG_GLIBC_MUTEX_PI		32	/* PTHREAD_MUTEX_PRIO_INHERIT_NP */
#define ODEBUG_GLIBC_MUTEX_PP		64	/* PTHREAD_MUTEX_PRIO_PROTECT_NP */
#define ODEBUG_GLIBC_MUTEX_PSHARED	128	/* PTHREAD_MUTEX_PSHARED_BIT */
/* Every bit glibc ever sets in __kind (type 0-3, the flags, elision 256, 512). */
#define ODEBUG_GLIBC_MUTEX_KIND_BITS	0x3f3
/* A plain mutex's: a type and the elision bits, no flag. */
#define ODEBUG_GLIBC_MUTEX_PLAIN_BITS	0x303
/* A priority-protected mutex's __lock: the ceiling above these bits. */
#define ODEBUG_GLIBC_MUTEX_PP_LOCK_MASK	0x7ffff

/* pthread_mutex_t as glibc lays it out, from a pointer to its words. */
static inline const pthread_mutex_t *odebug_glibc_as_mutex(const void *p)
{
	return p;
}

/* Process-shared: its words show other processes' holds. */
static inline bool odebug_glibc_mutex_pshared(const void *addr)
{
	return (odebug_glibc_as_mutex(addr)->__data.__kind & ODEBUG_GLIBC_MUTEX_PSHARED) != 0;
}

/*
 * A plain mutex (a type and elision bits: not robust, priority, process-shared
 * or garbage): glibc answers its lock with 0, EDEADLK, EAGAIN, EBUSY,
 * ETIMEDOUT or a timeout's EINVAL, and a known one of this kind needs
 * nothing of ours after any of them (preload/pthread-mutex.c).
 */
static inline bool odebug_glibc_mutex_plain(const void *addr)
{
	return !(__atomic_load_n(&odebug_glibc_as_mutex(addr)->__data.__kind, __ATOMIC_RELAXED) &
		 ~ODEBUG_GLIBC_MUTEX_PLAIN_BITS);
}

/* Robust or priority-inheriting: __lock holds the owner's thread id. */
static inline bool odebug_glibc_lock_is_tid(int kind)
{
	return (kind & ODEBUG_GLIBC_MUTEX_PI) ||
	       (kind & (ODEBUG_GLIBC_MUTEX_ROBUST | ODEBUG_GLIBC_MUTEX_PP)) == ODEBUG_GLIBC_MUTEX_ROBUST;
}

/*
 * pthread_rwlock_t's __readers (nptl/pthread_rwlock_common.c): the phase
 * and lock bits, then the count of readers that hold it or wait for it.
 */
#define ODEBUG_GLIBC_RWLOCK_WRLOCKED	2
#define ODEBUG_GLIBC_RWLOCK_READER_SHIFT	3

#endif /* ODEBUG_GLIBC_H */
