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
#include <pthread.h>
#include <unistd.h>

#include "internal.h"


/* This thread's stack, looked up once (stack_hi == 1: unknown). */
static ODEBUG_TLS uintptr_t stack_lo, stack_hi;
static ODEBUG_TLS int exit_watched;
static pthread_key_t exit_key;
static bool exit_key_ok;

static void check_stack_at_exit(void *arg)
{
	(void)arg;
	if (stack_hi > stack_lo)
		debug_check_no_obj_freed((void *)stack_lo, stack_hi - stack_lo);
}

void odebug_stack_init(void)
{
	exit_key_ok = pthread_key_create(&exit_key, check_stack_at_exit) == 0;
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
	stack_hi = 1;
	odebug_guard_enter();
	if (!pthread_getattr_np(pthread_self(), &attr)) {
		if (!pthread_attr_getstack(&attr, &addr, &size)) {
			stack_lo = (uintptr_t)addr;
			stack_hi = (uintptr_t)addr + size;
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
	return addr >= stack_lo && addr < stack_hi;
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
