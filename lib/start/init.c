/* SPDX-License-Identifier: MIT */
/*
 * init.c - process setup: deciding, starting, fork and exit.
 *
 * ODEBUG=1 enables libodebug; unset, empty or 0 leaves it off, and then
 * every entry point returns after one predictable branch.  The constructor
 * decides and does all that needs the loader or malloc() (decide()); an API
 * call that comes first (another library's constructor) decides lazily.
 * The first API call starts (maps the table and the pool, runs the
 * selftest): until then the mode is IDLE.  The start makes no loader call
 * and no allocation, so it is safe from a signal handler and beside a
 * dlopen().  The interposed release functions never start: until an object
 * is tracked there is nothing to check.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

#include "held.h"
#include "modules.h"
#include "start.h"

/*
 * Started: the table, the pool and the depot exist (the fork handlers lock
 * them).  Decided on: the exit-time options apply, even after a switch-off.
 */
static bool started, decided_on;

/* Lock order: start, report, buckets, pool (in table.c), depot, the hold records. */
static void fork_prepare(void)
{
	odebug_guard_enter();
	odebug_start_lock();
	odebug_report_lock();
	if (started) {
		odebug_table_lock_all();
		odebug_depot_lock();
	}
	odebug_holds_fork_lock();
}

static void fork_parent(void)
{
	odebug_holds_fork_unlock();
	if (started) {
		odebug_depot_unlock();
		odebug_table_unlock_all();
	}
	odebug_report_unlock();
	odebug_start_unlock();
	odebug_guard_exit();
}

static void fork_child(void)
{
	odebug_holds_fork_unlock();
	if (started) {
		odebug_depot_unlock();
		odebug_table_unlock_all();
	}
	odebug_report_child();
	odebug_exit_child();
	odebug_group_child();
	odebug_start_unlock();
	odebug_guard_exit();
}

/*
 * ODEBUG: "1" on; unset, "" or "0" off; anything else off with a warning,
 * and so is ODEBUG_OPTIONS without ODEBUG.
 */
static bool wanted(void)
{
	const char *v = odebug_getenv("ODEBUG");
	char quoted[ODEBUG_QUOTE_LEN];

	if (!v || !*v) {
		/* Options without the switch check nothing: say so, once. */
		const char *o = odebug_getenv("ODEBUG_OPTIONS");

		if (o && *o)
			odebug_message("ODEBUG_OPTIONS is set but ODEBUG is not; libodebug stays "
				       "disabled (ODEBUG=1 enables it)", (char *)NULL);
		return false;
	}
	if (!strcmp(v, "0"))
		return false;
	if (!strcmp(v, "1"))
		return true;
	odebug_message("ODEBUG='", odebug_quote(quoted, v, strnlen(v, 65)),
		       "' is not 0 or 1; libodebug stays disabled", (char *)NULL);
	return false;
}

/*
 * The first half, in our constructor (under the loader's lock, where
 * loading and allocating are safe): decide, read the options (and say what
 * is wrong with them), read the suppressions, and do what needs the
 * loader or malloc() and is cheap: find libc's dlclose() and clone() in
 * their objects' own hash tables, create the thread keys, learn this
 * thread's stack when it is not the main one.  What is dear is left to
 * when it is needed: libunwind is loaded only with origins=1 (or where
 * unwind.c is not built: then here, and primed), the main thread's stack
 * is learned by the start without allocating.
 * preload/next.c then checks the free() binding: the mode is IDLE, decided
 * on.  Nothing here maps the table or the pool: a process that never
 * annotates an object (a shell, make, git under ODEBUG=1) pays for this
 * only, each step timed by bench-start --steps (BENCHMARKS.md).  An API
 * call made before our constructor (another library's constructor)
 * decides here too, on the loader's thread.
 */
