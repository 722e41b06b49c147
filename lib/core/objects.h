/* SPDX-License-Identifier: MIT */
/*
 * objects.h - what the state machine's files share (debugobjects.c,
 * object-free.c): taking an object's bucket, the check of a call's
 * arguments, the misuse report that drops the lock.
 */
#ifndef ODEBUG_OBJECTS_H
#define ODEBUG_OBJECTS_H

#include "core.h"

/* @addr's bucket, locked, its misses started together (odebug_prefetch()). */
static inline struct odebug_bucket *lock_bucket(const void *addr)
{
	struct odebug_bucket *b = odebug_bucket_of((uintptr_t)addr);

	odebug_prefetch(b, (uintptr_t)addr);
	odebug_bucket_lock(b);
	return b;
}

static inline void unlock_bucket(struct odebug_bucket *b)
{
	odebug_bucket_unlock(b);
}

__attribute__((noinline, cold)) bool odebug_bad_call_slow(const void *addr,
		const struct debug_obj_descr *descr, const char *fn);

/* NULL object or descriptor: one line (five at most), then a no-op. */
static inline bool bad_call(const void *addr, const struct debug_obj_descr *descr,
			    const char *fn)
{
	/* Not NULL and below 2^48 in one compare (the word's address bits). */
	if (likely((uintptr_t)addr - 1 < ODEBUG_ADDR_LIMIT - 1 && descr && descr->name))
		return false;
	return odebug_bad_call_slow(addr, descr, fn);
}

bool odebug_misuse_unlock(struct odebug_bucket *b, const struct odebug_tracker *t,
			  enum debug_obj_state state, const char *op,
			  bool (*fn)(void *, enum debug_obj_state), void *addr);

#endif /* ODEBUG_OBJECTS_H */
