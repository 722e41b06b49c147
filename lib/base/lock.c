/* SPDX-License-Identifier: MIT */
/*
 * lock.c - the slow paths of lock.h: spinning politely, and sleeping on a
 * futex (raw system calls: nothing that could reach an interposer).
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lock.h"

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield" ::: "memory");
#else
	__asm__ volatile("" ::: "memory");
#endif
}

/* Test, then test-and-set: waiters spin on a shared line, not on writes. */
void odebug_spin_lock_slow(odebug_spinlock_t *lock)
{
	unsigned int spins = 0;

	do {
		while (atomic_load_explicit(&lock->v, memory_order_relaxed)) {
			if (++spins < 64)
				cpu_relax();
			else
				sched_yield();
		}
	} while (!odebug_spin_trylock(lock));
}

/* Drepper's "Futexes are tricky" mutex, third version. */
void odebug_mutex_lock_slow(odebug_mutex_t *lock)
{
	int c = atomic_exchange_explicit(&lock->v, 2, memory_order_acquire);

	while (c) {
		syscall(SYS_futex, &lock->v, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
		c = atomic_exchange_explicit(&lock->v, 2, memory_order_acquire);
	}
}

void odebug_mutex_wake(odebug_mutex_t *lock)
{
	syscall(SYS_futex, &lock->v, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}
