/* SPDX-License-Identifier: MIT */
/*
 * returned.c - what is left on a stack when its frames return or its
 * thread exits.
 *
 * glibc caches the stacks of exited threads instead of unmapping them, so
 * no munmap() ever tells us an on-stack object died with its thread.  A
 * thread that annotates an on-stack object gets a key destructor that runs
 * the free check over its whole stack at exit.  The main thread's stack
 * lives as long as the process and is out of scope.  Objects of frames
 * that returned are found by the next call into libodebug from above them.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "core.h"

static ODEBUG_TLS int exit_watched;
static pthread_key_t exit_key;
static bool exit_key_ok;

/*
 * The objects left here died when their functions returned, maybe long
 * ago, and the bytes are someone else's since: report from the trackers
 * only, never call the descriptor on them (odebug_check_range_dead()).
 */
static void check_stack_at_exit(void *arg)
{
	(void)arg;
	if (odebug_stack_top() > odebug_tls.stack_lo && odebug_on() && odebug_opt.check_free) {
		odebug_check_range_dead(odebug_tls.stack_lo, odebug_stack_top());
		odebug_checkers_thread_exited();	/* its joiner may still need it */
	}
}

/* From the constructor: the key whose destructor checks a thread's stack at its exit. */
void odebug_returned_init(void)
{
	exit_key_ok = pthread_key_create(&exit_key, check_stack_at_exit) == 0;
}

/* Arrange the exit check for this thread (not the main thread). */
void odebug_stack_watch_exit(void)
{
	if (likely(exit_watched) || !exit_key_ok)
		return;
	exit_watched = 1;
	if (odebug_gettid() == getpid())
		return;
	odebug_guard_enter();
	pthread_setspecific(exit_key, (void *)1);
	odebug_guard_exit();
}

/*
 * A tracker below the caller's stack pointer belongs to a frame that has
 * returned: its memory may be overwritten already, so it is reported from
 * the tracker alone (no hint, no fixup) and dropped; inactive ones, and
 * held memory whose holder let go, go silently.
 */
static bool describe_gone(struct odebug_snapshot *o, void *arg)
{
	(void)arg;
	o->flags = ODEBUG_SNAP_FRAME_GONE;
	/* Reported only if its holder still holds it (a thread's own stack, held memory). */
	return !odebug_checkers_released(o);
}

/**
 * odebug_stack_check_returned - on-stack objects of frames that returned
 * @sp:	the stack pointer of the caller of libodebug (an address in the
 *	frame of our entry point will do: nothing of the caller's lies below)
 *
 * Called when @sp is above odebug_tls.onstack_low.  Objects below @sp on this
 * thread's stack are in frames that are gone, unless the caller is not
 * running on this thread's stack at all (a coroutine stack, or a signal
 * handler on an alternate stack): then every frame of the thread's stack
 * is suspended, not gone, and nothing is checked.
 */
void odebug_stack_check_returned(uintptr_t sp)
{
	uintptr_t lo = odebug_tls.onstack_low;
	stack_t ss;

	if (sp <= odebug_tls.stack_lo || sp > odebug_stack_top())
		return;			/* another stack: frames are suspended */
	if (lo < odebug_tls.stack_lo)
		lo = odebug_tls.stack_lo;
	if (!odebug_range_may_hold(lo, sp)) {
		odebug_onstack_set(sp);	/* freed before it returned */
		return;
	}
	odebug_guard_enter();
	if (sigaltstack(NULL, &ss) == 0 && (ss.ss_flags & SS_ONSTACK)) {
		odebug_guard_exit();
		return;			/* an alternate stack carved from this one */
	}
	odebug_guard_exit();
	/* Before reporting: a signal handler's call below sp must not rescan. */
	odebug_onstack_set(sp);
	odebug_drop_range(lo, sp, describe_gone, NULL);
}
