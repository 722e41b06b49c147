/* SPDX-License-Identifier: MIT */
/*
 * no-lockless.h - forced first into every file of the kernel-style core
 * (meson.build: -include): the kernel's table has no lockless path, so
 * here every call takes the bucket lock, which orders every change of a
 * tracker's word, as in the kernel:
 *
 * - the tracker word's compare-and-swap is a compare and a plain store.
 *   lib/core/core.h (and the layers below) is parsed with __atomic_compare_exchange_n redefined:
 *   its one strong swap is tracker.h's odebug_tracker_cas() (the span's
 *   loops are weak and stay atomic; a macro does not expand itself, so
 *   they reach the builtin).  The macro ends with core.h: the .c
 *   files' own swaps (groups, report slots, ...) stay atomic.
 * - odebug_peek(), the lockless lookup, finds nothing, and
 *   odebug_prefetch() before the lock does nothing (the callers' uses
 *   below core.h are replaced; its definitions stand).
 *
 * (_GNU_SOURCE is defined on the command line as the files that define it
 * define it, empty, since this comes before their first line.)
 */
#include <stdbool.h>
#include <stdint.h>

static inline bool odebug_kernel_cas(uint64_t *word, uint64_t *old, uint64_t new)
{
	uint64_t now = __atomic_load_n(word, __ATOMIC_RELAXED);

	if (now != *old) {
		*old = now;
		return false;
	}
	__atomic_store_n(word, new, __ATOMIC_RELAXED);
	return true;
}

#define __atomic_compare_exchange_n(p, old, new, weak, s, f)			\
	((weak) ? __atomic_compare_exchange_n(p, old, new, weak, s, f)		\
		: odebug_kernel_cas(p, old, new))
#include "core.h"
#undef __atomic_compare_exchange_n

/* No tracker found without the lock: the callers go on to the locked path. */
#define odebug_peek(addr, w)		((void)(addr), (void)(w), (struct odebug_tracker *)0)
/* Nothing to start ahead of the lock's miss. */
#define odebug_prefetch(b, addr)	((void)(b), (void)(addr))
