/* SPDX-License-Identifier: MIT */
/*
 * builtin.h - the built-in object types: every program's pthread mutexes,
 * rwlocks, spinlocks, condition variables, barriers and semaphores, each a
 * struct debug_obj_descr driven by the interposers in preload/.
 *
 * The state of a built-in object is a tracker like any other: held or
 * waited on is ACTIVE (the active state counts readers or waiters), free
 * INIT or INACTIVE, destroyed DESTROYED.  The common transitions take one
 * bucket lock (odebug_builtin_step); everything else, and every report,
 * goes through the public debug_object_* calls.
 */
#ifndef ODEBUG_BUILTIN_H
#define ODEBUG_BUILTIN_H

#include <stdbool.h>

#include "internal.h"

/* Set once libodebug is on: which families the options enabled. */
#define ODEBUG_BUILTIN_PTHREAD	1
#define ODEBUG_BUILTIN_SEM	2
extern int odebug_builtin_on;

extern const struct debug_obj_descr odebug_mutex_descr, odebug_rwlock_descr,
	odebug_spin_descr, odebug_cond_descr, odebug_barrier_descr, odebug_sem_descr;

/*
 * The interposers' test: disabled, one load and one predictable branch;
 * enabled, not from inside libodebug (our reports lock libunwind's and
 * libdw's mutexes) and not after an out-of-memory switch-off.
 */
static inline bool odebug_builtin_active(int family)
{
	if (likely(!(odebug_load(&odebug_builtin_on) & family)))
		return false;
	return odebug_guard == 0 && odebug_load(&odebug_mode) == ODEBUG_MODE_ON;
}

/* What a step does to an object's tracker, under its bucket lock. */
enum odebug_bop {
	BOP_PEEK,	/* nothing: report the state */
	BOP_LOCK,	/* INIT/INACTIVE -> ACTIVE (held by one) */
	BOP_UNLOCK,	/* ACTIVE -> INACTIVE */
	BOP_RDLOCK,	/* -> ACTIVE, one more reader */
	BOP_RDUNLOCK,	/* one reader less; the last -> INACTIVE */
	BOP_WAIT,	/* -> ACTIVE, one more waiter */
	BOP_WAKE_ONE,	/* one waiter less (never below zero) */
	BOP_WAKE_ALL,	/* no waiter left: INACTIVE */
	BOP_ARRIVE,	/* barrier: arg waiters (0: the last arrived, all go) */
	BOP_RESET,	/* -> INIT, no reader or waiter */
};
/* Returned by a step on an address tracked with another descriptor. */
#define ODEBUG_STATE_FOREIGN ODEBUG_STATE_MAX

int odebug_builtin_step(void *addr, const struct debug_obj_descr *d,
			enum odebug_bop op, unsigned int arg);

/* The events, called by the interposers (builtin.c). */
void odebug_b_init(void *addr, const struct debug_obj_descr *d);
void odebug_b_destroy(void *addr, const struct debug_obj_descr *d);
void odebug_b_lock(void *addr, const struct debug_obj_descr *d, enum odebug_bop op);
void odebug_b_use(void *addr, const struct debug_obj_descr *d, enum odebug_bop op,
		  unsigned int arg, const char *opname);
void odebug_b_misuse(void *addr, const struct debug_obj_descr *d, const char *opname);
void odebug_b_owner_died(void *addr, const struct debug_obj_descr *d);

/* Mutexes (glibc's structure tells whether and by whom one is held). */
void odebug_b_mutex_destroy(void *addr, int result, int before);
void odebug_b_mutex_unlock(void *addr);
void odebug_b_cond_wait_begin(void *cond, void *mutex);
void odebug_b_cond_wait_end(void *cond, void *mutex);
void odebug_b_rwlock_unlock(void *addr);
int odebug_b_self(void);

/* report.c: the held mutex's or rwlock's owner, read from glibc. */
int odebug_builtin_owner(const struct odebug_snapshot *o);

void odebug_builtin_init(void);

#endif /* ODEBUG_BUILTIN_H */
