/* SPDX-License-Identifier: MIT */
/*
 * held-tstack.c - a thread created with a stack of the program's
 * (pthread_attr_setstack) runs on it, and glibc keeps the thread's own
 * descriptor at its top, which pthread_join reads.  Memory freed while
 * that thread lives is "free active" of type thread_stack.  No fixup: a
 * running thread's stack cannot be taken from it; a report only.
 *
 * The record is made by the new thread itself (preload/pthread-create.c
 * passes the attribute's stack to its start), with its kernel thread id;
 * before a report the kernel is asked whether that thread is still alive
 * (tgkill with signal 0).  A thread that exited but is not yet joined
 * counts as gone: pthread_join is not interposed, so a stack freed
 * between the exit and the join is not reported (missed, never false).
 *
 * The same records, family ODEBUG_HELD_THREAD, name the start routine of
 * every thread that runs one (held-module.c asks at dlclose).
 */
#define _GNU_SOURCE
#include <pthread.h>

#include "builtin.h"
#include "held-ext.h"


/*
 * The thread itself asks only from its exit (lib/stack.c checks an
 * exiting thread's stack as freed): that is the end of its hold.
 */
static bool live(const struct odebug_xhold *h)
{
	return h->tid != odebug_b_self() && odebug_held_thread_alive(h->tid);
}

static void describe(const struct odebug_xhold *h, struct odebug_buf *b)
{
	odebug_puts(b, "stack of thread ");
	odebug_put_dec(b, (unsigned long)h->tid);
	odebug_puts(b, ", running");
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
	&odebug_tstack_descr, live, describe, fixup,
};

/*
 * In a new thread, before its start routine: the routine runs (until it
 * returns), and the program's stack, if it gave one, is held.  Records of
 * the same stack by threads now gone end first (a pool that gives one
 * stack to thread after thread leaves no record behind).
 */
void odebug_held_thread_begin(uintptr_t routine, void *stack, size_t size)
{
	struct odebug_xhold c[8];
	unsigned int n, i, skip = 0;
	int self;

	if (!odebug_held_active())
		return;
	self = odebug_b_self();
	/* A record only (no held memory): its address is a marker, not the routine's. */
	odebug_xhold_set(ODEBUG_HELD_THREAD, (uintptr_t)pthread_self(), self, 1, 0, routine);
	if (!odebug_held_pointer((uintptr_t)stack) || !size)
		return;
	while ((n = odebug_xhold_list(ODEBUG_HELD_TSTACK, (uintptr_t)stack, c, 8, skip))) {
		for (i = 0; i < n; i++)
			if (!odebug_xhold_current(&c[i]) || !live(&c[i]))
				odebug_xhold_end(ODEBUG_HELD_TSTACK, 0, c[i].tid);
			else
				skip++;
	}
	odebug_xhold_set(ODEBUG_HELD_TSTACK, 0, self, (uintptr_t)stack, size, routine);
}

/* The start routine returned: the stack stays held until the thread is gone. */
void odebug_held_thread_end(void)
{
	if (odebug_load(&odebug_xhold_count[ODEBUG_HELD_THREAD]) && odebug_held_live())
		odebug_xhold_end(ODEBUG_HELD_THREAD, (uintptr_t)pthread_self(), odebug_b_self());
}
