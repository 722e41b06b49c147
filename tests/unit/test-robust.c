/* SPDX-License-Identifier: MIT */
/*
 * Inputs and exits that must not hurt the host: suppressions
 * files that are not text files, log_path at a FIFO or at someone else's
 * file, exitcode with other libraries' destructors, forked children, the
 * thread-exit stack check on dead memory.  Each case runs this program
 * again as a child with its own environment.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

static const char *argv0;
static char tmpdir[64];

static void one_report(void)
{
	static char obj[16];

	debug_object_deactivate(obj, &bare_descr);	/* untracked: one report */
}

/* --- the thread-exit check on dead stack memory ------------------- */

struct conn {
	int *refs;		/* followed by the fixup, as an event library's delete */
	char pad[24];
};

static int fixups_run, hints_run;

static bool conn_fixup_free(void *addr, enum debug_obj_state state)
{
	struct conn *c = addr;

	(void)state;
	fixups_run++;
	(*c->refs)--;
	return true;
}

static void *conn_hint(void *addr)
{
	hints_run++;
	return *(void **)addr;
}

static const struct debug_obj_descr conn_descr = {
	.name = "dead_conn", .debug_hint = conn_hint, .fixup_free = conn_fixup_free,
};

/* Leaves an active on-stack object behind (the bug this test plants). */
__attribute__((noinline)) static void arm_on_stack(void)
{
	static int refs = 1;
	struct conn c;

	c.refs = &refs;
	debug_object_init_on_stack(&c, &conn_descr);
	debug_object_activate(&c, &conn_descr);
	__asm__ volatile("" ::: "memory");
}

/* Later calls reuse the stack: the object's bytes are garbage now. */
__attribute__((noinline)) static void scribble(void)
{
	char buf[8192];

	memset(buf, 0x41, sizeof(buf));
	__asm__ volatile("" :: "r"(buf) : "memory");
}

static void *dead_stack_thread(void *arg)
{
	arm_on_stack();
	scribble();
	return arg;
}

static __thread char tls_obj[16];

static void *tls_thread(void *arg)
{
	char local[16];

	debug_object_init(tls_obj, &bare_descr);	/* not on the stack */
	debug_object_free(tls_obj, &bare_descr);
	debug_object_init(local, &bare_descr);		/* on it, not annotated */
	debug_object_free(local, &bare_descr);
	return arg;
}

/* Plant something at log.<our pid> before the first report opens it. */
static void plant_log(const char *what)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/log.%d", tmpdir, (int)getpid());
	if (!strcmp(what, "fifo") || !strcmp(what, "fifo-reader")) {
		if (mkfifo(path, 0600))
			exit(9);
		if (!strcmp(what, "fifo-reader") && open(path, O_RDONLY | O_NONBLOCK) < 0)
			exit(9);
		return;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0)
		exit(9);
	if (!strcmp(what, "readable") && fchmod(fd, 0644))
		exit(9);
	if (!strcmp(what, "foreign") && fchown(fd, 65534, 65534))
		exit(9);
	close(fd);
}

static void child(const char *name)
{
	pthread_t t;

	alarm(20);	/* a hang is a failure, not a stuck test */
	if (!strncmp(name, "log-", 4)) {
		plant_log(name + 4);
		one_report();
	}
	if (!strcmp(name, "one"))
		one_report();
	if (!strcmp(name, "dead-stack")) {
		pthread_create(&t, NULL, dead_stack_thread, NULL);
		pthread_join(t, NULL);
		fprintf(stderr, "fixups=%d hints=%d\n", fixups_run, hints_run);
	}
	if (!strcmp(name, "tls")) {
		pthread_create(&t, NULL, tls_thread, NULL);
		pthread_join(t, NULL);
	}
	fprintf(stderr, "child done\n");
}

static char *run(int *status, const char *scenario, const char *options)
{
	char *env_opt, *out;

	if (asprintf(&env_opt, "ODEBUG_OPTIONS=%s", options) < 0)
		fail();
	out = run_child(argv0, scenario, status, "ODEBUG=1", env_opt, (char *)NULL);
	free(env_opt);
	return out;
}

