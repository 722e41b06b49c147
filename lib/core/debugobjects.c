/* SPDX-License-Identifier: MIT */
/*
 * debugobjects.c - the state machine: the kernel's lib/core/debugobjects.c,
 * cell by cell, in userspace.
 *
 * activate, deactivate and free first try the lockless path: odebug_peek()
 * and one transition of the tracker's word (tracker.h), which does
 * nothing but a legal change of INIT, INACTIVE or ACTIVE (and DESTROYED,
 * for the free).  Everything else, and every other operation, takes the
 * locked path: find the bucket, take its lock, look the object up
 * (allocating a tracker where the operation may), read its state with
 * odebug_tracker_read() and apply the legal transition, or copy the
 * tracker into a snapshot, drop the lock, and only then report and call
 * the fixup.  Fixups therefore run with no lock of ours held and may call
 * back into the API, and nothing reads a tracker once its lock is released.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>

#include "objects.h"

/* Why lookup_or_alloc() returned no tracker. */
enum miss { MISS_UNTRACKED, MISS_POOL_EMPTY, MISS_OFF };

/* An on-stack mismatch found under the lock, printed after it. */
struct stack_note {
	bool pending, is_on_stack;
	uintptr_t stack;
};


__attribute__((noinline, cold)) bool odebug_bad_call_slow(const void *addr,
		const struct debug_obj_descr *descr, const char *fn)
{
	static unsigned long limit;
	struct odebug_buf b;

	if (odebug_inc(&limit) < ODEBUG_NOTICE_LIMIT) {
		odebug_buf_init(&b, 2);
		odebug_puts(&b, ODEBUG_PREFIX);
		odebug_puts(&b, fn);
		odebug_puts(&b, !addr ? " called with a NULL object" :
			    !descr ? " called with a NULL descriptor" :
			    !descr->name ? " called with a descriptor without a name" :
			    " called with an address beyond 48 bits");
		odebug_puts(&b, "; call ignored\n");
		odebug_flush(&b);
	}
	return true;
}

/*
 * A misuse of a tracked object: copy the tracker, drop the bucket lock,
 * report and call the fixup (if any; report.c's odebug_report_fix()) with
 * the state the tracker had when the misuse was decided (@state; a
 * lockless call may have changed it since).
 * Returns the fixup's verdict.
 */
bool odebug_misuse_unlock(struct odebug_bucket *b, const struct odebug_tracker *t,
			  enum debug_obj_state state, const char *op,
			  bool (*fn)(void *, enum debug_obj_state), void *addr)
{
	struct odebug_snapshot o;

	odebug_tracker_snapshot(&o, t);
	o.state = state;
	unlock_bucket(b);
	return odebug_report_fix(&o, op, fn, addr);
}

/* An untracked object's misuse, with its fixup (report.c's odebug_report_fix()). */
static bool report_untracked(void *addr, const struct debug_obj_descr *descr,
			     const char *op, bool (*fn)(void *, enum debug_obj_state))
{
	struct odebug_snapshot o = {
		.addr = (uintptr_t)addr, .descr = descr,
		.astate = 0, .state = ODEBUG_STATE_NOTAVAILABLE,
		.init_stack = 0, .activate_stack = 0,
		.name = descr->name,	/* the caller's: live */
	};

	return odebug_report_fix(&o, op, fn, addr);
}



static void oom(void)
{
	static int once;

	odebug_disable();
	if (__atomic_exchange_n(&once, 1, __ATOMIC_ACQ_REL))
		return;
	odebug_message("Out of memory. ODEBUG disabled", (char *)NULL);
	odebug_table_drain();
}

/*
 * The pool ran dry under a bucket lock (the lock is dropped now): refill
 * and let the caller retry, or give up when pool_max is reached.
 */
static bool handle_miss(enum miss miss)
{
	if (miss == MISS_OFF)	/* switched off meanwhile: nothing to do */
		return false;
	if (miss == MISS_POOL_EMPTY && odebug_pool_fill()) {
		sched_yield();
		return true;
	}
	oom();
	return false;
}

