/* SPDX-License-Identifier: MIT */
/*
 * Inputs and exits that must not hurt the host (issue 12): suppressions
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

static void child(const char *name)
{
	if (!strcmp(name, "one"))
		one_report();
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
	assert_int_equal(count_lines_with(out, "ODEBUG: "), 5 + 1 + 2);	/* + the report */
	assert_true(strlen(out) < 8192);
	for (i = 0; out[i]; i++)
		assert_true((unsigned char)out[i] >= 0x20 || out[i] == '\n');
	free(out);
	unlink(file);
}

int test_main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(suppressions_that_are_not_files_say_so_in_one_line),
		cmocka_unit_test(binary_suppressions_file_prints_a_bounded_number_of_lines),
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
