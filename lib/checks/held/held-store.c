/* SPDX-License-Identifier: MIT */
/*
 * held-store.c - the one store of hold records (held-store.h): the
 * mapping, made at the first hold, its lock, adding and dropping records,
 * and the fork generation.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>

#include "held-store.h"

ODEBUG_HOT struct odebug_holds *odebug_holds;
odebug_spinlock_t odebug_holds_lock;
uint16_t odebug_hold_gen;
unsigned long odebug_hold_version;
unsigned long odebug_hold_count[16];

/* In a fork() child: the records made before are the parent's. */
static void fork_child(void)
{
	odebug_store(&odebug_hold_gen, (uint16_t)(odebug_load(&odebug_hold_gen) + 1));
}

/*
 * lib/start/init.c's fork handlers, after every other lock (the records' lock
 * is taken alone, or under the report lock by a hint): the child never
 * inherits it held by a thread it does not have.  The guard is set.
 */
void odebug_holds_fork_lock(void)
{
	odebug_spin_lock(&odebug_holds_lock);
}

void odebug_holds_fork_unlock(void)
{
	odebug_spin_unlock(&odebug_holds_lock);
}

/*
 * The mapping (held-store.h's odebug_holds_mapped()): reserved for
 * ODEBUG_HOLDS_MAX records, touched as used.  False when it cannot be
 * mapped, and nothing is held.  errno is the caller's still.
 */
bool odebug_holds_map(void)
{
	static int failed;
	struct odebug_holds *m;
	int saved = errno;

	if (odebug_load(&failed))
		return false;
	m = odebug_map(sizeof(*m));
	errno = saved;
	if (!m) {
		odebug_store(&failed, 1);
		return false;
	}
	/* Only once something is held: a write would copy the page in each child. */
	if (__atomic_compare_exchange_n(&odebug_holds, &(struct odebug_holds *){ NULL }, m,
					false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		pthread_atfork(NULL, NULL, fork_child);
	else
		odebug_unmap(m, sizeof(*m));
	return true;
}

/* Every record in use: said once, and nothing more is held. */
void odebug_holds_full(void)
{
	static int said;
	int saved = errno;

	if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
		odebug_message("65536 holds recorded: new epoll registrations, timers, "
			       "requests, streams, stacks and keys are not checked from now on",
			       (char *)NULL);
	errno = saved;
}