static void print_note(const void *addr, const struct stack_note *note)
{
	if (unlikely(note->pending))
		odebug_report_on_stack((uintptr_t)addr, note->stack,
				       note->is_on_stack);
}

/*
 * Find the tracker of @addr, or make one: always for init, and for
 * activate/assert_init (@alloc_ifstatic) only when the descriptor says the
 * object was initialised statically.  The bucket lock is held.  A tracker
 * made is INIT from the start (init's transition is its insertion, which
 * a lockless call may see at once); *@made says so.
 */
static struct odebug_tracker *
lookup_or_alloc(struct odebug_bucket *b, void *addr,
		const struct debug_obj_descr *descr, bool onstack,
		bool alloc_ifstatic, enum miss *miss, struct stack_note *note, bool *made)
{
	struct odebug_tracker *t = odebug_lookup_any(b, (uintptr_t)addr);
	uintptr_t stack;
	uint64_t w;
	bool is_on;
	int slot;

	/* Tracked; or not, or FREED (revived below). */
	if (odebug_tracker_read(t, &w) != ODEBUG_STATE_NOTAVAILABLE)
		return t;
	if (alloc_ifstatic) {
		if (!descr->is_static_object || !descr->is_static_object(addr)) {
			*miss = MISS_UNTRACKED;
			return NULL;
		}
		/* Statically allocated objects are considered initialised. */
	}
	/*
	 * The out-of-memory switch-off drains bucket by bucket: a tracker
	 * made after it passed this bucket would never be freed.
	 */
	if (unlikely(odebug_load(&odebug_mode) != ODEBUG_MODE_ON && !odebug_selftesting())) {
		*miss = MISS_OFF;
		return NULL;
	}
	/* The word names the descriptor by its registry slot. */
	slot = odebug_descr_note(descr);
	if (unlikely(slot < 0)) {	/* over 4096 descriptors: said once */
		*miss = MISS_OFF;
		return NULL;
	}
	if (t) {	/* debug_object_free()d, still linked: tracked again in place */
		odebug_revive(t, (uintptr_t)addr, (unsigned int)slot);
	} else {
		t = odebug_pool_alloc();
		if (!t) {
			*miss = MISS_POOL_EMPTY;
			return NULL;
		}
		odebug_tracker_make(t, (uintptr_t)addr, (unsigned int)slot, ODEBUG_STATE_INIT);
		odebug_insert(b, t);
	}
	*made = true;

	is_on = odebug_on_stack((uintptr_t)addr, &stack);
	if (is_on != onstack) {
		note->pending = true;
		note->is_on_stack = is_on;
		note->stack = stack;
	}
	return t;
}

/*
 * activate and assert_init: lock @addr's bucket and find its tracker, or
 * make one for a statically initialised object.  Usually it is tracked
 * already, so the pool is filled (which may take its lock) only when a
 * tracker is about to be made (*@made says so).  Returns the tracker with
 * the bucket locked (*@bp), or NULL unlocked: *@miss is MISS_UNTRACKED, or
 * a miss that could not be handled.
 */
static struct odebug_tracker *
find_or_alloc_static(void *addr, const struct debug_obj_descr *descr,
		     struct odebug_bucket **bp, enum miss *miss, struct stack_note *note,
		     bool *made)
{
	struct odebug_bucket *b = lock_bucket(addr);
	struct odebug_tracker *t = odebug_lookup(b, (uintptr_t)addr);

	*made = false;
	while (!t) {
		unlock_bucket(b);
		odebug_pool_fill();
		odebug_stack_prepare();
		b = lock_bucket(addr);
		t = lookup_or_alloc(b, addr, descr, false, true, miss, note, made);
		if (t)
			break;
		unlock_bucket(b);
		if (*miss == MISS_UNTRACKED || !handle_miss(*miss))
			return NULL;
		b = lock_bucket(addr);
		t = odebug_lookup(b, (uintptr_t)addr);
	}
	*bp = b;
	return t;
}

