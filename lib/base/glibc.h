/* SPDX-License-Identifier: MIT */
/*
 * glibc.h - every private field of glibc's objects libodebug touches,
 * named once, here: a mutex's, an rwlock's, a condition variable's, a
 * barrier's and a semaphore's words and the bits of a mutex's __kind and
 * __lock (glibc's nptl/pthreadP.h, nptl/pthread_rwlock_common.c,
 * sysdeps/nptl/lowlevellock.h, internaltypes.h; x86-64 and the other LP64
 * layouts, 2.34+).  Every other file reads them through these accessors
 * (static inline: the same loads as before); tests/glibc-layout.c checks
 * each field's offset and size against the installed headers.
 *
 * They are read, never written, but for one word: an rwlock's __pad2,
 * which glibc never uses, holds libodebug's seal (the checks' builtin.h).
 * odebug_glibc_rwlock_seal_store() and odebug_glibc_rwlock_seal_cas() are
 * the only writes into a glibc object, and they run only once
 * odebug_glibc_seal_probe() (glibc.c, from the start) found the layout
 * as expected and the option seal_rwlocks is 1 (odebug_glibc_seal_ok).
 * Included through base.h.
 */
#ifndef ODEBUG_GLIBC_H
#define ODEBUG_GLIBC_H

#include <pthread.h>
#include <string.h>

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

/*
 * Every private field named below, with the offset and size this file
 * assumes (glibc 2.25 on, LP64): tests/glibc-layout.c compares each with
 * the installed headers.
 */
#define ODEBUG_GLIBC_FIELDS(X)					\
	X(pthread_mutex_t, __lock, 0, 4)			\
	X(pthread_mutex_t, __count, 4, 4)			\
	X(pthread_mutex_t, __owner, 8, 4)			\
	X(pthread_mutex_t, __nusers, 12, 4)			\
	X(pthread_mutex_t, __kind, 16, 4)			\
	X(pthread_mutex_t, __list, 24, 16)			\
	X(pthread_rwlock_t, __readers, 0, 4)			\
	X(pthread_rwlock_t, __pad3, 16, 4)			\
	X(pthread_rwlock_t, __pad4, 20, 4)			\
	X(pthread_rwlock_t, __cur_writer, 24, 4)		\
	X(pthread_rwlock_t, __shared, 28, 4)			\
	X(pthread_rwlock_t, __pad1, 33, 7)			\
	X(pthread_rwlock_t, __pad2, 40, 8)			\
	X(pthread_rwlock_t, __flags, 48, 4)			\
	X(pthread_cond_t, __wrefs, 36, 4)

/* pthread_mutex_t as glibc lays it out, from a pointer to its words. */
static inline const pthread_mutex_t *odebug_glibc_as_mutex(const void *p)
{
	return p;
}

/* --- pthread_mutex_t ------------------------------------------------------ */

static inline int odebug_glibc_mutex_kind(const void *addr)
{
	return __atomic_load_n(&odebug_glibc_as_mutex(addr)->__data.__kind, __ATOMIC_RELAXED);
}

static inline int odebug_glibc_mutex_lock_word(const void *addr)
{
	return __atomic_load_n(&odebug_glibc_as_mutex(addr)->__data.__lock, __ATOMIC_RELAXED);
}

static inline int odebug_glibc_mutex_owner_word(const void *addr)
{
	return __atomic_load_n(&odebug_glibc_as_mutex(addr)->__data.__owner, __ATOMIC_RELAXED);
}

static inline unsigned int odebug_glibc_mutex_nusers(const void *addr)
{
	return __atomic_load_n(&odebug_glibc_as_mutex(addr)->__data.__nusers, __ATOMIC_RELAXED);
}

/* A recursive mutex held more than once: its unlock leaves it held. */
static inline bool odebug_glibc_mutex_recursed(const void *addr)
{
	const pthread_mutex_t *m = odebug_glibc_as_mutex(addr);

	return (m->__data.__kind & PTHREAD_MUTEX_RECURSIVE_NP) && m->__data.__count > 1;
}

