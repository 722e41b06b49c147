/* SPDX-License-Identifier: MIT */
/*
 * Descriptors with an owner (lib/checks/fd, odebug-fd(7)): a close of a
 * descriptor a stream, a directory stream or an fdsan tag owns, by code
 * that is not the owner, is reported at that close, names the owner, and
 * is not made, so the owner's own close later closes its own file.  The
 * owner's own close, a dup's close, ownership moved by fdopen, popen,
 * fork children, a daemon's standard descriptors, a failed close and
 * descriptors inherited across exec are silent.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "odebug-fdsan.h"
#include "pthread/pt.h"

static char path[64], other[64];
static char *argv0;

static int setup(void **state)
{
	(void)state;
	snprintf(path, sizeof(path), "/tmp/odebug-fd-%d", (int)getpid());
	snprintf(other, sizeof(other), "/tmp/odebug-fd-other-%d", (int)getpid());
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	unlink(other);
	return 0;
}

static bool is_open(int fd)
{
	return fcntl(fd, F_GETFD) != -1;
}

/* The file at @p holds exactly @want. */
static void assert_file(const char *p, const char *want)
{
	char buf[256] = "";
	int fd = open(p, O_RDONLY);
	ssize_t n;

	assert_true(fd >= 0);
	n = read(fd, buf, sizeof(buf) - 1);
	assert_true(n >= 0);
	buf[n] = '\0';
	close(fd);
	assert_string_equal(buf, want);
}

/* The culprits: each closes a descriptor it does not own. */
static __attribute__((noinline)) int close_stream_fd(FILE *f)
{
	return close(fileno(f));
}

static __attribute__((noinline)) int close_dir_fd(DIR *d)
{
	return close(dirfd(d));
}

static __attribute__((noinline)) int close_again(int fd)
{
	return close(fd);
}

static __attribute__((noinline)) int dup2_onto(int old, int fd)
{
	return dup2(old, fd);
}

static __attribute__((noinline)) int close_range_over(unsigned int first, unsigned int last)
{
	return close_range(first, last, 0);
}

static __attribute__((noinline)) void closefrom_over(int low)
{
	closefrom(low);
}

static void close_of_fileno_before_fclose_is_reported_and_not_made(void **state)
{
	FILE *f = fopen(path, "w");
	int r = -1, fd, o;

	(void)state;
	assert_non_null(f);
	fd = fileno(f);
	EXPECT_OUTPUT(1, 1, "close_stream_fd", r = close_stream_fd(f), "ODEBUG: close active",
		      "object type: fd", "holder: stream 0x", "(fopen) owns fd",
		      "this close() was not made (it returned 0)", "fixed up");
	assert_int_equal(r, 0);
	assert_true(is_open(fd));
	/* The number is not handed out again: the next file is another's. */
	o = open(other, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_int_not_equal(o, fd);
	fputs("the stream's own text", f);
	EXPECT_SILENT(assert_int_equal(fclose(f), 0));
	assert_false(is_open(fd));
	close(o);
	assert_file(path, "the stream's own text");
	assert_file(other, "");
}

static void close_of_dirfd_before_closedir_is_reported(void **state)
{
	DIR *d = opendir("/");
	int r = -1;

	(void)state;
	assert_non_null(d);
	EXPECT_OUTPUT(1, 1, "close_dir_fd", r = close_dir_fd(d), "ODEBUG: close active",
		      "holder: directory stream 0x", "(opendir) owns fd", "closedir()");
	assert_int_equal(r, 0);
	assert_non_null(readdir(d));
	EXPECT_SILENT(assert_int_equal(closedir(d), 0));
}

static void double_close_landing_on_a_new_owner_is_reported(void **state)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600), r = -1;
	FILE *f;

	(void)state;
	assert_true(fd >= 0);
	EXPECT_SILENT(close(fd));
	f = fopen(other, "w");
	assert_non_null(f);
	assert_int_equal(fileno(f), fd);	/* POSIX: the lowest free number */
	EXPECT_OUTPUT(1, 1, "close_again", r = close_again(fd), "ODEBUG: close active",
		      "(fopen) owns fd");
	assert_int_equal(r, 0);
	fputs("kept", f);
	EXPECT_SILENT(assert_int_equal(fclose(f), 0));
	assert_file(other, "kept");
}