/* --- suppressions= that cannot be a suppressions file -------------- */

static void suppressions_that_are_not_files_say_so_in_one_line(void **state)
{
	static const char *const paths[] = { "/tmp", "/proc/self/mem", "/dev/null" };
	char opts[128];
	int status;
	size_t i;

	(void)state;
	for (i = 0; i < 3; i++) {
		char *out;

		snprintf(opts, sizeof(opts), "suppressions=%s", paths[i]);
		out = run(&status, "one", opts);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		if (i < 2) {
			assert_int_equal(count_lines_with(out, "ODEBUG: cannot read suppressions file"), 1);
			assert_int_equal(count_lines_with(out, "nothing is suppressed"), 1);
		}
		assert_int_equal(count_lines_with(out, "deactivate not available"), 1);
		assert_int_equal(count_lines_with(out, "child done"), 1);
		free(out);
	}
}

static void binary_suppressions_file_prints_a_bounded_number_of_lines(void **state)
{
	char file[128], opts[200];
	unsigned char junk[60000];
	int status, fd;
	size_t i;
	char *out;

	(void)state;
	srand(12);
	for (i = 0; i < sizeof(junk); i++)
		junk[i] = (unsigned char)rand();
	snprintf(file, sizeof(file), "%s/binary", tmpdir);
	fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, junk, sizeof(junk)), (ssize_t)sizeof(junk));
	close(fd);
	snprintf(opts, sizeof(opts), "suppressions=%s", file);
	out = run(&status, "one", opts);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(count_lines_with(out, "(line ignored)"), 5);
	assert_int_equal(count_lines_with(out, "bad lines in all, the first 5 shown"), 1);
	/* + the report (2 lines, then its next step) and the exit summary (1) */
	assert_int_equal(count_lines_with(out, "ODEBUG: "), 5 + 1 + 3 + 1);
	assert_true(strlen(out) < 8192);
	for (i = 0; out[i]; i++)
		assert_true((unsigned char)out[i] >= 0x20 || out[i] == '\n');
	free(out);
	unlink(file);
}

/* Dead stack memory at thread exit: report only, from the snapshot, no fixup. */
static void thread_exit_check_never_calls_into_dead_stack_memory(void **state)
{
	int status;
	char *out = run(&status, "dead-stack", "");

	(void)state;
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(count_lines_with(out, "ODEBUG: free active (active state 0) object: 0x"), 1);
	assert_non_null(strstr(out, "object type: dead_conn\n"));	/* no hint: none */
	assert_int_equal(count_lines_with(out, "hint: 0x0"), 0);
	assert_int_equal(count_lines_with(out, "fixups=0 hints=0"), 1);
	assert_int_equal(count_lines_with(out, "child done"), 1);
	free(out);
}

/* A __thread object of another thread is not on its stack; a local is. */
static void thread_local_object_gets_no_stack_note(void **state)
{
	int status;
	char *out = run(&status, "tls", "");

	(void)state;
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(count_lines_with(out, "NOT annotated"), 1);
	assert_int_equal(count_lines_with(out, "child done"), 1);
	free(out);
}

/* --- log_path: FIFOs, planted files, symlinked directories (item 10) - */

static char *log_run(int *status, const char *scenario, const char *prefix)
{
	char opts[256];

	snprintf(opts, sizeof(opts), "log_path=%s", prefix);
	return run(status, scenario, opts);
}

static void assert_refused_to_stderr(const char *out, int status, const char *why)
{
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(count_lines_with(out, "ODEBUG: cannot open log file "), 1);
	assert_int_equal(count_lines_with(out, why), 1);
	assert_int_equal(count_lines_with(out, "deactivate not available"), 1);
	assert_int_equal(count_lines_with(out, "child done"), 1);
}

