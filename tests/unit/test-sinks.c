/* SPDX-License-Identifier: MIT */
/*
 * Where reports go and what follows them: log_path (file, syslog), JSON,
 * exitcode, abort_on_error, halt_on_error, report_active_at_exit.  Each case runs this program
 * again as a child (scenarios.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "scenarios.h"

static void log_path_writes_prefix_dot_pid_mode_0600(void **state)
{
	char opts[128], path[256], *out, *log;
	struct stat st;
	int status;

	(void)state;
	clean_tmpdir();
	snprintf(opts, sizeof(opts), "log_path=%s/log", tmpdir);
	out = run(&status, "one", opts);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_null(strstr(out, "ODEBUG"));	/* nothing on stderr */
	only_log(path, sizeof(path), NULL);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	log = read_file(path);
	assert_int_equal(count_lines_with(log, "ODEBUG: free active (active state 0)"), 1);
	assert_int_equal(count_lines_with(log, " in sinks_culprit+"), 1);
	free(log);
	free(out);
}

static void log_path_in_missing_directory_falls_back_to_stderr(void **state)
{
	int status;
	char *out = run(&status, "one", "log_path=/nonexistent-odebug-dir/log");

	(void)state;
	assert_int_equal(count_lines_with(out, "ODEBUG: cannot open log file /nonexistent-odebug-dir/log."), 1);
	assert_int_equal(count_lines_with(out, "(ENOENT); reports go to stderr"), 1);
	assert_int_equal(count_lines_with(out, "ODEBUG: free active"), 1);
	free(out);
}

static void log_path_never_follows_a_symlink(void **state)
{
	char opts[128];
	int status;
	char *out;

	(void)state;
	clean_tmpdir();
	unlink("/tmp/odebug-sinks-target-must-not-exist");
	snprintf(opts, sizeof(opts), "log_path=%s/log", tmpdir);
	out = run(&status, "symlink", opts);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(count_lines_with(out, "(ELOOP); reports go to stderr"), 1);
	assert_int_equal(count_lines_with(out, "ODEBUG: free active"), 1);
	assert_int_equal(access("/tmp/odebug-sinks-target-must-not-exist", F_OK), -1);
	free(out);
}

/* A hard link to another file of ours would be appended to through it. */
static void log_path_refuses_a_file_with_other_hard_links(void **state)
{
	char opts[128], victim[256];
	struct stat st;
	int status;
	char *out;

	(void)state;
	clean_tmpdir();
	snprintf(opts, sizeof(opts), "log_path=%s/log", tmpdir);
	out = run(&status, "hardlink", opts);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(count_lines_with(out, "(has other hard links); reports go to stderr"), 1);
	assert_int_equal(count_lines_with(out, "ODEBUG: free active"), 1);
	snprintf(victim, sizeof(victim), "%s/victim", tmpdir);
	assert_int_equal(stat(victim, &st), 0);
	assert_int_equal(st.st_size, 0);	/* nothing written through the link */
	free(out);
}

static void forked_child_writes_its_own_log(void **state)
{
	char opts[128], parent[256], childlog[256], skip[64], *out, *log;
	int status, child_pid;

	(void)state;
	clean_tmpdir();
	snprintf(opts, sizeof(opts), "log_path=%s/log", tmpdir);
	out = run(&status, "fork", opts);
	assert_non_null(strstr(out, "child="));
	child_pid = atoi(strstr(out, "child=") + 6);
	snprintf(skip, sizeof(skip), "log.%d$", child_pid);
	only_log(parent, sizeof(parent), skip);
	snprintf(childlog, sizeof(childlog), "%s/log.%d", tmpdir, child_pid);
	log = read_file(parent);
	assert_int_equal(count_lines_with(log, "ODEBUG: free active"), 1);
	free(log);
	log = read_file(childlog);
	assert_int_equal(count_lines_with(log, "ODEBUG: free active"), 1);
	free(log);
	free(out);
}

static void json_reports_decode_with_a_real_parser(void **state)
{
	char opts[160], path[256], cmd[1536];
	int status;
	char *out;
	FILE *p;
	char result[256] = "";

	(void)state;
	clean_tmpdir();
	snprintf(opts, sizeof(opts), "log_format=json:origins=1:log_path=%s/log", tmpdir);
	out = run(&status, "one", opts);
	free(out);
	only_log(path, sizeof(path), NULL);
	snprintf(cmd, sizeof(cmd),
		 "python3 -c 'import json,sys,datetime\n"
		 "lines = open(sys.argv[1]).read().splitlines()\n"
		 "r = json.loads(lines[0])\n"
		 "names = [f[\"function\"] for f in r[\"frames\"]]\n"
		 "print(len(lines), r[\"op\"], r[\"state\"], r[\"astate\"], r[\"type\"], r[\"hint\"],\n"
		 "      r[\"pid\"] > 0, r[\"thread\"][\"tid\"] > 0, r[\"time\"].endswith(\"Z\") and abs((datetime.datetime.fromisoformat(r[\"time\"][:-1]) - datetime.datetime.utcnow()).total_seconds()) < 300,\n"
		 "      r[\"address\"].startswith(\"0x\"), [n for n in names if n and n.startswith(\"sinks_\")][0],\n"
		 "      \"sinks_arm\" in [f[\"function\"] for f in r[\"initialised_at\"]],\n"
		 "      \"sinks_arm\" in [f[\"function\"] for f in r[\"activated_at\"]],\n"
		 "      all(set(f) == {\"address\",\"function\",\"offset\",\"inlined\",\"module\",\"module_offset\",\"file\",\"line\"} for f in r[\"frames\"]),\n"
		 "      json.loads(lines[1])[\"summary\"][\"groups\"][0][\"count\"])' %s",
		 path);
	p = popen(cmd, "r");
	assert_non_null(p);
	if (!fgets(result, sizeof(result), p))
		result[0] = '\0';
	assert_int_equal(pclose(p), 0);
	assert_string_equal(result,
		"2 free active 0 sinks_timer sinks_callback+0x0 True True True True sinks_culprit True True True 1\n");
}