static void object_init(void *addr, const struct debug_obj_descr *descr,
			bool onstack)
{
	struct stack_note note = { false, false, 0 };
	struct odebug_bucket *b;
	struct odebug_tracker *t;
	enum miss miss;
	enum debug_obj_state state;
	uint32_t origin = 0;
	uint64_t w;
	bool made = false;

	odebug_pool_fill();
	odebug_stack_prepare();
	if (unlikely(odebug_opt.origins))
		origin = odebug_origin_here();
retry:
	b = lock_bucket(addr);
	t = lookup_or_alloc(b, addr, descr, onstack, false, &miss, &note, &made);
	if (!t) {
		unlock_bucket(b);
		if (handle_miss(miss))
			goto retry;
		return;
	}
	if (made) {	/* made INIT: a lockless activate may have moved it on since */
		odebug_tracker_set_origin(t, ODEBUG_ORIGIN_INIT, origin);
		unlock_bucket(b);
		print_note(addr, &note);
		return;
	}
again:
	switch ((state = odebug_tracker_read(t, &w))) {
	case ODEBUG_STATE_NONE:
	case ODEBUG_STATE_INIT:
	case ODEBUG_STATE_INACTIVE:
		if (!odebug_tracker_move(t, w, ODEBUG_STATE_INIT))
			goto again;
		odebug_tracker_set_origin(t, ODEBUG_ORIGIN_INIT, origin);
		unlock_bucket(b);
		print_note(addr, &note);
		return;
	case ODEBUG_STATE_ACTIVE:
		odebug_misuse_unlock(b, t, state, "init", descr->fixup_init, addr);
		return;
	case ODEBUG_STATE_NOTAVAILABLE:	/* a lockless free since the lookup: revive it */
		unlock_bucket(b);
		goto retry;
	default:	/* DESTROYED */
		odebug_misuse_unlock(b, t, state, "init", NULL, addr);
		return;
	}
}

/**
 * debug_object_init - debug checks when an object is initialised
 * @addr:	address of the object
 * @descr:	pointer to an object specific debug description structure
 *
 * Tracks an untracked object in state INIT.  Re-initialising an ACTIVE
 * object is reported and fixup_init(ACTIVE) is called; a DESTROYED one is
 * reported.
 */
ODEBUG_EXPORT void debug_object_init(void *addr, const struct debug_obj_descr *descr)
{
	if (!odebug_on() || bad_call(addr, descr, "debug_object_init"))
		return;
	odebug_check_returned();
	object_init(addr, descr, false);
}

/**
 * debug_object_init_on_stack - debug checks when an object on the stack
 * is initialised
 * @addr:	address of the object
 * @descr:	pointer to an object specific debug description structure
 *
 * As debug_object_init; the object must be released with
 * debug_object_free() before its function returns.  When this thread
 * exits, its stack is checked for objects still active.
 */
ODEBUG_EXPORT void debug_object_init_on_stack(void *addr,
					      const struct debug_obj_descr *descr)
{
	if (!odebug_on() || bad_call(addr, descr, "debug_object_init_on_stack"))
		return;
	odebug_check_returned();
	object_init(addr, descr, true);
	odebug_stack_mark((uintptr_t)addr);
	odebug_stack_watch_exit();
}

/* Is @addr tracked now?  For the seed-style static object path. */
static bool tracked(void *addr)
{
	struct odebug_bucket *b = lock_bucket(addr);
	bool found = odebug_lookup(b, (uintptr_t)addr) != NULL;

	unlock_bucket(b);
	return found;
}

/*
 * The lockless activate (table.c's header): INIT or INACTIVE to ACTIVE by
 * one compare-and-swap, or an ACTIVE object re-armed.  False leaves the
 * call to the locked path: not found, NONE (a tracker being made), a
 * misuse, or the word changed under us.  Not with origins=1, whose stack
 * ids are written under the bucket lock.
 */