/* Its robust-list links: both NULL unless robust and held once. */
static inline bool odebug_glibc_mutex_unlinked(const void *addr)
{
	const pthread_mutex_t *m = odebug_glibc_as_mutex(addr);

	return !m->__data.__list.__prev && !m->__data.__list.__next;
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

static inline unsigned int odebug_glibc_rwlock_readers_word(const void *addr)
{
	return __atomic_load_n(&((const pthread_rwlock_t *)addr)->__data.__readers,
			       __ATOMIC_RELAXED);
}

/* The writer's thread id, 0: none. */
static inline int odebug_glibc_rwlock_writer(const void *addr)
{
	return (int)__atomic_load_n(&((const pthread_rwlock_t *)addr)->__data.__cur_writer,
				    __ATOMIC_RELAXED);
}

/*
 * The same two words with a folded load (types.h): the readers' unlock's
 * fast path, where the compiler may merge them with the loads around.
 */
static inline unsigned int odebug_glibc_rwlock_readers_folded(const void *addr)
{
	return odebug_load_folded(&((const pthread_rwlock_t *)addr)->__data.__readers);
}

static inline unsigned int odebug_glibc_rwlock_writer_folded(const void *addr)
{
	return odebug_load_folded(&((const pthread_rwlock_t *)addr)->__data.__cur_writer);
}

static inline bool odebug_glibc_rwlock_shared(const void *addr)
{
	return ((const pthread_rwlock_t *)addr)->__data.__shared != 0;
}

/*
 * The words an initializer or pthread_rwlock_init() leaves alone or zero:
 * __flags and __shared in range, the pads zero but __pad2 (the seal's).
 */
static inline bool odebug_glibc_rwlock_pads_clear(const void *addr)
{
	const pthread_rwlock_t *rw = addr;
	static const unsigned char zero[sizeof(rw->__data.__pad1)];

	return rw->__data.__flags <= 2 && rw->__data.__shared <= 1 &&
	       !rw->__data.__pad3 && !rw->__data.__pad4 &&
	       !memcmp(rw->__data.__pad1, zero, sizeof(zero));
}

/*
 * __pad2: 64 bits glibc never reads or writes (0 after an init and in the
 * static initializers), where a read lock leaves libodebug's seal.  The
 * load is folded (types.h): the readers' unlock's fast path reads it.
 */
_Static_assert(sizeof(((pthread_rwlock_t *)0)->__data.__pad2) == sizeof(uint64_t),
	       "glibc's rwlock has a 64-bit word for the seal");

static inline uint64_t odebug_glibc_rwlock_seal_word(const void *addr)
{
	return odebug_load_folded(&((const pthread_rwlock_t *)addr)->__data.__pad2);
}

/* Set once the start found __pad2 as glibc.c's probe expects and seal_rwlocks=1. */
extern ODEBUG_HIDDEN bool odebug_glibc_seal_ok;

/* THE WRITE into a glibc object: store @seal in the rwlock's __pad2. */
static inline void odebug_glibc_rwlock_seal_store(void *addr, uint64_t seal)
{
	__atomic_store_n(&((pthread_rwlock_t *)addr)->__data.__pad2, seal, __ATOMIC_RELAXED);
}

/* The other write: __pad2 from @seal back to 0, if it still holds it. */
static inline bool odebug_glibc_rwlock_seal_cas(void *addr, uint64_t seal, int order)
{
	pthread_rwlock_t *rw = addr;
	unsigned long old = seal;

	return __atomic_compare_exchange_n(&rw->__data.__pad2, &old, 0, false, order, __ATOMIC_RELAXED);
}

bool odebug_glibc_seal_probe(void);
const char *odebug_glibc_version(void);

/* --- pthread_cond_t ------------------------------------------------------- */

/*
 * What pthread_cond_init() or PTHREAD_COND_INITIALIZER leaves before the
 * first wait: all zero but __wrefs' process-shared and clock bits.
 */
static inline bool odebug_glibc_cond_unwaited(const void *addr)
{
	static const pthread_cond_t zero;
	pthread_cond_t c;

	memcpy(&c, addr, sizeof(c));
	c.__data.__wrefs &= ~3u;	/* bit 0 process-shared, bit 1 the clock */
	return !memcmp(&c, &zero, sizeof(c));
}

/* --- pthread_barrier_t, sem_t: glibc's structures behind the opaque types - */

/* glibc's struct pthread_barrier: in, current_round, count, shared, out. */
struct odebug_glibc_barrier {
	unsigned int in, current_round, count;
	int shared;
	unsigned int out;
};

/* glibc's struct new_sem (LP64): value and waiters, private, pad. */
struct odebug_glibc_sem {
	unsigned long data;
	int private;
	int pad;
};

#endif /* ODEBUG_GLIBC_H */
