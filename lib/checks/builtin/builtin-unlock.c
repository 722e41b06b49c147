/* SPDX-License-Identifier: MIT */
/*
 * builtin-unlock.c - the end of a hold: a mutex's and an rwlock's unlock
 * (by the owner, by a non-owner, of a lock nobody holds), the release and
 * retake inside a condition variable's wait, a dead owner's hold
 * (EOWNERDEAD), and a mutex's destroy, which glibc refuses while it is
 * held.  The holds themselves and the steps are builtin.c's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>

#include "builtin.h"

/* Before pthread_mutex_destroy (and mtx_destroy): the state, synced. */
int odebug_builtin_mutex_peek(void *addr)
{
	return odebug_builtin_mutex_sync(addr);
}

/*
 * pthread_mutex_destroy: glibc refuses a held mutex (EBUSY), so the table
 * follows glibc's verdict: destroyed only if it was.  @before is the
 * state peeked before the call.
 */
void odebug_builtin_mutex_destroy(void *addr, int result, int before)
{
	const struct debug_obj_descr *d = &odebug_mutex_descr;

	if (result == 0)
		odebug_orphan_forget((uintptr_t)addr);
	if (before == ODEBUG_STATE_FOREIGN || before == ODEBUG_STATE_NOTAVAILABLE)
		return;
	if (result == 0 && before == ODEBUG_STATE_ACTIVE)	/* a release we missed */
		odebug_builtin_step(addr, d, BUILTIN_RESET, 0);
	if (result == 0 || before == ODEBUG_STATE_ACTIVE)
		debug_object_destroy(addr, d);
}

/* EOWNERDEAD: the dead owner's hold ends, ours begins. */
void odebug_builtin_owner_died(void *addr, const struct debug_obj_descr *d)
{
	odebug_builtin_step(addr, d, BUILTIN_RESET, 0);
	odebug_builtin_lock(addr, d, BUILTIN_LOCK);
}

static bool unlock_by_nonowner(void *addr)
{
	const pthread_mutex_t *m = odebug_glibc_as_mutex(addr);
	int owner = odebug_glibc_mutex_owner(m), saved;

	if (owner == odebug_builtin_self_tid() || owner <= 0 || !odebug_glibc_mutex_held(addr))
		return false;
	saved = errno;
	odebug_builtin_mutex_sync(addr);
	odebug_builtin_misuse(addr, &odebug_mutex_descr, "unlock non-owner");
	if (!odebug_glibc_unlock_checks_owner(m)) {
		odebug_builtin_step(addr, &odebug_mutex_descr, BUILTIN_UNLOCK, 0);
		odebug_orphan_add((uintptr_t)addr, owner);
	}
	errno = saved;
	return true;
}

/*
 * Before a mutex unlock.  glibc's __lock is zero when nobody holds it:
 * "unlock" of it is reported, whatever the table says, unless a
 * non-owner's unlock released this thread's hold (reported then).  Held
 * by another thread: "unlock non-owner".  Otherwise the hold ends:
 * nothing to do unless the tracker keeps it (a lock taken before we
 * started ends silently).
 */
void odebug_builtin_mutex_unlock(void *addr)
{
	const pthread_mutex_t *m = odebug_glibc_as_mutex(addr);

	if (unlikely(odebug_builtin_mutex_unlock_bad(addr)))
		return;
	if (unlikely(!odebug_glibc_mutex_lock_word(m))) {
		int saved = errno;

		if (!odebug_orphan_take((uintptr_t)addr, odebug_builtin_self_tid())) {
			odebug_builtin_mutex_sync(addr);
			odebug_builtin_misuse(addr, &odebug_mutex_descr, "unlock");
		}
		errno = saved;
		return;
	}
	if (unlikely(!odebug_mutex_mine(addr)) && unlock_by_nonowner(addr))
		return;
	if (likely(odebug_mutex_cached(addr)))
		return;
	/* A recursive mutex relocked by its owner: only the last unlock counts. */
	if (odebug_glibc_mutex_recursed(m))
		return;
	if (odebug_glibc_tracked_mode(addr))
		odebug_builtin_step(addr, &odebug_mutex_descr, BUILTIN_UNLOCK, 0);
}

/*
 * Before an rwlock unlock: the writer is the one glibc names.  A write
 * hold is exclusive, so a writer glibc names that is another live thread
 * means the caller holds nothing: "unlock non-owner" (glibc takes it for a
 * reader's unlock and breaks the lock's count); the writer keeps its hold.
 */
void odebug_builtin_rwlock_unlock(void *addr)
{
	const pthread_rwlock_t *rw = addr;
	int cur = odebug_glibc_rwlock_writer(rw);
	bool writer = cur == odebug_builtin_self_tid();

	if (unlikely(cur && !writer) && odebug_glibc_thread_alive(cur)) {
		odebug_builtin_misuse(addr, &odebug_rwlock_descr, "unlock non-owner");
		return;
	}
	if (writer) {
		odebug_builtin_step(addr, &odebug_rwlock_descr, BUILTIN_UNLOCK, 0);
		return;
	}
	if (unlikely(odebug_builtin_rwlock_unlock_unheld(addr)) || odebug_rwlock_sealed(addr))
		return;
	/* glibc's __readers shows the release, unless the tracker counts readers. */
	if (odebug_glibc_rwlock_tracked_mode(addr))
		odebug_builtin_step(addr, &odebug_rwlock_descr, BUILTIN_RDUNLOCK, 0);
}

/*
 * pthread_cond_wait and friends.  glibc releases and retakes the mutex
 * inside, unseen: the hold ends before the call and begins again after.
 * The caller must hold the mutex: glibc's __owner says whether it does.
 */
void odebug_builtin_cond_wait_begin(void *cond, void *mutex)
{
	const pthread_mutex_t *m = odebug_glibc_as_mutex(mutex);

	if (unlikely(!odebug_glibc_mutex_lock_word(m) ||
		     odebug_glibc_mutex_owner_word(m) != odebug_builtin_self_tid())) {
		odebug_builtin_mutex_sync(mutex);
		odebug_builtin_misuse(mutex, &odebug_mutex_descr, "cond_wait non-owner");
	}
	odebug_builtin_use(cond, &odebug_cond_descr, BUILTIN_WAIT, 0, "wait");
	/* glibc's words show the release inside the wait by themselves. */
	if (odebug_glibc_tracked_mode(mutex) &&
	    !odebug_glibc_mutex_recursed(m))
		odebug_builtin_step(mutex, &odebug_mutex_descr, BUILTIN_UNLOCK, 0);
}

/* After the wait (returned, timed out, or cancelled): glibc holds the mutex again. */
void odebug_builtin_cond_wait_end(void *cond, void *mutex)
{
	int saved = errno;

	if (odebug_glibc_tracked_mode(mutex))
		odebug_builtin_step(mutex, &odebug_mutex_descr, BUILTIN_LOCK, 0);
	odebug_builtin_step(cond, &odebug_cond_descr, BUILTIN_WAKE_ONE, 0);
	errno = saved;
}
