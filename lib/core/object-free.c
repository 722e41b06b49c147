/* SPDX-License-Identifier: MIT */
/*
 * object-free.c - debug_object_free(): the lockless free (INIT, INACTIVE
 * or DESTROYED to FREED by one transition, tracker.h), the locked one, and
 * the bound on FREED trackers (one per thread).  A FREED tracker stays
 * linked until the next init of its address revives it, the free check
 * of its memory unlinks it, or the thread frees another object.
 */
#include "objects.h"

/*
 * The tracker of @index just became FREED by a lockless free (counted
 * already): make it this thread's one FREED tracker and reclaim the
 * previous one.  The swap is made under the guard, since no lock is held:
 * a signal handler's debug_object_free() landing between the read and the
 * write of last_freed would lose its tracker from the bound (the handler's
 * call is ignored instead, as during any locked section of ours;
 * odebug_pool_count() guards the count the same way).
 */
static inline void note_freed(uint32_t index)
{
	uint32_t prev;

	odebug_guard_enter();
	prev = odebug_last_freed;
	odebug_last_freed = index;
	odebug_guard_exit();
	if (prev && prev != index)
		odebug_reclaim_freed(prev);
}

/*
 * The lockless free (table.c's header): INIT, INACTIVE or DESTROYED to
 * FREED by one compare-and-swap, without the bucket lock.  False leaves
 * the call to the locked path: not found, ACTIVE (the misuse report and
 * fixup_free), NONE, busy set (astate, which only the locked path
 * changes, is not 0), a failed CAS, origins=1 (no lockless call there),
 * and the benchmarks' kernel-style table (odebug_peek() finds nothing
 * there).  Every
 * locked reader that looked the tracker up before this CAS finds FREED
 * when it reads the word again, and treats the object as untracked.
 */
static inline bool fast_free(void *addr)
{
	struct odebug_tracker *t;
	uint64_t w;

	if (unlikely(odebug_opt.origins))
		return false;
	t = odebug_peek((uintptr_t)addr, &w);
	if (!t || odebug_word_busy(w))
		return false;
	switch (odebug_word_state(w)) {
	case ODEBUG_STATE_INIT:
	case ODEBUG_STATE_INACTIVE:
	case ODEBUG_STATE_DESTROYED:
		if (!odebug_tracker_free(t, w))
			return false;
		odebug_pool_count(false);
		note_freed(odebug_tracker_index(t));
		return true;
	default:
		return false;
	}
}

/* The locked free, out of line (see activate_slow()). */
static __attribute__((noinline)) void
free_slow(void *addr, const struct debug_obj_descr *descr)
{
	struct odebug_bucket *b;
	struct odebug_tracker *t;
	uint64_t w;

	b = lock_bucket(addr);
	t = odebug_lookup(b, (uintptr_t)addr);
again:
	switch (odebug_tracker_read(t, &w)) {
	case ODEBUG_STATE_ACTIVE:
		odebug_misuse_unlock(b, t, ODEBUG_STATE_ACTIVE, "free", descr->fixup_free, addr);
		return;
	case ODEBUG_STATE_NOTAVAILABLE:	/* untracked, or a lockless free counted it */
		unlock_bucket(b);
		return;
	default:
		break;
	}
	/* To FREED by CAS (kernel-style: unlinked): a lockless activate now fails, or came first. */
	switch (odebug_release(b, t, w)) {
	case -1:
		goto again;
	case 1:
		unlock_bucket(b);
		odebug_pool_free(t);
		return;
	default: {
		uint32_t prev = odebug_last_freed;

		odebug_last_freed = odebug_tracker_index(t);
		unlock_bucket(b);
		if (prev && prev != odebug_last_freed)
			odebug_reclaim_freed(prev);
		return;
	}
	}
}

/**
 * debug_object_free - debug checks when an object is freed
 * @addr:	address of the object
 * @descr:	pointer to an object specific debug description structure
 *
 * Stops tracking the object.  Freeing an ACTIVE object is reported and
 * fixup_free(ACTIVE) is called; the tracker stays for the fixup to free.
 */
ODEBUG_EXPORT void debug_object_free(void *addr, const struct debug_obj_descr *descr)
{
	if (!odebug_on() || bad_call(addr, descr, "debug_object_free"))
		return;
	odebug_check_returned();
	if (likely(fast_free(addr)))
		return;
	free_slow(addr, descr);
}