static inline bool fast_activate(void *addr, bool rearm)
{
	struct odebug_tracker *t;
	uint64_t w;

	if (unlikely(odebug_opt.origins))
		return false;
	t = odebug_peek((uintptr_t)addr, &w);
	if (!t)
		return false;
	switch (odebug_word_state(w)) {
	case ODEBUG_STATE_INIT:
	case ODEBUG_STATE_INACTIVE:
		return odebug_tracker_move(t, w, ODEBUG_STATE_ACTIVE);
	case ODEBUG_STATE_ACTIVE:
		return rearm;
	default:
		return false;
	}
}

/*
 * The locked activate: out of line, so that the lockless one's frame
 * saves no registers.
 */
static __attribute__((noinline)) int
activate_slow(void *addr, const struct debug_obj_descr *descr, bool rearm)
{
	struct stack_note note = { false, false, 0 };
	struct odebug_bucket *b;
	struct odebug_tracker *t;
	enum debug_obj_state state;
	enum miss miss;
	uint32_t origin = 0;
	uint64_t w;
	bool fixed, made;

	if (unlikely(odebug_opt.origins))
		origin = odebug_origin_here();
restart:
	t = find_or_alloc_static(addr, descr, &b, &miss, &note, &made);
	if (t) {
		/* A static object is initialised, as far as we know, where it is first used. */
		if (made)
			odebug_tracker_set_origin(t, ODEBUG_ORIGIN_INIT, origin);
again:
		switch ((state = odebug_tracker_read(t, &w))) {
		case ODEBUG_STATE_INIT:
		case ODEBUG_STATE_INACTIVE:
			if (!odebug_tracker_move(t, w, ODEBUG_STATE_ACTIVE))
				goto again;
			odebug_tracker_set_origin(t, ODEBUG_ORIGIN_ACTIVATE, origin);
			/* fall through */
		case ODEBUG_STATE_NONE:
			unlock_bucket(b);
			print_note(addr, &note);
			return 0;
		case ODEBUG_STATE_ACTIVE:
			if (rearm) {
				odebug_tracker_set_origin(t, ODEBUG_ORIGIN_ACTIVATE, origin);
				unlock_bucket(b);
				return 0;
			}
			return odebug_misuse_unlock(b, t, state, "activate", descr->fixup_activate, addr) ? 0 : -EINVAL;
		case ODEBUG_STATE_NOTAVAILABLE:	/* a lockless free since the lookup */
			unlock_bucket(b);
			goto restart;
		default:	/* DESTROYED */
			odebug_misuse_unlock(b, t, state, "activate", NULL, addr);
			return -EINVAL;
		}
	}
	if (miss != MISS_UNTRACKED)
		return 0;
	/*
	 * Seed-style descriptor: without is_static_object, fixup_activate
	 * (NOTAVAILABLE) recognises a statically initialised object and
	 * tracks it itself.  Report only if it did not.
	 */
	if (!descr->is_static_object && descr->fixup_activate) {
		fixed = odebug_fixup(descr->fixup_activate, addr, ODEBUG_STATE_NOTAVAILABLE);
		if (tracked(addr))
			return 0;
		report_untracked(addr, descr, "activate", NULL);
		return fixed ? 0 : -EINVAL;
	}
	return report_untracked(addr, descr, "activate", descr->fixup_activate) ? 0 : -EINVAL;
}

/* activate, and with @rearm, "re-arm": an ACTIVE object stays so, silently. */
static inline __attribute__((always_inline)) int
activate(void *addr, const struct debug_obj_descr *descr, bool rearm)
{
	if (!odebug_on())
		return 0;
	if (bad_call(addr, descr, rearm ? "debug_object_rearm" : "debug_object_activate"))
		return -EINVAL;
	odebug_check_returned();
	if (likely(fast_activate(addr, rearm)))
		return 0;
	return activate_slow(addr, descr, rearm);
}

/**
 * debug_object_activate - debug checks when an object is activated
 * @addr:	address of the object
 * @descr:	pointer to an object specific debug description structure
 *
 * Returns 0 for success, -EINVAL for check failed (or, when enabled, for
 * a NULL object or descriptor).  Disabled, it always returns 0.
 */
ODEBUG_EXPORT int debug_object_activate(void *addr, const struct debug_obj_descr *descr)
{
	return activate(addr, descr, false);
}

