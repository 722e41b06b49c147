/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

struct fixup_call calls[MAX_CALLS];
int ncalls;
bool fixup_result[FIX_MAX];

__attribute__((noinline)) void at_depth(int depth, void (*fn)(void *arg), void *arg)
{
	if (depth > 0)
		at_depth(depth - 1, fn, arg);
	else
		fn(arg);
	__asm__ volatile("" ::: "memory");	/* no tail call: keep the frame */
}

void calls_reset(void)
{
	ncalls = 0;
	memset(fixup_result, 0, sizeof(fixup_result));
}

static bool record(enum fixup_kind kind, void *addr, enum debug_obj_state state)
{
	if (ncalls < MAX_CALLS)
		calls[ncalls++] = (struct fixup_call){ kind, addr, state };
	return fixup_result[kind];
}

static bool rec_init(void *a, enum debug_obj_state s) { return record(FIX_INIT, a, s); }
static bool rec_activate(void *a, enum debug_obj_state s) { return record(FIX_ACTIVATE, a, s); }
static bool rec_destroy(void *a, enum debug_obj_state s) { return record(FIX_DESTROY, a, s); }
static bool rec_free(void *a, enum debug_obj_state s) { return record(FIX_FREE, a, s); }
static bool rec_assert_init(void *a, enum debug_obj_state s) { return record(FIX_ASSERT_INIT, a, s); }

const struct debug_obj_descr rec_descr = {
	.name = "test_rec",
	.fixup_init = rec_init,
	.fixup_activate = rec_activate,
	.fixup_destroy = rec_destroy,
	.fixup_free = rec_free,
	.fixup_assert_init = rec_assert_init,
};

static bool rep_init(void *a, enum debug_obj_state s)
{
	record(FIX_INIT, a, s);
	if (s != ODEBUG_STATE_ACTIVE)
		return false;
	debug_object_deactivate(a, &repair_descr);
	debug_object_init(a, &repair_descr);
	return true;
}

static bool rep_activate(void *a, enum debug_obj_state s)
{
	record(FIX_ACTIVATE, a, s);
	if (s != ODEBUG_STATE_ACTIVE)
		return false;
	debug_object_deactivate(a, &repair_descr);
	debug_object_activate(a, &repair_descr);
	return true;
}

static bool rep_destroy(void *a, enum debug_obj_state s)
{
	record(FIX_DESTROY, a, s);
	if (s != ODEBUG_STATE_ACTIVE)
		return false;
	debug_object_deactivate(a, &repair_descr);
	debug_object_destroy(a, &repair_descr);
	return true;
}

static bool rep_free(void *a, enum debug_obj_state s)
{
	record(FIX_FREE, a, s);
	if (s != ODEBUG_STATE_ACTIVE)
		return false;
	debug_object_deactivate(a, &repair_descr);
	debug_object_free(a, &repair_descr);
	return true;
}

const struct debug_obj_descr repair_descr = {
	.name = "test_repair",
	.fixup_init = rep_init,
	.fixup_activate = rep_activate,
	.fixup_destroy = rep_destroy,
	.fixup_free = rep_free,
};

const struct debug_obj_descr bare_descr = { .name = "test_bare" };

void release(void *p, size_t size)
{
#ifndef ODEBUG_TEST_INTERPOSE
	debug_check_no_obj_freed(p, size);
#else
	(void)size;
#endif
	free(p);
}

static struct debug_objects_stats mark;

struct debug_objects_stats stats_now(void)
{
	struct debug_objects_stats s;

	assert_int_equal(debug_objects_get_stats(&s, sizeof(s)), sizeof(s));
	return s;
}

void stats_mark(void)
{
	mark = stats_now();
}

struct stats_delta stats_delta(void)
{
	struct debug_objects_stats s = stats_now();

	return (struct stats_delta){
		.warnings = (long)(s.warnings - mark.warnings),
		.fixups = (long)(s.fixups - mark.fixups),
		.suppressed = (long)(s.suppressed - mark.suppressed),
		.used = (long)(s.pool_used - mark.pool_used),
	};
}

static int saved_stderr = -1, capture_fd = -1;

void capture_start(void)
{
	char path[] = "/tmp/odebug-test-XXXXXX";

	capture_fd = mkstemp(path);
	assert_true(capture_fd >= 0);
	unlink(path);
	saved_stderr = dup(2);
	dup2(capture_fd, 2);
}

char *capture_stop(void)
{
	off_t size;
	char *text;

	dup2(saved_stderr, 2);
	close(saved_stderr);
	size = lseek(capture_fd, 0, SEEK_END);
	text = calloc(1, (size_t)size + 1);
	assert_non_null(text);
	assert_int_equal(pread(capture_fd, text, (size_t)size, 0), size);
	close(capture_fd);
	return text;
}

bool capture_has(const char *needle)
{
	char *text;
	bool has;
	off_t size = lseek(capture_fd, 0, SEEK_END);

	text = calloc(1, (size_t)size + 1);
	assert_non_null(text);
	assert_int_equal(pread(capture_fd, text, (size_t)size, 0), size);
	has = strstr(text, needle) != NULL;
	free(text);
	return has;
}

int count_lines_with(const char *text, const char *needle)
{
	int n = 0;
	const char *line = text;

	while (line && *line) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);

		if (memmem(line, len, needle, strlen(needle)))
			n++;
		line = end ? end + 1 : NULL;
	}
	return n;
}

char *run_child(const char *argv0, const char *name, int *status, ...)
{
	int pipefd[2];
	pid_t pid;
	char *buf = NULL;
	size_t len = 0, cap = 0;
	va_list ap;

	assert_int_equal(pipe(pipefd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		const char *kv;

		va_start(ap, status);
		while ((kv = va_arg(ap, const char *)))
			putenv((char *)kv);
		va_end(ap);
		dup2(pipefd[1], 1);
		dup2(pipefd[1], 2);
		close(pipefd[0]);
		execl("/proc/self/exe", argv0, "--child", name, (char *)NULL);
		_exit(127);
	}
	close(pipefd[1]);
	for (;;) {
		ssize_t n;

		if (cap - len < 4096) {
			cap = cap ? cap * 2 : 8192;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
		n = read(pipefd[0], buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	close(pipefd[0]);
	assert_int_equal(waitpid(pid, status, 0), pid);
	return buf;
}

void child_dispatch(int argc, char **argv, void (*run)(const char *name))
{
	if (argc == 3 && !strcmp(argv[1], "--child")) {
		run(argv[2]);
		exit(0);
	}
}

/* The report's first frames (#0 or #1) name @fn: the culprit's call. */
void assert_culprit(const char *out, const char *fn)
{
	const char *f0 = strstr(out, "    #0 "), *f2 = f0 ? strstr(f0, "    #2 ") : NULL;
	const char *hit = f0 ? strstr(f0, fn) : NULL;

	if (!f0 || !hit || (f2 && hit > f2))
		fail_msg("%s is not in the first frames of:\n%s", fn, out);
}

void expect_output(char *out, struct stats_delta d, long warnings, long fixups,
		   const char *culprit, const char *const *want, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strstr(out, want[i]))
			fail_msg("missing \"%s\" in:\n%s", want[i], out);
	if (d.warnings != warnings)
		fail_msg("%ld warnings, not %ld:\n%s", d.warnings, warnings, out);
	if (fixups >= 0 && d.fixups != fixups)
		fail_msg("%ld fixups, not %ld:\n%s", d.fixups, fixups, out);
	if (culprit)
		assert_culprit(out, culprit);
	free(out);
}
