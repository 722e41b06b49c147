/* SPDX-License-Identifier: MIT */
/*
 * exit.c - what libodebug says when the process ends or execs:
 * report_active_at_exit's reports, the summary of the reports, print_stats,
 * and the exit status that exitcode sets.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "start.h"

/* The process whose memory this is (a vfork() child shares it, not a pid). */
static pid_t owner;
/* odebug_warnings when the exit-time output was last written (an exec). */
static unsigned long output_at = ULONG_MAX;
static bool forked;	/* a fork() child: its objects are copies of its parent's */

/* Decided on: this process owns the exit-time output. */
void odebug_exit_init(void)
{
	owner = getpid();
}

/* A forked child: its own output, of its own reports only. */
void odebug_exit_child(void)
{
	owner = getpid();
	output_at = ULONG_MAX;
	forked = true;
}

/* After every other exit handler and destructor: the status, data kept. */
static void exit_with_code(int status, void *arg)
{
	(void)status;
	(void)arg;
	fflush(NULL);
	_exit((int)odebug_opt.exitcode);
}

/*
 * The exit-time output: report_active_at_exit's reports, the summary,
 * print_stats; with @whole false the summary alone.  Written again only if
 * a warning was counted since it was last written (before an exec that
 * failed, or an exec retried along PATH), and then for the whole run.
 */
static void exit_output(bool whole)
{
	if (odebug_load(&odebug_warnings) == output_at)
		return;
	if (whole && odebug_load(&odebug_mode) == ODEBUG_MODE_ON &&
	    odebug_opt.report_active_at_exit)
		odebug_report_active_objects();
	odebug_report_summary();
	if (whole && odebug_opt.print_stats) {
		debug_objects_print_stats(2);
		if (odebug_load(&odebug_mode) == ODEBUG_MODE_ON)
			odebug_types_print(2);
	}
	if (whole || odebug_report_warned_here())
		output_at = odebug_load(&odebug_warnings);
}

/**
 * odebug_exit_before_exec - the exit-time output, before an exec
 *
 * An exec ends this image without running destructors, so what our
 * destructor would print is printed now (preload/exec.c).  exitcode is
 * not applied: the new image's status is the process's.  A vfork() child
 * (same memory, another pid) prints nothing: the output is its parent's.
 * A fork() child (fork then exec starts most programs) prints its own
 * summary only, if it reported: the objects it holds and the statistics
 * are copies of its parent's, which prints them at its own exit.
 */
void odebug_exit_before_exec(void)
{
	if (getpid() == owner)
		exit_output(!forked);
}

/**
 * odebug_exit_output - the exit-time options, from our destructor
 *
 * Runs after the program's atexit handlers and the destructors of objects
 * that depend on us, but before the destructors of libraries initialised
 * before us.  With exitcode set and an unsuppressed report made here, the
 * status is set by a handler registered now: exit() still runs a handler
 * registered while its handlers run (glibc's stdlib/exit.c restarts its
 * list), after _dl_fini has run every destructor, and on_exit() ties it to
 * no module's __cxa_finalize.  The handler flushes stdio, as exit() would
 * after it, and ends the process with the status.  libodebug is NODELETE,
 * so the handler's code is still mapped then.
 */
void odebug_exit_output(void)
{
	exit_output(true);
	if (odebug_opt.exitcode && odebug_report_made_here() &&
	    on_exit(exit_with_code, NULL) != 0)
		exit_with_code(0, NULL);	/* cannot register: at least the status */
}
