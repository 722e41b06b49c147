/* SPDX-License-Identifier: MIT */
/*
 * held-sigstack.c - the kernel holds a thread's alternate signal stack
 * (sigaltstack) until SS_DISABLE, another sigaltstack, or the thread's
 * exit, and runs handlers (SA_ONSTACK) on it whenever a signal comes.
 * Memory freed while installed is "free active" of type sigaltstack.
 *
 * The kernel is asked before a report: the calling thread's own stack
 * by sigaltstack(NULL, &cur); another thread's only by whether it is
 * still alive (tgkill with signal 0; a main thread that left by
 * pthread_exit() is a zombie, which runs no handler again), since no
 * call reads another thread's signal stack.  The fixup disables the stack (SS_DISABLE) when
 * the thread that frees it is the one it belongs to and is not running on
 * it; for another thread's there is nothing safe to do: a report only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <unistd.h>

#include "builtin.h"
#include "held-ext.h"

int (*odebug_held_sigaltstack_call)(const stack_t *ss, stack_t *old);

/*
 * A signal stack inside this thread's own stack is checked only when its
 * frames go, mostly at the thread's exit, where the kernel drops it:
 * not held then (a frame that returns with it installed is missed).
 */
static bool live(const struct odebug_xhold *h)
{
	uintptr_t base;
	stack_t cur;
	int saved = errno, r;

	if (h->tid != odebug_builtin_self_tid())
		return odebug_glibc_thread_alive(h->tid);
	if (odebug_on_stack(h->addr, &base))
		return false;
	if (!odebug_held_sigaltstack_call)
		return true;
	r = odebug_held_sigaltstack_call(NULL, &cur);
	errno = saved;
	return r == 0 && !(cur.ss_flags & SS_DISABLE) && (uintptr_t)cur.ss_sp == h->addr;
}

static void describe(const struct odebug_xhold *h, struct odebug_buf *b)
{
	odebug_puts(b, "sigaltstack of thread ");
	odebug_put_dec(b, (unsigned long)h->tid);
	odebug_puts(b, h->tid == odebug_builtin_self_tid() ? " (this thread)" : " (another thread)");
}

static bool fixup(const struct odebug_xhold *h)
{
	stack_t off = { .ss_flags = SS_DISABLE };
	int saved = errno, r;

	if (h->tid != odebug_builtin_self_tid() || !odebug_held_sigaltstack_call)
		return false;
	r = odebug_held_sigaltstack_call(&off, NULL);	/* EPERM while running on it */
	errno = saved;
	return r == 0;
}

const struct debug_obj_descr odebug_sigstack_descr = {
	.name = "sigaltstack",
	.is_static_object = odebug_held_any_value,
	.fixup_free = odebug_held_ext_fixup,
};

const struct odebug_held_ext_ops odebug_held_sigstack_ops = {
	&odebug_sigstack_descr, live, describe, fixup, NULL,
};

/* After a successful sigaltstack(@ss, ...) with @ss not NULL, on this thread. */
void odebug_held_sigstack_set(const stack_t *ss)
{
	int self = odebug_builtin_self_tid();

	if (!(ss->ss_flags & SS_DISABLE) && odebug_held_pointer((uintptr_t)ss->ss_sp))
		odebug_xhold_set(ODEBUG_HELD_SIGSTACK, 0, self, (uintptr_t)ss->ss_sp,
				 ss->ss_size, 0);
	else if (odebug_load(&odebug_hold_count[ODEBUG_HELD_SIGSTACK]))
		odebug_xhold_end(ODEBUG_HELD_SIGSTACK, 0, self);
}

/*
 * This thread's start routine returned (preload/pthread-create.c): the
 * exit that follows drops its signal stack in the kernel.  Its record
 * goes now, before its thread id can be another thread's (a live thread
 * of that id would confirm it), and so that threads that never disable
 * their stack leave no record each.
 */
void odebug_held_sigstack_thread_end(void)
{
	if (odebug_load(&odebug_hold_count[ODEBUG_HELD_SIGSTACK]) && odebug_held_live())
		odebug_xhold_end(ODEBUG_HELD_SIGSTACK, 0, odebug_builtin_self_tid());
}
