/* SPDX-License-Identifier: MIT */
/*
 * mode.c - the ODEBUG switch as every layer reads it: the mode, this
 * thread's words (the re-entry guard), the word odebug.h's inline
 * functions test, and the lazy decide-then-start that the first call
 * runs.
 *
 * What deciding and starting do (options, the table, the selftest) is the
 * start layer's (lib/start/init.c), reached through the one starter it
 * places in the "odebug_starter" section: an API call can come before our
 * constructor (another library's constructor), and must decide then, so
 * the starter is found by the linker, not set by the constructor.
 */
#define _GNU_SOURCE
#include <sched.h>

#include "base.h"

/* The start layer's entry points (ODEBUG_STARTER()); none in a build without it. */
extern const struct odebug_starter *const __start_odebug_starter[]
	__attribute__((weak, visibility("hidden")));
extern const struct odebug_starter *const __stop_odebug_starter[]
	__attribute__((weak, visibility("hidden")));

static const struct odebug_starter *starter(void)
{
	const struct odebug_starter *const *first = __start_odebug_starter;

	return first < __stop_odebug_starter ? *first : NULL;
}

/*
 * No second thread of any kind exists (lib/table/tracker.h's unlocked
 * swap): set at the start and cleared before a clone by preload/clone.c,
 * false where that file is not built in.
 */
ODEBUG_HOT bool odebug_one_thread;

/* Set when preload/pthread-create.c is built in: threads are seen starting. */
bool odebug_thread_hook;

ODEBUG_HOT int odebug_mode = ODEBUG_MODE_UNINIT;

/*
 * The word odebug.h's inline functions test before calling in: 1 until we
 * are known to be off, then 0 for good.  Exported and written only here,
 * through the GOT: an executable built without -fPIE that reads it gets a
 * copy relocation, and the copy is the one callers see (tests/as-built/header/nopie.c).
 */
ODEBUG_EXPORT int __debug_objects_on = 1;

static void set_mode(enum odebug_mode mode)
{
	if (mode == ODEBUG_MODE_OFF)
		__atomic_store_n(&__debug_objects_on, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&odebug_mode, mode, __ATOMIC_RELEASE);
	if (starter())
		starter()->mode_changed(mode == ODEBUG_MODE_ON);
}

/*
 * This thread's words (base.h).  The guard: a free() or API call made
 * under it (from libunwind, dladdr, a signal handler) goes straight
 * through.  onstack_low: the lowest address on this thread's stack where
 * an on-stack object may still be tracked (UINTPTR_MAX: none); a call
 * into libodebug from a frame above it may find objects of frames that
 * have returned (returned.c).  Initial-exec: a dynamic TLS access may itself
 * malloc.
 */
ODEBUG_TLS struct odebug_tls odebug_tls = {
	.fast_sp = UINTPTR_MAX,
	.onstack_low = UINTPTR_MAX,
};

void odebug_disable(void)
{
	set_mode(ODEBUG_MODE_OFF);
}

/*
 * Starting is the second, lazy half of setup (see start()): one thread at a
 * time, and never across a fork(), or a child could inherit a start
 * half-done by a thread it does not have.
 */
static odebug_spinlock_t start_lock;
static int start_owner;
static bool selftesting;

/*
 * The start's selftest runs before the mode is ON for everyone: in this
 * thread only the calls go through, while other threads' first calls wait
 * for the start lock (its counters are put back afterwards, which would
 * lose their counts).
 */
bool odebug_selftesting(void)
{
	return __atomic_load_n(&selftesting, __ATOMIC_ACQUIRE) &&
	       __atomic_load_n(&start_owner, __ATOMIC_RELAXED) == odebug_gettid();
}

void odebug_start_lock(void)
{
	odebug_spin_lock(&start_lock);
}

void odebug_start_unlock(void)
{
	odebug_spin_unlock(&start_lock);
}

/* The start's selftest begins (true) or ends (false), in the starting thread. */
void odebug_selftesting_set(bool on)
{
	__atomic_store_n(&selftesting, on, __ATOMIC_RELEASE);
}

/*
 * Decide once, then start once.  A second thread waits for the first; the
 * thread deciding or starting (re-entering through the selftest or a
 * free() made by dlopen) sees the mode as it stands.
 */
bool odebug_enable_slow(void)
{
	static int state;	/* 0 idle, 1 running, 2 done */
	static int owner;
	int expected = 0;

	if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) == 2) {
		/* decided */
	} else if (__atomic_compare_exchange_n(&state, &expected, 1, false,
					       __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		owner = odebug_gettid();
		set_mode(starter() ? starter()->decide() : ODEBUG_MODE_OFF);
		__atomic_store_n(&state, 2, __ATOMIC_RELEASE);
	} else if (expected == 1 && owner == odebug_gettid()) {
		return odebug_load(&odebug_mode) == ODEBUG_MODE_ON;
	} else {
		while (__atomic_load_n(&state, __ATOMIC_ACQUIRE) != 2)
			sched_yield();
	}
	return __atomic_load_n(&odebug_mode, __ATOMIC_ACQUIRE) == ODEBUG_MODE_ON;
}

/* The first API call: start if decided on and not started yet. */
bool odebug_start_slow(void)
{
	int me;

	if (odebug_enable_slow())
		return true;
	/* Off, or still deciding (a re-entry from the constructor's thread). */
	if (__atomic_load_n(&odebug_mode, __ATOMIC_ACQUIRE) != ODEBUG_MODE_IDLE)
		return false;
	me = odebug_gettid();
	if (__atomic_load_n(&start_owner, __ATOMIC_RELAXED) == me)
		return odebug_selftesting();
	odebug_start_lock();
	if (__atomic_load_n(&odebug_mode, __ATOMIC_ACQUIRE) == ODEBUG_MODE_IDLE) {
		__atomic_store_n(&start_owner, me, __ATOMIC_RELAXED);
		set_mode(starter()->start());
		__atomic_store_n(&start_owner, 0, __ATOMIC_RELAXED);
	}
	odebug_start_unlock();
	return __atomic_load_n(&odebug_mode, __ATOMIC_ACQUIRE) == ODEBUG_MODE_ON;
}
