/* SPDX-License-Identifier: MIT */
/*
 * held-tstack.c - a thread created with a stack of the program's
 * (pthread_attr_setstack) runs on it, and glibc keeps the thread's own
 * descriptor at its top, which pthread_join reads.  Memory freed while
 * that thread lives is "free active" of type thread_stack.  No fixup: a
 * running thread's stack cannot be taken from it; a report only.
 *
 * Held until the thread is joined (pthread_join, pthread_tryjoin_np,
 * pthread_timedjoin_np, pthread_clockjoin_np succeeded: the join reads
 * the descriptor), or, for a detached thread, until it is gone (the
 * kernel says so: tgkill with signal 0); pthread_detach makes a thread
 * detached, so one that exited already holds nothing from then on.
 *
 * One record per thread, made by whichever comes first of its two
 * parties and completed by the other (odebug_xhold_meet): the creator
 * once pthread_create returned (so a pthread_detach right after it finds
 * the record) and the new thread before its start routine (its kernel
 * thread id).  Its tracker is never an on-stack object of the thread:
 * the block outlives every frame on it.  The thread's own exit check
 * (lib/table/stack.c checks an exiting thread's stack as dead memory) drops
 * the tracker without a report; a joinable thread's record stays, and
 * its tracker is made again once that check is done.
 *
 * The same records, family ODEBUG_HELD_THREAD, name the start routine of
 * every thread that runs one (held-module.c asks at dlclose).
 */
#define _GNU_SOURCE
#include <pthread.h>

#include "builtin.h"
#include "held-ext.h"


/*
 * Until joined, or gone once detached (a detached thread not yet begun
 * still holds).  The thread itself asks only from its exit check (its
 * stack seen as dead): not a holder of its own stack (keep() says whether
 * the record stays).
 */
static bool live(const struct odebug_xhold *h)
{
	if (h->tid && h->tid == odebug_builtin_self_tid())
		return false;
	if (!(h->flags & ODEBUG_TSTACK_DETACHED))
		return true;
	return !h->tid || odebug_glibc_thread_alive(h->tid);
}

/* A joinable thread's own exit check: its joiner still needs the stack. */
static bool keep(const struct odebug_xhold *h)
{
	return h->tid == odebug_builtin_self_tid() && !(h->flags & ODEBUG_TSTACK_DETACHED);
}

static void describe(const struct odebug_xhold *h, struct odebug_buf *b)
{
	if (!h->tid) {
		odebug_puts(b, "stack of a thread not yet started");
		return;
	}
	odebug_puts(b, "stack of thread ");
	odebug_put_dec(b, (unsigned long)h->tid);
	odebug_puts(b, odebug_glibc_thread_alive(h->tid) ? ", running" :
		    ", exited, not yet joined");
}

static bool fixup(const struct odebug_xhold *h)
{
	(void)h;
	return false;
}

const struct debug_obj_descr odebug_tstack_descr = {
	.name = "thread_stack",
	.is_static_object = odebug_held_any_value,
	.fixup_free = odebug_held_ext_fixup,
};

const struct odebug_held_ext_ops odebug_held_tstack_ops = {
	&odebug_tstack_descr, live, describe, fixup, keep,
};

/* Records of @stack by threads now gone end (a pool that gives one stack to thread after thread). */
static void end_gone(uintptr_t stack)
{
	struct odebug_xhold c[8];
	unsigned int n, i, skip = 0;

	while ((n = odebug_xhold_list(ODEBUG_HELD_TSTACK, stack, c, 8, skip))) {
		for (i = 0; i < n; i++)
			if (!odebug_xhold_current(&c[i]) || (c[i].tid && !live(&c[i])))
				odebug_xhold_end(ODEBUG_HELD_TSTACK, c[i].key, c[i].tid);
			else
				skip++;
	}
}