static void close_range_over_an_owned_descriptor_keeps_it(void **state)
{
	int a = open("/dev/null", O_RDONLY), b, r = -1;
	FILE *f = fopen(path, "w");

	(void)state;
	b = open("/dev/null", O_RDONLY);
	assert_true(a >= 0 && b >= 0 && f);
	assert_true(a < fileno(f) && fileno(f) < b);
	EXPECT_OUTPUT(1, 1, "close_range_over", r = close_range_over((unsigned int)a,
								      (unsigned int)b),
		      "ODEBUG: close_range active", "(fopen) owns fd");
	assert_int_equal(r, 0);
	assert_false(is_open(a));
	assert_false(is_open(b));
	assert_true(is_open(fileno(f)));
	EXPECT_SILENT(assert_int_equal(fclose(f), 0));
}

/* closefrom() would close the test's own descriptors: in a fresh process. */
static void closefrom_over_an_owned_descriptor_keeps_it(void **state)
{
	int status;
	char *out = run_child(argv0, "closefrom", &status, NULL);

	(void)state;
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_non_null(strstr(out, "ODEBUG: closefrom active"));
	assert_non_null(strstr(out, "(fopen) owns fd"));
	assert_non_null(strstr(out, "closefrom_over"));
	free(out);
}

static void dup2_onto_an_owned_descriptor_is_reported_and_fails(void **state)
{
	FILE *f = fopen(path, "w");
	int o = open("/dev/null", O_WRONLY), r = 0;

	(void)state;
	assert_true(f && o >= 0);
	errno = 0;
	EXPECT_OUTPUT(1, 1, "dup2_onto", r = dup2_onto(o, fileno(f)), "ODEBUG: dup2 active",
		      "this dup2() was not made (it failed with EBUSY)");
	assert_int_equal(r, -1);
	assert_int_equal(errno, EBUSY);
	fputs("still mine", f);
	EXPECT_SILENT(assert_int_equal(fclose(f), 0));
	close(o);
	assert_file(path, "still mine");
}

static void owners_own_close_is_silent(void **state)
{
	(void)state;
	EXPECT_SILENT({
		FILE *f = fopen(path, "w");
		DIR *d = opendir("/");
		FILE *t = tmpfile();

		assert_true(f && d && t);
		assert_int_equal(fclose(f), 0);
		assert_int_equal(closedir(d), 0);
		assert_int_equal(fclose(t), 0);
	});
}

static void close_of_a_dup_of_an_owned_descriptor_is_silent(void **state)
{
	FILE *f = fopen(path, "w");

	(void)state;
	assert_non_null(f);
	EXPECT_SILENT({
		int d = dup(fileno(f));

		assert_true(d >= 0);
		assert_int_equal(close(d), 0);
		assert_int_equal(fclose(f), 0);
	});
}

static void fdopen_moves_ownership_to_the_stream(void **state)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600), r = -1;
	FILE *f;

	(void)state;
	assert_true(fd >= 0);
	EXPECT_SILENT(f = fdopen(fd, "w"));
	assert_non_null(f);
	/* The opener closing it now is the culprit. */
	EXPECT_OUTPUT(1, 1, "close_again", r = close_again(fd), "(fdopen) owns fd");
	assert_int_equal(r, 0);
	EXPECT_SILENT(assert_int_equal(fclose(f), 0));
}

static void fdopendir_moves_ownership_to_the_directory(void **state)
{
	int fd = open("/", O_RDONLY | O_DIRECTORY);
	DIR *d;

	(void)state;
	assert_true(fd >= 0);
	EXPECT_SILENT(d = fdopendir(fd));
	assert_non_null(d);
	EXPECT_OUTPUT(1, 1, "close_again", close_again(fd), "(fdopendir) owns fd");
	EXPECT_SILENT(assert_int_equal(closedir(d), 0));
}

static void failed_fdopen_leaves_the_descriptor_to_its_opener(void **state)
{
	int fd = open(path, O_RDONLY | O_CREAT, 0600);

	(void)state;
	assert_true(fd >= 0);
	EXPECT_SILENT({
		assert_null(fdopen(fd, "w"));	/* opened read-only: EINVAL */
		assert_int_equal(close(fd), 0);
	});
}

static void popen_and_pclose_are_silent(void **state)
{
	(void)state;
	EXPECT_SILENT({
		FILE *p = popen("echo hi", "r");
		char buf[16];

		assert_non_null(p);
		assert_non_null(fgets(buf, sizeof(buf), p));
		assert_int_equal(pclose(p), 0);
	});
}

static void close_that_fails_with_ebadf_is_silent(void **state)
{
	FILE *f = fopen(path, "w");
	int fd = fileno(f);

	(void)state;
	EXPECT_SILENT({
		assert_int_equal(fclose(f), 0);
		assert_int_equal(close(fd), -1);
		assert_int_equal(errno, EBADF);
		assert_int_equal(close(1 << 19), -1);
	});
}