static void log_path_at_a_fifo_never_hangs(void **state)
{
	char prefix[128];
	int status;
	char *out;

	(void)state;
	snprintf(prefix, sizeof(prefix), "%s/log", tmpdir);
	out = log_run(&status, "log-fifo", prefix);
	assert_refused_to_stderr(out, status, "(ENXIO); reports go to stderr");
	free(out);
	out = log_run(&status, "log-fifo-reader", prefix);
	assert_refused_to_stderr(out, status, "(not a regular file); reports go to stderr");
	free(out);
	assert_int_equal(system("rm -f /tmp/odebug-robust-*/log.*"), 0);
}

static void log_path_refuses_a_planted_file(void **state)
{
	char prefix[128];
	int status;
	char *out;

	(void)state;
	snprintf(prefix, sizeof(prefix), "%s/log", tmpdir);
	out = log_run(&status, "log-readable", prefix);
	assert_refused_to_stderr(out, status, "(open to other users); reports go to stderr");
	free(out);
	if (geteuid() == 0) {	/* only root can plant a file owned by another user */
		out = log_run(&status, "log-foreign", prefix);
		assert_refused_to_stderr(out, status, "(owned by another user); reports go to stderr");
		free(out);
	}
	out = log_run(&status, "log-private", prefix);	/* ours, 0600: appended to */
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(count_lines_with(out, "ODEBUG"), 0);
	free(out);
	assert_int_equal(system("rm -f /tmp/odebug-robust-*/log.*"), 0);
}

static void log_path_follows_no_symlinked_directory(void **state)
{
	char real[128], link[160], prefix[192], cmd[256];
	int status;
	char *out;

	(void)state;
	snprintf(real, sizeof(real), "%s/real", tmpdir);
	snprintf(link, sizeof(link), "%s/link", tmpdir);
	assert_int_equal(mkdir(real, 0700), 0);
	assert_int_equal(symlink(real, link), 0);
	snprintf(prefix, sizeof(prefix), "%s/log", link);
	out = log_run(&status, "one", prefix);
	assert_refused_to_stderr(out, status, "(ELOOP); reports go to stderr");
	free(out);
	snprintf(cmd, sizeof(cmd), "test -z \"$(ls %s)\"", real);
	assert_int_equal(system(cmd), 0);	/* nothing written through the link */
	unlink(link);
	rmdir(real);
}

/* Paths from options are echoed escaped, like every other input. */
static void paths_in_messages_are_escaped(void **state)
{
	int status;
	char *out;

	(void)state;
	out = run(&status, "one", "log_path=/nonexistent-\x1b[2J/log:suppressions=/nonexistent-\x1b[2J/s");
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(count_lines_with(out, "cannot open log file /nonexistent-\\x1b[2J/log."), 1);
	assert_int_equal(count_lines_with(out, "cannot read suppressions file /nonexistent-\\x1b[2J/s (ENOENT)"), 1);
	assert_null(strchr(out, '\x1b'));
	free(out);
}

int test_main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(suppressions_that_are_not_files_say_so_in_one_line),
		cmocka_unit_test(binary_suppressions_file_prints_a_bounded_number_of_lines),
		cmocka_unit_test(thread_exit_check_never_calls_into_dead_stack_memory),
		cmocka_unit_test(thread_local_object_gets_no_stack_note),
		cmocka_unit_test(log_path_at_a_fifo_never_hangs),
		cmocka_unit_test(log_path_refuses_a_planted_file),
		cmocka_unit_test(log_path_follows_no_symlinked_directory),
		cmocka_unit_test(paths_in_messages_are_escaped),
	};
	const char *dir = getenv("ODEBUG_TEST_TMPDIR");
	int rc;

	argv0 = argv[0];
	snprintf(tmpdir, sizeof(tmpdir), "%s", dir ? dir : "");
	child_dispatch(argc, argv, child);
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/odebug-robust-XXXXXX");
	if (!mkdtemp(tmpdir))
		return 1;
	setenv("ODEBUG_TEST_TMPDIR", tmpdir, 1);
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	rmdir(tmpdir);
	return rc;
}
