/* SPDX-License-Identifier: MIT */
/*
 * held-track.c - the trackers of held memory (held.h), for every family:
 * ACTIVE while a record holds the address, INACTIVE otherwise, changed
 * by the built-in types' steps (which never report) outside the records'
 * lock, and made to agree with the records again when another thread
 * changed them in between (odebug_held_settle()).
 */
#define _GNU_SOURCE
#include <errno.h>

#include "builtin.h"
#include "held.h"
#include "held-ext.h"

/*
 * Trackers found lately, by held address: a hint, as good as
 * odebug_peek()'s answer once the word read from it holds the address
 * and is not RETIRED (tracker.h: at most one such tracker exists, and
 * the compare-and-swap fails if the word changed since).
 */
static uint32_t hints[256];

static inline uint32_t *hint_of(uintptr_t t)
{
	return &hints[(t * 0x9e3779b97f4a7c15ull) >> 56];
}

static inline struct odebug_tracker *find_tracker(uintptr_t t, uint64_t *w)
{
	uint32_t i = odebug_load(hint_of(t));
	struct odebug_tracker *tr;

	if (i && i < odebug_load(&odebug_pool_reserved)) {
		tr = odebug_tracker_at(i);
		*w = odebug_tracker_word(tr);
		if (odebug_word_addr(*w) == t && !odebug_word_retired(*w))
			return tr;
	}
	tr = odebug_peek(t, w);
	if (tr)
		odebug_store(hint_of(t), odebug_tracker_index(tr));
	return tr;
}

/*
 * The built-in types' lockless lock and unlock step (builtin.c's
 * fast_step()) for a tracker of @d, inline: epoll_ctl and timer_settime
 * take it at every call.  False leaves the step to odebug_builtin_step()
 * (origins=1, no such tracker, one of another type, or busy).
 */
static inline bool fast_track(void *t, const struct debug_obj_descr *d, bool want)
{
	struct odebug_tracker *tr;
	unsigned int state;
	uint64_t w;

	if (unlikely(odebug_opt.origins))
		return false;
	tr = find_tracker((uintptr_t)t, &w);
	if (!tr || odebug_word_descr(w) != d)
		return false;
	state = odebug_word_state(w);
	if (state == ODEBUG_STATE_DESTROYED ||
	    state == (want ? ODEBUG_STATE_ACTIVE : ODEBUG_STATE_INACTIVE) ||
	    (!want && state == ODEBUG_STATE_INIT))
		return true;	/* no change, as the built-in step's */
	if (odebug_word_busy(w) || (want ? state != ODEBUG_STATE_INIT &&
				    state != ODEBUG_STATE_INACTIVE : state != ODEBUG_STATE_ACTIVE))
		return false;
	return odebug_tracker_move(tr, w, want ? ODEBUG_STATE_ACTIVE : ODEBUG_STATE_INACTIVE);
}

/*
 * A held tracker at @t made ACTIVE (@want, a @d object) or INACTIVE, by
 * the built-in types' steps: they never report, and a tracker of another
 * type at that address (FOREIGN) is left alone, unless it is of type @alt,
 * another family that may stand there for the same holder.  A new tracker
 * counts against the built-in types' bound.  No lock held: with origins=1
 * the step records this stack.
 */
static __attribute__((noinline)) void
track_slow(void *t, const struct debug_obj_descr *d, const struct debug_obj_descr *alt, bool want)
{
	uintptr_t base;
	int s;

	if (!want) {
		odebug_builtin_step(t, d, BUILTIN_UNLOCK, 0);
		if (alt)
			odebug_builtin_step(t, alt, BUILTIN_UNLOCK, 0);
		return;
	}
	s = odebug_builtin_step(t, d, BUILTIN_LOCK, 0);
	if (s == ODEBUG_STATE_FOREIGN && alt)
		s = odebug_builtin_step(t, alt, BUILTIN_LOCK, 0);
	if (s != ODEBUG_STATE_NOTAVAILABLE || odebug_builtin_full())
		return;
	/* As builtin.c's track_static: made once, even by two threads at once. */
	odebug_stack_prepare();
	if (odebug_on_stack((uintptr_t)t, &base) && d == &odebug_tstack_descr) {
		/*
		 * A thread's own stack block (held-tstack.c): on its stack,
		 * but in no frame, so no returned frame takes it: the lowest
		 * on-stack object stays what it was.
		 */
		uintptr_t low = odebug_tls.onstack_low;

		debug_object_init_on_stack(t, d);
		odebug_onstack_set(low);
	} else if (odebug_on_stack((uintptr_t)t, &base))
		debug_object_init_on_stack(t, d);
	else
		debug_object_assert_init(t, d);
	odebug_builtin_step(t, d, BUILTIN_LOCK, 0);
}

/* errno is the caller's still: epoll_ctl's and timer_settime's interposers do not keep it. */
static __attribute__((noinline)) void
track_slow_keep_errno(void *t, const struct debug_obj_descr *d,
		      const struct debug_obj_descr *alt, bool want)
{
	int saved = errno;

	track_slow(t, d, alt, want);
	errno = saved;
}

void odebug_held_track(void *t, const struct debug_obj_descr *d,
		       const struct debug_obj_descr *alt, bool want)
{
	if (unlikely(!fast_track(t, d, want)))
		track_slow_keep_errno(t, d, alt, want);
}

/*
 * Make the tracker of (@family, @addr) agree with the records: @holds
 * (which takes the records' lock) decides, @apply changes the tracker
 * outside that lock, and @holds is asked again; another thread's change in
 * between is seen by whichever of the two checks last, which applies
 * again.  Bounded: under endless churn of one address the last word is
 * the next call's.
 */
void odebug_held_settle(uintptr_t addr, int family, bool (*holds)(uintptr_t addr, int family),
			void (*apply)(uintptr_t addr, int family, bool want))
{
	bool want;
	int i;

	for (i = 0; i < 8; i++) {
		want = holds(addr, family);
		apply(addr, family, want);
		if (holds(addr, family) == want)
			return;
	}
}

/* Every value may be held: untracked is never "not available" (every family's). */
bool odebug_held_any_value(void *addr)
{
	(void)addr;
	return true;
}
