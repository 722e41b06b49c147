/* SPDX-License-Identifier: MIT */
/*
 * scenarios.c - the report tests' scenarios (see scenarios.h): each makes
 * one kind of report, with frames named sinks_arm and sinks_culprit.
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

const char *argv0;
char tmpdir[64];

struct timer {
	void (*fn)(void);
	char pad[24];
};

void sinks_callback(void);
void sinks_callback(void) {}

static void *hint(void *addr) { return (void *)((struct timer *)addr)->fn; }

static const struct debug_obj_descr timer_descr = {
	.name = "sinks_timer", .debug_hint = hint,
};

/* Named frames for the checks below (kept out of line, exported). */
__attribute__((noinline)) void sinks_arm(struct timer *t);
__attribute__((noinline)) void sinks_arm(struct timer *t)
{
	debug_object_init(t, &timer_descr);
	debug_object_activate(t, &timer_descr);
	__asm__ volatile("" ::: "memory");
}

/* A descriptor whose objects are tracked by their first activate. */
static bool always_static(void *addr)
{
	(void)addr;
	return true;
}

static const struct debug_obj_descr static_timer_descr = {
	.name = "sinks_static_timer", .debug_hint = hint, .is_static_object = always_static,
};

__attribute__((noinline)) void sinks_arm_static(struct timer *t);
__attribute__((noinline)) void sinks_arm_static(struct timer *t)
{
	debug_object_activate(t, &static_timer_descr);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void sinks_culprit(struct timer *t);
__attribute__((noinline)) void sinks_culprit(struct timer *t)
{
	release(t, sizeof(*t));	/* a real free() in interposing builds */
	__asm__ volatile("" ::: "memory");
}

static void one_report(void)
{
	struct timer *t = calloc(1, sizeof(*t));

	t->fn = sinks_callback;
	sinks_arm(t);
	sinks_culprit(t);
}

/* An object tracked by its first activate, freed active. */
static void static_report(void)
{
	struct timer *t = calloc(1, sizeof(*t));

	t->fn = sinks_callback;
	sinks_arm_static(t);
	sinks_culprit(t);
}

static void atexit_note(void)
{
	fprintf(stderr, "atexit ran\n");
}

static void child(const char *name)
{
	if (!strcmp(name, "one")) {
		one_report();
	} else if (!strcmp(name, "static")) {
		static_report();
	} else if (!strcmp(name, "two")) {
		one_report();
		fprintf(stderr, "after first\n");
		one_report();
	} else if (!strcmp(name, "exit")) {
		atexit(atexit_note);
		printf("buffered");	/* no newline: flushed by exit() */
		one_report();
	} else if (!strcmp(name, "weird")) {
		static const struct debug_obj_descr weird = {
			.name = "a\"b\\c\nd\001e\303\251\377",
		};
		static char obj[8];

		debug_object_deactivate(obj, &weird);
	} else if (!strcmp(name, "leave-active")) {
		static struct timer t = { sinks_callback, "" };

		sinks_arm(&t);
	} else if (!strcmp(name, "symlink")) {
		char link[128];

		snprintf(link, sizeof(link), "%s/log.%d", tmpdir, getpid());
		if (symlink("/tmp/odebug-sinks-target-must-not-exist", link))
			exit(9);
		one_report();
	} else if (!strcmp(name, "hardlink")) {
		char victim[128], second[128];
		int fd;

		/* Ours, 0600, regular: only its second name gives it away. */
		snprintf(victim, sizeof(victim), "%s/victim", tmpdir);
		snprintf(second, sizeof(second), "%s/log.%d", tmpdir, getpid());
		fd = open(victim, O_WRONLY | O_CREAT | O_EXCL, 0600);
		if (fd < 0 || close(fd) || link(victim, second))
			exit(9);
		one_report();
	} else if (!strcmp(name, "fork")) {
		pid_t pid;
		int status;

		one_report();
		pid = fork();
		if (pid == 0) {
			one_report();
			_exit(0);
		}
		waitpid(pid, &status, 0);
		fprintf(stderr, "child=%d\n", (int)pid);
	} else if (!strcmp(name, "quiet")) {
		FILE *maps = fopen("/proc/self/maps", "r");
		char line[512];
		int dw = 0;

		while (maps && fgets(line, sizeof(line), maps))
			dw |= strstr(line, "libdw") != NULL;
		fprintf(stderr, "libdw loaded=%d\n", dw);
		if (maps)
			fclose(maps);
		/* Nor is a symboliser started (/proc/PID/task/TID/children). */
		snprintf(line, sizeof(line), "/proc/self/task/%d/children", (int)getpid());
		maps = fopen(line, "r");
		fprintf(stderr, "children=%s\n",
			maps && fgets(line, sizeof(line), maps) ? line : "none");
		if (maps)
			fclose(maps);
	}
}

char *run(int *status, const char *scenario, const char *options)
{
	char *env_opt, *out;

	if (asprintf(&env_opt, "ODEBUG_OPTIONS=%s", options) < 0)
		fail();
	out = run_child(argv0, scenario, status, "ODEBUG=1", env_opt, (char *)NULL);
	free(env_opt);
	return out;
}

char *read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *text = calloc(1, 1 << 20);

	assert_non_null(f);
	assert_non_null(text);
	if (fread(text, 1, (1 << 20) - 1, f) == 0)
		text[0] = '\0';
	fclose(f);
	return text;
}

/* The file log.<pid> our child wrote: the only one in tmpdir. */
char *only_log(char *path, size_t size, const char *skip)
{
	char cmd[256];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "ls %s/log.* 2>/dev/null | grep -v '%s' | head -1",
		 tmpdir, skip ? skip : "^$");
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_non_null(fgets(path, (int)size, p));
	path[strcspn(path, "\n")] = '\0';
	pclose(p);
	return path;
}

void clean_tmpdir(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -f %s/*", tmpdir);
	assert_int_equal(system(cmd), 0);
}

int run_scenario_tests(int argc, char **argv, const char *group,
		       const struct CMUnitTest *tests, size_t n)
{
	const char *dir = getenv("ODEBUG_TEST_TMPDIR");
	int rc;

	argv0 = argv[0];
	snprintf(tmpdir, sizeof(tmpdir), "%s", dir ? dir : "");
	child_dispatch(argc, argv, child);
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/odebug-sinks-XXXXXX");
	if (!mkdtemp(tmpdir))
		return 1;
	setenv("ODEBUG_TEST_TMPDIR", tmpdir, 1);
	rc = _cmocka_run_group_tests(group, tests, n, NULL, NULL);
	clean_tmpdir();
	rmdir(tmpdir);
	return rc;
}
