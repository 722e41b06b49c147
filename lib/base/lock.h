/* SPDX-License-Identifier: MIT */
/*
 * lock.h - libodebug's own locks.  Never pthread_*: libodebug.so exports
 * pthread_mutex_lock, pthread_spin_lock and friends to check the program's
 * locks, so a call of ours to them would bind to our own interposers.
 *
 * odebug_spinlock_t: test-and-test-and-set over C11 atomics, a pause per
 * spin, and a yield after a short spin (with more threads than cores, or a
 * fork() holding every lock, a preempted holder would otherwise make the
 * others spin for whole time slices).  Zero is unlocked.
 *
 * odebug_mutex_t: a futex lock for what may be held long (the report):
 * 0 free, 1 held, 2 held with sleepers.  Zero is unlocked.
 */
#ifndef ODEBUG_LOCK_H
#define ODEBUG_LOCK_H

#include <stdatomic.h>
#include <stdbool.h>

typedef struct { atomic_int v; } odebug_spinlock_t;
typedef struct { atomic_int v; } odebug_mutex_t;

void odebug_spin_lock_slow(odebug_spinlock_t *lock);
void odebug_mutex_lock_slow(odebug_mutex_t *lock);
void odebug_mutex_wake(odebug_mutex_t *lock);

static inline void odebug_spin_init(odebug_spinlock_t *lock)
{
	atomic_init(&lock->v, 0);
}

static inline bool odebug_spin_trylock(odebug_spinlock_t *lock)
{
	return !atomic_exchange_explicit(&lock->v, 1, memory_order_acquire);
}

static inline void odebug_spin_lock(odebug_spinlock_t *lock)
{
	if (__builtin_expect(!odebug_spin_trylock(lock), 0))
		odebug_spin_lock_slow(lock);
}

static inline void odebug_spin_unlock(odebug_spinlock_t *lock)
{
	atomic_store_explicit(&lock->v, 0, memory_order_release);
}

static inline void odebug_mutex_init(odebug_mutex_t *lock)
{
	atomic_init(&lock->v, 0);
}

static inline void odebug_mutex_lock(odebug_mutex_t *lock)
{
	int expected = 0;

	if (__builtin_expect(!atomic_compare_exchange_strong_explicit(&lock->v, &expected, 1,
			memory_order_acquire, memory_order_relaxed), 0))
		odebug_mutex_lock_slow(lock);
}

/* Never waits (debug_object_print): true when taken. */
static inline bool odebug_mutex_trylock(odebug_mutex_t *lock)
{
	int expected = 0;

	return atomic_compare_exchange_strong_explicit(&lock->v, &expected, 1,
			memory_order_acquire, memory_order_relaxed);
}

static inline void odebug_mutex_unlock(odebug_mutex_t *lock)
{
	if (__builtin_expect(atomic_exchange_explicit(&lock->v, 0, memory_order_release) == 2, 0))
		odebug_mutex_wake(lock);
}

#endif /* ODEBUG_LOCK_H */