/* A fork child closes its parent's descriptors in each way, then @how. */
static void fork_child_closes(int how)
{
	FILE *f = fopen(path, "w");
	DIR *d = opendir("/");
	int status, fd = fileno(f);
	pid_t pid;

	assert_true(f && d);
	capture_start();
	stats_mark();
	pid = fork();
	if (pid == 0) {
		unsigned long before = stats_now().warnings;

		if (how == 0) {
			close(fd);
			close(dirfd(d));
		} else if (how == 1) {
			closefrom(3);
		} else {
			close_range(3, ~0u, 0);
		}
		/* The child's own count: its reports are its own. */
		if (stats_now().warnings != before)
			_exit(3);
		if (how == 2)
			execl("/bin/true", "true", (char *)NULL);
		_exit(is_open(fd) ? 1 : 0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	{
		char *out = capture_stop();

		if (strstr(out, "ODEBUG"))
			fail_msg("%s", out);
		free(out);
	}
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(stats_delta().warnings, 0);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(closedir(d), 0);
}

static void fork_child_closing_one_by_one_before_exit_is_silent(void **state)
{
	(void)state;
	fork_child_closes(0);
}

static void fork_child_closefrom_is_silent(void **state)
{
	(void)state;
	fork_child_closes(1);
}

static void fork_child_close_range_before_exec_is_silent(void **state)
{
	(void)state;
	fork_child_closes(2);
}

static void fdsan_tags_follow_bionic(void **state)
{
	int fd = open("/dev/null", O_RDONLY), r = -1;
	uint64_t tag = android_fdsan_create_owner_tag(ANDROID_FDSAN_OWNER_TYPE_UNIQUE_FD,
						      0x1234);

	(void)state;
	assert_int_equal(tag, (3ull << 56) | 0x1234);
	assert_int_equal(android_fdsan_get_tag_value(tag), 0x1234);
	assert_string_equal(android_fdsan_get_tag_type(tag), "unique_fd");
	assert_int_equal(android_fdsan_create_owner_tag(ANDROID_FDSAN_OWNER_TYPE_FILE, 0), 0);
	EXPECT_SILENT(android_fdsan_exchange_owner_tag(fd, 0, tag));
	assert_int_equal(android_fdsan_get_owner_tag(fd), tag);
	/* A plain close by another is the culprit, and a close with another's tag. */
	EXPECT_OUTPUT(1, 1, "close_again", r = close_again(fd), "holder: owner tag",
		      "(unique_fd)", "android_fdsan_close_with_tag()");
	assert_int_equal(r, 0);
	EXPECT_OUTPUT(1, 1, NULL, r = android_fdsan_close_with_tag(fd, tag + 1),
		      "ODEBUG: close_with_tag active");
	assert_int_equal(r, 0);
	assert_true(is_open(fd));
	EXPECT_SILENT(assert_int_equal(android_fdsan_close_with_tag(fd, tag), 0));
	assert_false(is_open(fd));
	assert_int_equal(android_fdsan_get_owner_tag(fd), 0);
}

static void fdsan_exchange_from_a_wrong_tag_is_reported_and_changes_nothing(void **state)
{
	int fd = open("/dev/null", O_RDONLY);
	uint64_t tag = android_fdsan_create_owner_tag(ANDROID_FDSAN_OWNER_TYPE_GENERIC_00, 7);

	(void)state;
	android_fdsan_exchange_owner_tag(fd, 0, tag);
	EXPECT_OUTPUT(1, 0, NULL, android_fdsan_exchange_owner_tag(fd, tag + 1, 0),
		      "ODEBUG: exchange_owner_tag active", "nothing changed");
	assert_int_equal(android_fdsan_get_owner_tag(fd), tag);
	EXPECT_SILENT(assert_int_equal(android_fdsan_close_with_tag(fd, tag), 0));
}

/* Scenarios run in a fresh process (run_child). */
static void child(const char *name)
{
	if (!strcmp(name, "daemon")) {
		/* A daemon's standard descriptors closed and reopened, twice. */
		for (int i = 0; i < 2; i++) {
			close(0);
			close(1);
			close(2);
			if (open("/dev/null", O_RDONLY) != 0 || open("/dev/null", O_WRONLY) != 1 ||
			    open("/dev/null", O_WRONLY) != 2)
				_exit(2);
			if (!freopen("/dev/null", "w", stdout))
				_exit(3);
		}
		_exit(0);
	} else if (!strcmp(name, "closefrom")) {
		int a = open("/dev/null", O_RDONLY), b;
		FILE *f = fopen("/dev/null", "w");

		b = open("/dev/null", O_RDONLY);
		closefrom_over(a);
		_exit(!is_open(a) && !is_open(b) && is_open(fileno(f)) && !fclose(f) ? 0 : 1);
	} else if (!strcmp(name, "first")) {
		/* The process's first owner and its culprit, nothing else before. */
		FILE *f = fopen("/dev/null", "w");

		_exit(close_stream_fd(f) == 0 && is_open(fileno(f)) && !fclose(f) ? 0 : 1);
	} else if (!strcmp(name, "inherited")) {
		int fd = atoi(getenv("FD_INHERITED"));

		_exit(is_open(fd) && close(fd) == 0 ? 0 : 1);
	} else if (!strcmp(name, "off")) {
		int fd = open("/dev/null", O_RDONLY);

		android_fdsan_exchange_owner_tag(fd, 0, 5);
		if (android_fdsan_get_owner_tag(fd) != 0 || android_fdsan_close_with_tag(fd, 5))
			_exit(1);
		_exit(is_open(fd));
	}
	_exit(127);
}

/* An owner does not start libodebug (every program opens files); the culprit's close does. */
static void first_owner_and_culprit_of_a_process_are_reported(void **state)
{
	int status;
	char *out = run_child(argv0, "first", &status, NULL);

	(void)state;
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_non_null(strstr(out, "ODEBUG: close active"));
	assert_non_null(strstr(out, "(fopen) owns fd"));
	assert_non_null(strstr(out, "close_stream_fd"));
	free(out);
}

static void daemon_standard_descriptors_closed_and_reopened_are_silent(void **state)
{
	int status;
	char *out = run_child(argv0, "daemon", &status, NULL);

	(void)state;
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_null(strstr(out, "ODEBUG"));
	free(out);
}

static void descriptors_inherited_across_exec_are_silent(void **state)
{
	FILE *f = fopen(path, "w");
	char env[32];
	int status;
	char *out;

	(void)state;
	assert_non_null(f);
	snprintf(env, sizeof(env), "FD_INHERITED=%d", fileno(f));
	out = run_child(argv0, "inherited", &status, env, NULL);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_null(strstr(out, "ODEBUG"));
	free(out);
	assert_int_equal(fclose(f), 0);
}

static void fdsan_calls_with_odebug_unset_keep_no_tag(void **state)
{
	int status;
	char *out = run_child(argv0, "off", &status, "ODEBUG=0", "ODEBUG_OPTIONS=", NULL);

	(void)state;
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	free(out);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(close_of_fileno_before_fclose_is_reported_and_not_made),
		cmocka_unit_test(close_of_dirfd_before_closedir_is_reported),
		cmocka_unit_test(double_close_landing_on_a_new_owner_is_reported),
		cmocka_unit_test(close_range_over_an_owned_descriptor_keeps_it),
		cmocka_unit_test(closefrom_over_an_owned_descriptor_keeps_it),
		cmocka_unit_test(dup2_onto_an_owned_descriptor_is_reported_and_fails),
		cmocka_unit_test(owners_own_close_is_silent),
		cmocka_unit_test(close_of_a_dup_of_an_owned_descriptor_is_silent),
		cmocka_unit_test(fdopen_moves_ownership_to_the_stream),
		cmocka_unit_test(fdopendir_moves_ownership_to_the_directory),
		cmocka_unit_test(failed_fdopen_leaves_the_descriptor_to_its_opener),
		cmocka_unit_test(popen_and_pclose_are_silent),
		cmocka_unit_test(close_that_fails_with_ebadf_is_silent),
		cmocka_unit_test(fork_child_closing_one_by_one_before_exit_is_silent),
		cmocka_unit_test(fork_child_closefrom_is_silent),
		cmocka_unit_test(fork_child_close_range_before_exec_is_silent),
		cmocka_unit_test(fdsan_tags_follow_bionic),
		cmocka_unit_test(fdsan_exchange_from_a_wrong_tag_is_reported_and_changes_nothing),
		cmocka_unit_test(first_owner_and_culprit_of_a_process_are_reported),
		cmocka_unit_test(daemon_standard_descriptors_closed_and_reopened_are_silent),
		cmocka_unit_test(descriptors_inherited_across_exec_are_silent),
		cmocka_unit_test(fdsan_calls_with_odebug_unset_keep_no_tag),
	};

	argv0 = argv[0];
	child_dispatch(argc, argv, child);
	return cmocka_run_group_tests(tests, setup, teardown);
}
