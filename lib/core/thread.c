/* SPDX-License-Identifier: MIT */
/*
 * thread.c - what a thread needs before it may report from anywhere.
 *
 * Two things are set up per thread on first use, and both may call
 * malloc(): the thread's stack bounds (pthread_getattr_np()) and, where
 * libunwind is loaded (origins=1, or no unwind.c), its thread-local state
 * (a dlopen'ed library's TLS block, which glibc allocates on the thread's
 * first access).  Inside a signal handler that interrupted malloc, that
 * is a deadlock on the arena lock.  So they are set up where allocating
 * is safe: in the thread that runs our constructor, and in every thread
 * pthread_create() or thrd_create() (which glibc implements without
 * calling pthread_create()) starts while libodebug is loaded, before its
 * start routine runs (preload/pthread-create.c).  The main thread's stack
 * is the start's to learn, without allocating (lib/table/stack.c).
 * A thread set up neither way (older than libodebug, or made with clone())
 * unwinds the slow way, without libunwind's TLS, and knows no
 * stack bounds but the main thread's: no on-stack checks there.
 */
#define _GNU_SOURCE

#include "core.h"

/*
 * In the new thread, before its start routine; in the thread that calls
 * pthread_create() (not from a signal handler: it is not async-signal
 * safe); and in the constructor.  The main thread's stack is learned by
 * the start, without allocating (lib/table/stack.c).
 */
void odebug_thread_begin(void)
{
	odebug_stack_learn();
	odebug_backtrace_thread_prepare();
}