/**
 * debug_object_rearm - activate, accepting an object already active
 * @addr:	address of the object
 * @descr:	pointer to an object specific debug description structure
 *
 * For APIs where arming an armed object is legal (re-adding a pending
 * event, re-arming a timer): an ACTIVE object stays ACTIVE without a
 * report, its activation origin updated; in one locked step, unlike
 * get_state followed by activate.  Everything else is as
 * debug_object_activate.
 */
ODEBUG_EXPORT int debug_object_rearm(void *addr, const struct debug_obj_descr *descr)
{
	return activate(addr, descr, true);
}

/* The locked deactivate, out of line (see activate_slow()). */
static __attribute__((noinline)) void
deactivate_slow(void *addr, const struct debug_obj_descr *descr)
{
	enum debug_obj_state state;
	struct odebug_bucket *b;
	struct odebug_tracker *t;
	uint64_t w;

	b = lock_bucket(addr);
	t = odebug_lookup(b, (uintptr_t)addr);
again:
	switch ((state = odebug_tracker_read(t, &w))) {
	case ODEBUG_STATE_INIT:
	case ODEBUG_STATE_INACTIVE:
	case ODEBUG_STATE_ACTIVE:
		if (t->astate)
			break;
		if (!odebug_tracker_move(t, w, ODEBUG_STATE_INACTIVE))
			goto again;
		/* fall through */
	case ODEBUG_STATE_NONE:
		unlock_bucket(b);
		return;
	case ODEBUG_STATE_NOTAVAILABLE:
		unlock_bucket(b);
		report_untracked(addr, descr, "deactivate", NULL);
		return;
	default:	/* DESTROYED */
		break;
	}
	odebug_misuse_unlock(b, t, state, "deactivate", NULL, addr);
}

/**
 * debug_object_deactivate - debug checks when an object is deactivated
 * @addr:	address of the object
 * @descr:	pointer to an object specific debug description structure
 *
 * Refused (reported) while the active state is not 0, for a DESTROYED
 * object and for an untracked one.  Never calls a fixup.
 */
/*
 * The lockless deactivate: INIT or ACTIVE to INACTIVE by one
 * compare-and-swap, INACTIVE left so; only while astate is 0, which the
 * compared word's busy bit says.  False leaves the call to the locked path.
 */
static inline bool fast_deactivate(void *addr)
{
	struct odebug_tracker *t;
	uint64_t w;

	t = odebug_peek((uintptr_t)addr, &w);
	if (!t || odebug_word_busy(w))
		return false;
	switch (odebug_word_state(w)) {
	case ODEBUG_STATE_INACTIVE:
		return true;
	case ODEBUG_STATE_INIT:
	case ODEBUG_STATE_ACTIVE:
		return odebug_tracker_move(t, w, ODEBUG_STATE_INACTIVE);
	default:
		return false;
	}
}

ODEBUG_EXPORT void debug_object_deactivate(void *addr, const struct debug_obj_descr *descr)
{
	if (!odebug_on() || bad_call(addr, descr, "debug_object_deactivate"))
		return;
	odebug_check_returned();
	if (likely(fast_deactivate(addr)))
		return;
	deactivate_slow(addr, descr);
}

/**
 * debug_object_destroy - debug checks when an object is destroyed
 * @addr:	address of the object
 * @descr:	pointer to an object specific debug description structure
 *
 * Marks the object DESTROYED; any later use but debug_object_free is
 * reported.  Destroying an ACTIVE object calls fixup_destroy(ACTIVE).
 */