static void json_escapes_every_string(void **state)
{
	char opts[160], path[256], cmd[768], result[64] = "";
	int status;
	FILE *p;

	(void)state;
	clean_tmpdir();
	snprintf(opts, sizeof(opts), "log_format=json:log_path=%s/log", tmpdir);
	free(run(&status, "weird", opts));
	only_log(path, sizeof(path), NULL);
	/* The type name round-trips exactly: quote, backslash, newline, \x01, UTF-8. */
	snprintf(cmd, sizeof(cmd),
		 "python3 -c 'import json,sys,datetime\n"
		 "r = json.loads(open(sys.argv[1]).read().splitlines()[0])\n"
		 "print(r[\"type\"] == \"a\\\"b\\\\c\\nd\\x01e\\u00e9\\u00ff\")' %s", path);
	p = popen(cmd, "r");
	assert_non_null(p);
	if (!fgets(result, sizeof(result), p))
		result[0] = '\0';
	assert_int_equal(pclose(p), 0);
	assert_string_equal(result, "True\n");
}

static void exitcode_applies_after_atexit_and_stdio(void **state)
{
	int status;
	char *out = run(&status, "exit", "exitcode=42");

	(void)state;
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 42);
	assert_non_null(strstr(out, "atexit ran"));
	assert_non_null(strstr(out, "buffered"));
	free(out);
	out = run(&status, "quiet", "exitcode=42");	/* no report: unchanged */
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	free(out);
}

static void abort_on_error_aborts_after_the_first_report(void **state)
{
	int status;
	char *out = run(&status, "two", "abort_on_error=1");

	(void)state;
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGABRT);
	assert_int_equal(count_lines_with(out, "ODEBUG: free active"), 1);
	assert_null(strstr(out, "after first"));
	free(out);
}

static void halt_on_error_exits_even_when_not_printed(void **state)
{
	int status;
	char *out = run(&status, "two", "halt_on_error=1:max_reports=0");

	(void)state;
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 1);
	assert_null(strstr(out, "after first"));
	free(out);
	out = run(&status, "two", "halt_on_error=1:exitcode=7");
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 7);
	free(out);
}

static void active_objects_are_reported_at_exit(void **state)
{
	int status;
	char *out = run(&status, "leave-active", "report_active_at_exit=1:origins=1:exitcode=3");

	(void)state;
	assert_int_equal(count_lines_with(out, "ODEBUG: exit active (active state 0)"), 1);
	assert_int_equal(count_lines_with(out, "ODEBUG: object activated at:"), 1);
	assert_non_null(strstr(out, " in sinks_arm+"));
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 3);
	free(out);
	out = run(&status, "leave-active", "");	/* off by default */
	assert_null(strstr(out, "exit active"));
	free(out);
}

static void quiet_process_never_loads_libdw(void **state)
{
	int status;
	char *out = run(&status, "quiet", "");

	(void)state;
	assert_non_null(strstr(out, "libdw loaded=0"));
	assert_non_null(strstr(out, "children=none"));
	free(out);
}

int test_main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(log_path_writes_prefix_dot_pid_mode_0600),
		cmocka_unit_test(log_path_in_missing_directory_falls_back_to_stderr),
		cmocka_unit_test(log_path_never_follows_a_symlink),
		cmocka_unit_test(log_path_refuses_a_file_with_other_hard_links),
		cmocka_unit_test(forked_child_writes_its_own_log),
		cmocka_unit_test(json_reports_decode_with_a_real_parser),
		cmocka_unit_test(json_escapes_every_string),
		cmocka_unit_test(exitcode_applies_after_atexit_and_stdio),
		cmocka_unit_test(abort_on_error_aborts_after_the_first_report),
		cmocka_unit_test(halt_on_error_exits_even_when_not_printed),
		cmocka_unit_test(active_objects_are_reported_at_exit),
		cmocka_unit_test(quiet_process_never_loads_libdw),
	};

	return run_scenario_tests(argc, argv, "sinks", tests, sizeof(tests) / sizeof(tests[0]));
}
