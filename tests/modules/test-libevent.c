/* SPDX-License-Identifier: MIT */
/*
 * The libevent module (modules/libevent), loaded by libodebug itself into
 * programs on the system's libevent: each misuse (evprog.c) is reported at
 * the free with the culprit as frame #0, no frame of the module and the
 * holder line, and the fixup takes the event out of its base so the
 * program ends with nothing pending; each correct pattern is silent and
 * reads back from libevent only its own callbacks, arguments and
 * finalizer arguments; a plugin dlopen()ed later is covered too, and an
 * event in its data is judged when it is unloaded; modules=none and a
 * list without libevent load nothing, nor does ODEBUG unset.
 *
 * usage: test-libevent EVPROG EVDLOPEN EVPLUGIN MODULE_PATH
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "test-main.h"

static const char *evprog, *evdlopen, *evplugin, *module_path;

/* Run prog with ODEBUG=1 and options; its stdout and stderr, exit status. */
static char *run2(const char *options, int *status, const char *prog, const char *arg,
		  const char *arg2)
{
	char *buf = NULL, opts[1024];
	size_t len = 0;
	FILE *f;
	int fd[2];
	pid_t pid;

	snprintf(opts, sizeof(opts), "module_path=%s%s%s", module_path,
		 *options ? ":" : "", options);
	assert_int_equal(pipe(fd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (strcmp(options, "ODEBUG unset"))
			setenv("ODEBUG", "1", 1);
		else
			unsetenv("ODEBUG");
		setenv("ODEBUG_OPTIONS", opts, 1);
		dup2(fd[1], 1);
		dup2(fd[1], 2);
		close(fd[0]);
		execl(prog, prog, arg, arg2, (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	f = fdopen(fd[0], "r");
	assert_non_null(f);
	getdelim(&buf, &len, '\0', f);
	fclose(f);
	assert_int_equal(waitpid(pid, status, 0), pid);
	return buf ? buf : strdup("");
}

static char *run(const char *options, int *status, const char *prog, const char *arg)
{
	return run2(options, status, prog, arg, NULL);
}

static int count(const char *out, const char *needle)
{
	int n = 0;

	for (; (out = strstr(out, needle)); out++)
		n++;
	return n;
}

/* One report of a pending event, frame #0 in @culprit, ended with nothing pending. */
static void reported(const char *scenario, const char *culprit)
{
	char frame[128];
	int status;
	char *out = run("", &status, evprog, scenario);

	snprintf(frame, sizeof(frame), "#0 0x");
	if (count(out, "ODEBUG: free active (active state 0) object:") != 1 ||
	    !strstr(out, "object type: libevent_event") || !strstr(out, "end 0\n") ||
	    !strstr(out, "ODEBUG: holder: libevent event fd -1, ") ||
	    !strstr(out, "pending in base 0x") || strstr(out, "wrong:") ||
	    !WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
	    strstr(out, "libodebug-libevent"))
		fail_msg("%s: expected one report and a clean end:\n%s", scenario, out);
	snprintf(frame, sizeof(frame), " in %s+", culprit);
	{
		const char *f0 = strstr(out, "#0 0x");

		if (!f0 || !strstr(f0, frame) || strstr(f0, frame) > strchr(f0, '\n'))
			fail_msg("%s: frame #0 is not %s:\n%s", scenario, culprit, out);
	}
	free(out);
}

static void silent(const char *scenario, const char *options)
{
	int status;
	char *out = run(options, &status, evprog, scenario);

	if (strstr(out, "ODEBUG") || strstr(out, "wrong:") || !strstr(out, "end ") ||
	    !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("%s (%s): expected silence and a clean end:\n%s", scenario,
			 options, out);
	free(out);
}

static void pending_conn_freed(void **state)
{
	(void)state;
	reported("drop_pending_conn", "drop_pending_conn");
}

static void pending_evtimer_freed(void **state)
{
	(void)state;
	reported("drop_pending_timer", "drop_pending_timer");
}

static void pending_event_new_freed(void **state)
{
	(void)state;
	reported("drop_new_event", "drop_new_event");
}

static void readded_oneshot_freed(void **state)
{
	(void)state;
	reported("drop_readded_oneshot", "drop_readded_oneshot");
}

static void legacy_event_set_freed(void **state)
{
	(void)state;
	reported("drop_legacy_set", "drop_legacy_set");
}

/* A callback that ends in a tail call into libevent (evtail.c) re-adds its event. */
static void oneshot_readded_by_tail_call_freed(void **state)
{
	(void)state;
	reported("drop_readded_by_tail_call", "drop_readded_by_tail_call");
}

/* Memory that was a mutex, then a pending event: reported as the event. */
static void pending_event_after_mutex_freed(void **state)
{
	(void)state;
	reported("drop_event_after_mutex", "drop_event_after_mutex");
}

/* event_get_callback(), _arg(), _assignment(), foreach and event_self_cbarg(). */
static void oneshots_read_back_their_own_values(void **state)
{
	(void)state;
	silent("own_oneshots", "");
}

/* event_finalize() and event_free_finalize() of pending events. */
static void finalizers_get_their_own_arguments(void **state)
{
	(void)state;
	silent("own_finalizers", "");
}

static void correct_patterns_silent(void **state)
{
	static const char *const names[] = {
		"del_then_free", "fired_oneshot_freed", "new_then_event_free",
		"base_free_owns", "internal_events", "locked_threads",
		"stack_event_deleted", "reused_as_mutex", "mutex_then_deleted_event",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		silent(names[i], "");
}

/*
 * A close of a descriptor a pending event polls, the event deleted or
 * freed right after (libevent's own order in evdns and evhttp): the close
 * is made and nothing is reported, the loop's next poll finding the event
 * deleted (odebug-fd(7)).
 */
static void closes_before_the_event_is_deleted_are_silent_and_made(void **state)
{
	(void)state;
	silent("closed_then_deleted", "");
}

/* event_del, event_free, a one-shot that fired, its own callback, event_base_free: then the close. */
static void closes_after_the_event_ended_are_silent(void **state)
{
	(void)state;
	silent("watch_ended_then_closed", "");
}

/*
 * A close under an event left pending: one report at the loop's next poll
 * (event_base_dispatch()'s, event_base_loop()'s), frame #0 the close's
 * caller, the event named, and the fixup's event_del_noblock() leaving it
 * not pending; the close was made.
 */
static void close_reported_at_the_loops_next_poll(const char *scenario, const char *culprit)
{
	char frame[128];
	int status;
	char *out = run("", &status, evprog, scenario);
	const char *f0 = strstr(out, "#0 0x");

	snprintf(frame, sizeof(frame), " in %s+", culprit);
	if (count(out, "ODEBUG: close active (active state 0) object:") != 1 ||
	    !strstr(out, "object type: fd\n") ||
	    !strstr(out, "ODEBUG: holder: libevent event 0x") ||
	    !strstr(out, " (event_add) watched fd ") ||
	    !strstr(out, "when this close() closed it, and still did when its loop next polled") ||
	    !strstr(out, "ODEBUG: fixed up:") || !strstr(out, "pending after the poll: 0\n") ||
	    !strstr(out, "end 0\n") || strstr(out, "wrong:") || strstr(out, "libodebug-libevent") ||
	    !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("%s: expected one report at the poll and a clean end:\n%s", scenario, out);
	if (!f0 || !strstr(f0, frame) || strstr(f0, frame) > strchr(f0, '\n'))
		fail_msg("%s: frame #0 is not %s:\n%s", scenario, culprit, out);
	free(out);
}

static void close_left_pending_reported_at_the_next_poll(void **state)
{
	(void)state;
	close_reported_at_the_loops_next_poll("closed_left_pending", "closed_left_pending");
	close_reported_at_the_loops_next_poll("callback_closes_left_pending",
					      "on_read_close_only");
}

/*
 * Deleted and added again on the file that took the number before the
 * poll; closed on a thread that runs no loop (not judged): silent.
 */
static void close_then_readded_or_on_another_thread_silent(void **state)
{
	(void)state;
	silent("closed_then_readded_or_elsewhere", "");
}

static void modules_option_off(void **state)
{
	(void)state;
	silent("drop_pending_conn", "modules=none");
	silent("drop_pending_conn", "modules=libuv,glib");
}

static void modules_option_named(void **state)
{
	int status;
	char *out = run("modules=glib,libevent", &status, evprog, "drop_pending_conn");

	(void)state;
	if (count(out, "object type: libevent_event") != 1)
		fail_msg("modules=glib,libevent: no report:\n%s", out);
	free(out);
}

/* ODEBUG unset: libodebug loads nothing; ODEBUG=1: the module is there. */
static void loaded_only_when_enabled(void **state)
{
	int status;
	char *off = run("ODEBUG unset", &status, evprog, "module_mapped");
	char *on = run("", &status, evprog, "module_mapped");

	(void)state;
	if (!strstr(off, "module absent") || !strstr(on, "module mapped"))
		fail_msg("ODEBUG unset: %s; ODEBUG=1: %s", off, on);
	free(off);
	free(on);
}

static void plugin_loaded_later(void **state)
{
	int status;
	char *out = run("", &status, evdlopen, evplugin);

	(void)state;
	if (count(out, "object type: libevent_event") != 1 || !strstr(out, "end 0\n") ||
	    !strstr(out, " in plugin_drop+") || !WIFEXITED(status) || WEXITSTATUS(status))
		fail_msg("the dlopen()ed plugin's misuse is not reported:\n%s", out);
	free(out);
}

/* evdlopen PLUGIN FUNCTION: its output; the plugin must have been unloaded. */
static char *unload(const char *fn)
{
	int status;
	char *out = run2("", &status, evdlopen, evplugin, fn);

	if (!strstr(out, "\nunloaded\n") || !WIFEXITED(status) || WEXITSTATUS(status))
		fail_msg("%s: the plugin was not unloaded:\n%s", fn, out);
	return out;
}

/* An event in the plugin's data, deleted before the unload: libevent's word, silent. */
static void plugin_unloaded_after_delete_silent(void **state)
{
	char *out = unload("plugin_static_deleted");

	(void)state;
	if (strstr(out, "ODEBUG"))
		fail_msg("a deleted event in an unloaded plugin is reported:\n%s", out);
	free(out);
}

/* The same event still pending at the unload: reported. */
static void plugin_unloaded_pending_reported(void **state)
{
	char *out = unload("plugin_static_pending");

	(void)state;
	if (count(out, "object type: libevent_event") != 1 ||
	    !strstr(out, "unloaded by this dlclose()"))
		fail_msg("a pending event in an unloaded plugin is not reported:\n%s", out);
	free(out);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pending_conn_freed),
		cmocka_unit_test(pending_evtimer_freed),
		cmocka_unit_test(pending_event_new_freed),
		cmocka_unit_test(readded_oneshot_freed),
		cmocka_unit_test(legacy_event_set_freed),
		cmocka_unit_test(oneshot_readded_by_tail_call_freed),
		cmocka_unit_test(pending_event_after_mutex_freed),
		cmocka_unit_test(oneshots_read_back_their_own_values),
		cmocka_unit_test(finalizers_get_their_own_arguments),
		cmocka_unit_test(correct_patterns_silent),
		cmocka_unit_test(closes_before_the_event_is_deleted_are_silent_and_made),
		cmocka_unit_test(closes_after_the_event_ended_are_silent),
		unit_test_with(HELD, close_left_pending_reported_at_the_next_poll),
		cmocka_unit_test(close_then_readded_or_on_another_thread_silent),
		cmocka_unit_test(modules_option_off),
		cmocka_unit_test(modules_option_named),
		cmocka_unit_test(plugin_loaded_later),
		cmocka_unit_test(plugin_unloaded_after_delete_silent),
		cmocka_unit_test(plugin_unloaded_pending_reported),
		cmocka_unit_test(loaded_only_when_enabled),
	};

	if (argc != 5) {
		fprintf(stderr, "usage: test-libevent EVPROG EVDLOPEN EVPLUGIN MODULE_PATH\n");
		return 2;
	}
	evprog = argv[1];
	evdlopen = argv[2];
	evplugin = argv[3];
	module_path = argv[4];
	return cmocka_run_group_tests(tests, NULL, NULL);
}
