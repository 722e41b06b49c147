/* SPDX-License-Identifier: MIT */
/*
 * stack.c - thread stacks: where they are, and what is left on them when a
 * thread exits.
 *
 * glibc caches the stacks of exited threads instead of unmapping them, so
 * no munmap() ever tells us an on-stack object died with its thread.  A
 * thread that annotates an on-stack object gets a key destructor that runs
 * the free check over its whole stack at exit.  The main thread's stack
 * lives as long as the process and is out of scope.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "internal.h"


/*
 * This thread's stack mapping, looked up once (stack_hi == 1: unknown), and
 * the top of the stack proper within it (below the TLS).
 */
static ODEBUG_TLS uintptr_t stack_lo, stack_hi, stack_used_hi;
static ODEBUG_TLS int exit_watched;

/*
 * The lowest address on this thread's stack where an on-stack object may
 * still be tracked (UINTPTR_MAX: none).  A call into libodebug from a frame
 * above it may find objects of frames that have returned.
 */
ODEBUG_TLS uintptr_t odebug_onstack_low = UINTPTR_MAX;
static pthread_key_t exit_key;
static bool exit_key_ok;
static size_t static_tls_size;	/* glibc's, with the thread descriptor */
static size_t static_tls_align;

/*
 * The objects left here died when their functions returned, maybe long
 * ago, and the bytes are someone else's since: report from the trackers
 * only, never call the descriptor on them (odebug_check_range_dead()).
 */
static void check_stack_at_exit(void *arg)
{
	(void)arg;
	if (stack_hi > stack_lo && odebug_on() && odebug_opt.check_free)
		odebug_check_range_dead(stack_lo, stack_hi);
}

void odebug_stack_init(void)
{
	void (*info)(size_t *size, size_t *align);

	exit_key_ok = pthread_key_create(&exit_key, check_stack_at_exit) == 0;
	/* GLIBC_PRIVATE, as the sanitizers use it; without it, see below. */
	*(void **)&info = dlsym(RTLD_DEFAULT, "_dl_get_tls_static_info");
	if (info)
		info(&static_tls_size, &static_tls_align);
}

/*
 * glibc puts a thread's descriptor and static TLS (every __thread variable
 * of the modules loaded at start) at the top of its stack mapping, which
 * pthread_getattr_np() reports whole; the stack proper starts below them.
 * With TLS below the thread pointer (x86), glibc starts the stack at the
 * end of the descriptor minus the static TLS size (which counts the
 * descriptor), the descriptor ending less than the TLS alignment below the
 * mapping's top; without the size, below our own TLS, which excludes at
 * least the executable's.  With TLS above the pointer, the pointer itself.
 */
static uintptr_t stack_top(uintptr_t lo, uintptr_t hi)
{
	uintptr_t tp = (uintptr_t)pthread_self(), top = hi;

	if (tp < lo || tp >= hi)
		return hi;	/* the main thread: TLS lives elsewhere */
#if defined(__x86_64__) || defined(__i386__)
	if (static_tls_size && static_tls_size + static_tls_align < hi - lo)
		top = hi - static_tls_size - static_tls_align;
	else
		top = (uintptr_t)&stack_lo;
#else
	top = tp;
#endif
	return top > lo && top < hi ? top : hi;
}

/*
 * Look up this thread's stack bounds before any bucket lock is taken:
 * pthread_getattr_np() may allocate (and for the main thread reads
 * /proc/self/maps), so it runs under the guard and never under a lock.
 */
void odebug_stack_prepare(void)
{
	pthread_attr_t attr;
	void *addr;
	size_t size;

	if (likely(stack_hi))
		return;
	stack_lo = 0;
	stack_hi = stack_used_hi = 1;
	odebug_guard_enter();
	if (!pthread_getattr_np(pthread_self(), &attr)) {
		if (!pthread_attr_getstack(&attr, &addr, &size)) {
			stack_lo = (uintptr_t)addr;
			stack_hi = (uintptr_t)addr + size;
			stack_used_hi = stack_top(stack_lo, stack_hi);
		}
		pthread_attr_destroy(&attr);
	}
	odebug_guard_exit();
}

/* The top of this thread's stack, 0 or 1 until odebug_stack_prepare(). */
uintptr_t odebug_stack_top(void)
{
	return stack_hi;
}

/* Is @addr on the calling thread's stack?  *@base gets the stack's base. */
bool odebug_on_stack(uintptr_t addr, uintptr_t *base)
{
	*base = stack_lo;
	return addr >= stack_lo && addr < stack_used_hi;
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

/* debug_object_init_on_stack: an object at @addr, if on this stack. */
void odebug_stack_mark(uintptr_t addr)
{
	if (addr >= stack_lo && addr < stack_hi && addr < odebug_onstack_low)
		odebug_onstack_low = addr;
}

/*
 * A tracker below the caller's stack pointer belongs to a frame that has
 * returned: its memory may be overwritten already, so it is reported from
 * the tracker alone (no hint, no fixup) and dropped; inactive ones go
 * silently.
 */
static bool describe_gone(struct odebug_snapshot *o, void *arg)
{
	(void)arg;
	o->flags = ODEBUG_SNAP_FRAME_GONE;
	return true;
}

/**
 * odebug_stack_check_returned - on-stack objects of frames that returned
 * @sp:	the stack pointer of the caller of libodebug (an address in the
 *	frame of our entry point will do: nothing of the caller's lies below)
 *
 * Called when @sp is above odebug_onstack_low.  Objects below @sp on this
 * thread's stack are in frames that are gone, unless the caller is not
 * running on this thread's stack at all (a coroutine stack, or a signal
 * handler on an alternate stack): then every frame of the thread's stack
 * is suspended, not gone, and nothing is checked.
 */
void odebug_stack_check_returned(uintptr_t sp)
{
	uintptr_t lo = odebug_onstack_low;
	stack_t ss;

	if (sp <= stack_lo || sp > stack_hi)
		return;			/* another stack: frames are suspended */
	if (lo < stack_lo)
		lo = stack_lo;
	if (!odebug_range_may_hold(lo, sp)) {
		odebug_onstack_low = sp;	/* freed before it returned */
		return;
	}
	odebug_guard_enter();
	if (sigaltstack(NULL, &ss) == 0 && (ss.ss_flags & SS_ONSTACK)) {
		odebug_guard_exit();
		return;			/* an alternate stack carved from this one */
	}
	odebug_guard_exit();
	/* Before reporting: a signal handler's call below sp must not rescan. */
	odebug_onstack_low = sp;
	odebug_drop_range(lo, sp, describe_gone, NULL);
}