static enum odebug_mode decide(void)
{
	if (!wanted())
		return ODEBUG_MODE_OFF;
	odebug_options_parse(odebug_getenv("ODEBUG_OPTIONS"));
	if (odebug_opt.help)
		odebug_options_help();
	odebug_start_step("options");
	odebug_guard_enter();
	if (odebug_gettid() == getpid())
		odebug_stack_note_main();
	odebug_suppress_init();
	odebug_symbolize_check_option();
	odebug_report_init();
	odebug_exit_init();
	odebug_glibc_seal_ok = odebug_opt.seal_rwlocks && odebug_glibc_seal_probe();
	odebug_checkers_init();
	odebug_start_step("suppressions, report, builtin");
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	odebug_start_step("atfork");
	odebug_backtrace_init();
	odebug_start_step("backtrace");
	odebug_helper_init();
	odebug_start_step("helper");
	if (odebug_opt.origins)
		odebug_origin_init();
	odebug_stack_init();
	odebug_returned_init();
	odebug_start_step("origins, stack keys");
	odebug_thread_begin();		/* this thread's stack (not main's) and unwinder */
	odebug_start_step("thread");
	odebug_modules_scan();		/* annotation modules of the libraries loaded */
	odebug_start_step("modules");
	odebug_trim_note();
	odebug_guard_exit();
	odebug_start_step("trim");
	odebug_store(&decided_on, true);
	return ODEBUG_MODE_IDLE;
}

/*
 * The second half, on the first API call (never from free(), which has
 * nothing to check until an object is tracked, and never inside a report,
 * which needs an API call to have happened first): the main thread's
 * stack, the table, the pool, the depot, the selftest.  The start lock is
 * held, so this makes no loader call (a dlopen() on another thread may be
 * waiting for the start lock under the loader's lock) and no allocation
 * (the first call may come from a signal handler that interrupted
 * malloc): raw system calls (mmap(), /proc/self/maps read into a static
 * buffer) and the API's own calls only.  It runs on the caller's stack,
 * within a report's budget (RELIABILITY.md, "The start").
 */
static enum odebug_mode start(void)
{
	odebug_guard_enter();
	odebug_stack_learn_main();
	if (!odebug_table_init() || !odebug_pool_init() ||
	    (odebug_opt.origins && !odebug_depot_init())) {
		/* Nothing mapped stays behind (each init undoes its own). */
		odebug_pool_fini();
		odebug_table_fini();
		odebug_guard_exit();
		odebug_message("Out of memory. ODEBUG disabled", (char *)NULL);
		return ODEBUG_MODE_OFF;
	}
	started = true;
	odebug_guard_exit();

	if (odebug_opt.selftest) {
		bool ok;

		odebug_selftesting_set(true);
		ok = odebug_selftest();
		odebug_selftesting_set(false);
		if (!ok)
			return ODEBUG_MODE_OFF;
	}
	odebug_trim_after(ODEBUG_TRIM_STARTED);
	return ODEBUG_MODE_ON;
}

/* The mode changed: every checker hears it (registry.h). */
static void mode_changed(bool on)
{
	odebug_checkers_mode(on);
}

ODEBUG_STARTER(init_starter) = {
	.decide = decide,
	.start = start,
	.mode_changed = mode_changed,
};

/* Our last constructor (the core is linked after the interposers). */
__attribute__((constructor)) static void odebug_constructor(void)
{
	odebug_enable_slow();
	odebug_start_step("the other constructors");
	odebug_start_steps_flush();
}

/*
 * The exit-time options (report_active_at_exit, print_stats, exitcode).
 * Nothing is torn down: other destructors still free() after us.
 */
__attribute__((destructor)) static void odebug_destructor(void)
{
	/* Never decided on (ODEBUG unset): nothing to say, no page of it touched. */
	if (odebug_load(&decided_on) && odebug_tls.guard == 0)
		odebug_exit_output();
}

/**
 * debug_objects_enabled - is libodebug tracking objects?
 *
 * False when ODEBUG is not 1, when the selftest failed and after an
 * out-of-memory switch-off.
 */
ODEBUG_EXPORT bool debug_objects_enabled(void)
{
	return odebug_start_slow();
}