ODEBUG_EXPORT void debug_object_destroy(void *addr, const struct debug_obj_descr *descr)
{
	enum debug_obj_state state;
	struct odebug_bucket *b;
	struct odebug_tracker *t;
	uint64_t w;

	if (!odebug_on() || bad_call(addr, descr, "debug_object_destroy"))
		return;
	odebug_check_returned();
	b = lock_bucket(addr);
	t = odebug_lookup(b, (uintptr_t)addr);
again:
	switch ((state = odebug_tracker_read(t, &w))) {
	case ODEBUG_STATE_NONE:
	case ODEBUG_STATE_INIT:
	case ODEBUG_STATE_INACTIVE:
		if (!odebug_tracker_move(t, w, ODEBUG_STATE_DESTROYED))
			goto again;
		unlock_bucket(b);
		return;
	case ODEBUG_STATE_ACTIVE:
		odebug_misuse_unlock(b, t, state, "destroy", descr->fixup_destroy, addr);
		return;
	case ODEBUG_STATE_NOTAVAILABLE:
		unlock_bucket(b);
		return;
	default:	/* DESTROYED */
		odebug_misuse_unlock(b, t, state, "destroy", NULL, addr);
		return;
	}
}


/**
 * debug_object_assert_init - debug checks when an object should be
 * initialised
 * @addr:	address of the object
 * @descr:	pointer to an object specific debug description structure
 *
 * Silent for a tracked object in any state; tracks a static object in
 * INIT; reports an untracked one and calls fixup_assert_init(NOTAVAILABLE).
 */
ODEBUG_EXPORT void debug_object_assert_init(void *addr, const struct debug_obj_descr *descr)
{
	struct stack_note note = { false, false, 0 };
	struct odebug_bucket *b;
	struct odebug_tracker *t;
	enum miss miss;
	bool made;

	if (!odebug_on() || bad_call(addr, descr, "debug_object_assert_init"))
		return;
	odebug_check_returned();
	t = find_or_alloc_static(addr, descr, &b, &miss, &note, &made);
	if (t) {
		unlock_bucket(b);
		print_note(addr, &note);
		return;
	}
	if (miss != MISS_UNTRACKED)
		return;
	report_untracked(addr, descr, "assert_init", descr->fixup_assert_init);
}

/**
 * debug_object_active_state - debug checks object usage state machine
 * @addr:	address of the object
 * @descr:	pointer to an object specific debug description structure
 * @expect:	expected active state
 * @next:	state to move to if expected state is found
 *
 * The active state is a sub-state of ACTIVE, 0 after the tracker is made;
 * it must be back at 0 before the object can be deactivated.
 */
ODEBUG_EXPORT void debug_object_active_state(void *addr,
					     const struct debug_obj_descr *descr,
					     unsigned int expect, unsigned int next)
{
	enum debug_obj_state state;
	struct odebug_bucket *b;
	struct odebug_tracker *t;
	uint64_t w;

	if (!odebug_on() || bad_call(addr, descr, "debug_object_active_state"))
		return;
	odebug_check_returned();
	b = lock_bucket(addr);
	t = odebug_lookup(b, (uintptr_t)addr);
again:
	state = odebug_tracker_read(t, &w);
	if (state == ODEBUG_STATE_NOTAVAILABLE) {
		unlock_bucket(b);
		report_untracked(addr, descr, "active_state", NULL);
		return;
	}
	if (state == ODEBUG_STATE_ACTIVE && t->astate == expect) {
		/* The busy bit first: a lockless deactivate compares it. */
		if (!odebug_tracker_move_busy(t, w, ODEBUG_STATE_ACTIVE, next))
			goto again;
		t->astate = next;
		unlock_bucket(b);
		return;
	}
	odebug_misuse_unlock(b, t, state, "active_state", NULL, addr);
}

/**
 * debug_object_get_state - the tracked state of the object at @addr
 * @addr:	address of the object
 *
 * Returns ODEBUG_STATE_NOTAVAILABLE when the object is not tracked or
 * libodebug is disabled.
 */
ODEBUG_EXPORT enum debug_obj_state debug_object_get_state(const void *addr)
{
	enum debug_obj_state state = ODEBUG_STATE_NOTAVAILABLE;
	struct odebug_bucket *b;
	uint64_t w;

	if (!odebug_on())
		return state;
	b = lock_bucket(addr);
	state = odebug_tracker_read(odebug_lookup(b, (uintptr_t)addr), &w);
	unlock_bucket(b);
	return state;
}