/* One party's part of thread @t's record (held-ext.h's odebug_xhold_meet). */
static void meet(uintptr_t t, int tid, void *stack, size_t size, bool detached, uint8_t side)
{
	struct odebug_xhold r = {
		.addr = (uintptr_t)stack, .len = size, .key = t, .tid = tid,
		.family = ODEBUG_HELD_TSTACK,
		.flags = detached ? ODEBUG_TSTACK_DETACHED : 0,
	};

	odebug_xhold_meet(&r, side);
}

/*
 * In a new thread, before its start routine: the routine runs (until it
 * returns), and the program's stack, if it gave one, is held.
 */
void odebug_held_thread_begin(uintptr_t routine, void *stack, size_t size, bool detached)
{
	int self;

	if (!odebug_held_active())
		return;
	self = odebug_builtin_self_tid();
	/* A record only (no held memory): its address is a marker, not the routine's. */
	odebug_xhold_set(ODEBUG_HELD_THREAD, (uintptr_t)pthread_self(), self, 1, 0, routine);
	if (!odebug_held_pointer((uintptr_t)stack) || !size)
		return;
	end_gone((uintptr_t)stack);
	meet((uintptr_t)pthread_self(), self, stack, size, detached, ODEBUG_TSTACK_THREAD);
}

/*
 * In the creator, pthread_create made @t on the program's @stack.  A
 * thread created detached has no joiner to race with its start: its own
 * record is the only one (a creator's record made after the thread had
 * gone would never end).
 */
void odebug_held_tstack_created(uintptr_t t, void *stack, size_t size, bool detached)
{
	if (detached || !odebug_held_pointer((uintptr_t)stack) || !size ||
	    !odebug_held_active())
		return;
	meet(t, 0, stack, size, detached, ODEBUG_TSTACK_CREATOR);
}

/* @t was joined: its stack is the program's again. */
void odebug_held_tstack_joined(uintptr_t t)
{
	struct odebug_xhold c[8];
	unsigned int n, i, skip = 0;

	if (!odebug_load(&odebug_hold_count[ODEBUG_HELD_TSTACK]) || !odebug_held_live())
		return;
	while ((n = odebug_xhold_list(ODEBUG_HELD_TSTACK, 0, c, 8, skip))) {
		for (i = 0; i < n; i++)
			if (c[i].key == t && !(c[i].flags & ODEBUG_TSTACK_DETACHED))
				odebug_xhold_end(ODEBUG_HELD_TSTACK, c[i].key, c[i].tid);
			else
				skip++;
	}
}

/* @t was detached: held until it is gone (at once, if it exited already). */
void odebug_held_tstack_detached(uintptr_t t)
{
	if (!odebug_load(&odebug_hold_count[ODEBUG_HELD_TSTACK]) || !odebug_held_live())
		return;
	odebug_xhold_mark(ODEBUG_HELD_TSTACK, t, ODEBUG_TSTACK_DETACHED, ODEBUG_TSTACK_DETACHED);
}

/*
 * After this thread's exit check dropped the tracker of its own stack
 * (keep() kept the record): a joinable thread's stack is held again.
 */
void odebug_held_tstack_exit_checked(void)
{
	struct odebug_xhold c[8];
	unsigned int n, i, skip = 0;
	uintptr_t self = (uintptr_t)pthread_self();

	if (!odebug_load(&odebug_hold_count[ODEBUG_HELD_TSTACK]) || !odebug_held_live())
		return;
	while ((n = odebug_xhold_list(ODEBUG_HELD_TSTACK, 0, c, 8, skip))) {
		skip += n;
		for (i = 0; i < n; i++)
			if (c[i].key == self && keep(&c[i]))
				odebug_xhold_settle(ODEBUG_HELD_TSTACK, c[i].addr);
	}
}

/* The start routine returned: the stack stays held until the thread is gone. */
void odebug_held_thread_end(void)
{
	if (odebug_load(&odebug_hold_count[ODEBUG_HELD_THREAD]) && odebug_held_live())
		odebug_xhold_end(ODEBUG_HELD_THREAD, (uintptr_t)pthread_self(), odebug_builtin_self_tid());
}

ODEBUG_CHECKER(held_tstack) = {
	.name = "thread stacks",
	.thread_exited = odebug_held_tstack_exit_checked,
};
