/* SPDX-License-Identifier: MIT */
/*
 * init.c - the ODEBUG switch, the re-entry guard and process setup.
 *
 * ODEBUG=1 enables libodebug; unset, empty or 0 leaves it off, and then
 * every entry point returns after one predictable branch.  The constructor
 * decides; an API call that comes first (another library's constructor)
 * decides lazily.  The interposed release functions never initialise: until
 * we are on, nothing is tracked and there is nothing to check.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <string.h>

#include "builtin.h"
#include "internal.h"

int odebug_mode = ODEBUG_MODE_UNINIT;

/*
 * Set while this thread holds one of our locks, unwinds, symbolises or maps
 * memory, and from fork()'s prepare to its parent/child handlers.  A free()
 * or API call made under it (from libunwind, dladdr, a signal handler) goes
 * straight through.  Initial-exec: a dynamic TLS access may itself malloc.
 */
ODEBUG_TLS int odebug_guard;

void odebug_disable(void)
{
	__atomic_store_n(&odebug_mode, ODEBUG_MODE_OFF, __ATOMIC_RELEASE);
}

/* Lock order: report, buckets, pool (in table.c), depot. */
static void fork_prepare(void)
{
	odebug_guard_enter();
	odebug_report_lock();
	odebug_table_lock_all();
	odebug_depot_lock();
}

static void fork_parent(void)
{
	odebug_depot_unlock();
	odebug_table_unlock_all();
	odebug_report_unlock();
	odebug_guard_exit();
}

static void fork_child(void)
{
	odebug_depot_unlock();
	odebug_table_unlock_all();
	odebug_report_child();
	odebug_group_child();
	odebug_guard_exit();
}

/* ODEBUG: "1" on; unset, "" or "0" off; anything else off with a warning. */
static bool wanted(void)
{
	const char *v = odebug_getenv("ODEBUG");

	if (!v || !*v || !strcmp(v, "0"))
		return false;
	if (!strcmp(v, "1"))
		return true;
	odebug_message("ODEBUG='", v, "' is not 0 or 1; libodebug stays disabled",
		       (char *)NULL);
	return false;
}

static enum odebug_mode setup(void)
{
	if (!wanted())
		return ODEBUG_MODE_OFF;
	odebug_options_parse(odebug_getenv("ODEBUG_OPTIONS"));
	if (odebug_opt.help)
		odebug_options_help();
	odebug_guard_enter();
	if (!odebug_table_init() || !odebug_pool_init() ||
	    (odebug_opt.origins && !odebug_depot_init())) {
		/* Nothing mapped stays behind (each init undoes its own). */
		odebug_pool_fini();
		odebug_table_fini();
		odebug_guard_exit();
		odebug_message("Out of memory. ODEBUG disabled", (char *)NULL);
		return ODEBUG_MODE_OFF;
	}
	odebug_backtrace_init();
	odebug_stack_init();
	odebug_suppress_init();
	odebug_report_init();
	odebug_builtin_init();
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	odebug_guard_exit();

	__atomic_store_n(&odebug_mode, ODEBUG_MODE_ON, __ATOMIC_RELEASE);
	if (odebug_opt.selftest && !odebug_selftest())
		return ODEBUG_MODE_OFF;
	return ODEBUG_MODE_ON;
}

/*
 * Decide once.  A second thread waits for the first; the initialising
 * thread itself (re-entering through the selftest or a free() made by
 * dlopen) sees the mode as it stands.
 */
bool odebug_enable_slow(void)
{
	static int state;	/* 0 idle, 1 running, 2 done */
	static int owner;
	int expected = 0;

	if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) == 2)
		return __atomic_load_n(&odebug_mode, __ATOMIC_ACQUIRE) == ODEBUG_MODE_ON;
	if (__atomic_compare_exchange_n(&state, &expected, 1, false,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		owner = odebug_gettid();
		__atomic_store_n(&odebug_mode, setup(), __ATOMIC_RELEASE);
		__atomic_store_n(&state, 2, __ATOMIC_RELEASE);
	} else if (expected == 1 && owner == odebug_gettid()) {
		return odebug_load(&odebug_mode) == ODEBUG_MODE_ON;
	} else {
		while (__atomic_load_n(&state, __ATOMIC_ACQUIRE) != 2)
			sched_yield();
	}
	return __atomic_load_n(&odebug_mode, __ATOMIC_ACQUIRE) == ODEBUG_MODE_ON;
}

__attribute__((constructor)) static void odebug_constructor(void)
{
	odebug_enable_slow();
}

/*
 * The exit-time options (report_active_at_exit, print_stats, exitcode).
 * Nothing is torn down: other destructors still free() after us.
 */
__attribute__((destructor)) static void odebug_destructor(void)
{
	if (odebug_load(&odebug_mode) != ODEBUG_MODE_UNINIT && odebug_guard == 0)
		odebug_report_at_exit();
}

/**
 * debug_objects_enabled - is libodebug tracking objects?
 *
 * False when ODEBUG is not 1, when the selftest failed and after an
 * out-of-memory switch-off.
 */
ODEBUG_EXPORT bool debug_objects_enabled(void)
{
	return odebug_enable_slow();
}
