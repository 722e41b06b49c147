/* SPDX-License-Identifier: MIT */
/*
 * builtin-misuse.c - a built-in object used where there is none: memory
 * whose words are no mutex glibc knows (never initialised, filled with a
 * pattern), a condition variable that is neither initialised nor a valid
 * static initializer (builtin.c's untracked(), by the descriptor's
 * is_static_object), and an unlock of an rwlock that nobody holds.  Each
 * is reported at the culprit's call in the kernel's words, "<op> <state>",
 * whatever glibc answers; glibc's answer and errno are returned unchanged.
 *
 * A mutex's words are read at every lock call glibc refuses and at every
 * unlock that is not a cache hit (builtin.h), so the program that goes on
 * believing it holds a lock glibc refused is told at each call site, also
 * once the memory is tracked (the fixup of the first report tracks it, and
 * a tracked mutex may be overwritten).  glibc's words are the truth there:
 * the report says "not available" (no mutex here), not the tracker's state.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>

#include "builtin.h"

/* "<op> not available": @addr holds no object of @d's type, tracked or not. */
void odebug_builtin_absent(void *addr, const struct debug_obj_descr *d, const char *opname)
{
	struct odebug_snapshot o = {
		.addr = (uintptr_t)addr, .descr = d, .state = ODEBUG_STATE_NOTAVAILABLE,
	};

	odebug_report(&o, opname);
}

/*
 * Memory with no mutex, used by a lock (@lock) or an unlock: destroyed is
 * "activate destroyed" or "unlock destroyed" as before; untracked, a lock
 * is "activate not available" through the public call, whose fixup tracks
 * it; anything else "activate/unlock not available".  Another owner's
 * object (a user's annotation at the same address) is left alone.
 */
static void mutex_bad(void *addr, bool lock)
{
	const struct debug_obj_descr *d = &odebug_mutex_descr;
	int saved = errno;

	switch (odebug_builtin_step(addr, d, BUILTIN_PEEK, 0)) {
	case ODEBUG_STATE_FOREIGN:
		break;
	case ODEBUG_STATE_DESTROYED:
		if (lock)
			debug_object_activate(addr, d);
		else
			odebug_builtin_misuse(addr, d, "unlock");
		break;
	case ODEBUG_STATE_NOTAVAILABLE:
		if (lock && !odebug_builtin_full()) {
			debug_object_activate(addr, d);
			break;
		}
		/* fall through */
	default:
		odebug_builtin_absent(addr, d, lock ? "activate" : "unlock");
		break;
	}
	errno = saved;
}

/*
 * After a lock call that did not lock (not EOWNERDEAD): words that are no
 * mutex are reported whatever glibc said (EINVAL, or EBUSY and ETIMEDOUT
 * where glibc took pattern bits for a type); otherwise an EINVAL (@einval)
 * is a destroyed mutex's refusal, or an untracked one's first use.
 */
void odebug_builtin_mutex_refused(void *addr, bool einval)
{
	if (odebug_glibc_mutex_kind_bad(addr))
		mutex_bad(addr, true);
	else if (einval)
		odebug_builtin_use(addr, &odebug_mutex_descr, BUILTIN_PEEK, 0, "lock");
}

/* Before an unlock that missed the cache: true when the words are no mutex (reported). */
bool odebug_builtin_mutex_unlock_bad(void *addr)
{
	if (likely(!odebug_glibc_mutex_kind_bad(addr)))
		return false;
	mutex_bad(addr, false);
	return true;
}

/*
 * Before an rwlock unlock by a thread that is not its writer: nobody
 * holds it (glibc's words), so glibc would take one off a reader count of
 * zero and wrap it, and a later writer waits for readers that do not
 * exist or gets in beside real ones.  "unlock <state>", the tracker's
 * state ("unlock not available" when untracked); true when reported.
 */
bool odebug_builtin_rwlock_unlock_unheld(void *addr)
{
	int saved;

	if (likely(!odebug_glibc_rwlock_unheld(addr)))
		return false;
	saved = errno;
	odebug_builtin_misuse(addr, &odebug_rwlock_descr, "unlock");
	errno = saved;
	return true;
}
