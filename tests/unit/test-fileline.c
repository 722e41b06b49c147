/* SPDX-License-Identifier: MIT */
/*
 * Naming frames: static functions are named and frames end in
 * " at file:line" (built with -g); an inlined call is a frame of its own;
 * the symboliser is an external process started by the first report, with
 * a scrubbed environment; libdw (and with it libdebuginfod) is never
 * loaded; without a symboliser frames are "module+0xoffset".
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"

static const char *argv0;
static int culprit_line, inline_line, caller_line;

static bool mapped(const char *name)
{
	FILE *maps = fopen("/proc/self/maps", "r");
	char line[512];
	bool found = false;

	while (maps && fgets(line, sizeof(line), maps))
		found |= strstr(line, name) != NULL;
	if (maps)
		fclose(maps);
	return found;
}

/* static: not in .dynsym, named only through the symbol table. */
__attribute__((noinline)) static void hidden_culprit(char *block)
{
	release(block, 64); culprit_line = __LINE__;
	__asm__ volatile("" ::: "memory");
}

/* Inlined into its caller: a frame of its own all the same. */
static inline __attribute__((always_inline)) void inlined_culprit(char *obj)
{
	debug_object_activate(obj, &repair_descr); inline_line = __LINE__;
}

__attribute__((noinline)) static void inline_caller(char *obj)
{
	inlined_culprit(obj); caller_line = __LINE__;
	__asm__ volatile("" ::: "memory");
}

/* The line of @out holding @needle, as a string of its own (malloc'ed). */
static char *line_with(const char *out, const char *needle)
{
	const char *s = strstr(out, needle), *bol, *eol;

	if (!s)
		return NULL;
	for (bol = s; bol > out && bol[-1] != '\n'; bol--)
		;
	eol = strchr(s, '\n');
	return strndup(bol, eol ? (size_t)(eol - bol) : strlen(bol));
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), m = strlen(tail);

	return n >= m && !strcmp(s + n - m, tail);
}

static void report_names_static_function_and_line(void **state)
{
	char *block = malloc(64), *out, *frame, want[128];

	(void)state;
	debug_object_init(block, &repair_descr);
	debug_object_activate(block, &repair_descr);
	capture_start();
	hidden_culprit(block);
	out = capture_stop();
	snprintf(want, sizeof(want), "/test-fileline.c:%d", culprit_line);
	/* The culprit's frame (#0, or #1 below the sanitizer build's release()). */
	frame = line_with(out, " in hidden_culprit+0x");
	assert_non_null(frame);
	assert_true(ends_with(frame, want));
	assert_non_null(strstr(frame, "test-fileline+0x"));
	free(frame);
	free(out);
}

static void inlined_call_is_a_frame_of_its_own(void **state)
{
	static char obj[16];
	char *out, *inl, *caller, want[64];
	const char *next;

	(void)state;
	debug_object_init(obj, &repair_descr);
	debug_object_activate(obj, &repair_descr);
	capture_start();
	inline_caller(obj);
	out = capture_stop();
	inl = line_with(out, " in inlined_culprit (inlined) (");
	assert_non_null(inl);
	snprintf(want, sizeof(want), "/test-fileline.c:%d", inline_line);
	assert_true(ends_with(inl, want));
	/* The next frame is the caller, at the line of the inlined call. */
	next = strstr(out, inl) + strlen(inl) + 1;
	caller = line_with(next, " in ");
	assert_non_null(caller);
	assert_non_null(strstr(caller, " in inline_caller"));
	assert_non_null(strstr(caller, "+0x"));
	assert_null(strstr(caller, "(inlined)"));
	snprintf(want, sizeof(want), "/test-fileline.c:%d", caller_line);
	assert_true(ends_with(caller, want));
	free(inl);
	free(caller);
	free(out);
	debug_object_deactivate(obj, &repair_descr);
}

/* A report never loads libdw, libdebuginfod or the network stack. */
static void report_loads_nothing(void **state)
{
	static char obj[16];
	char *out;

	(void)state;
	debug_object_init(obj, &repair_descr);
	debug_object_activate(obj, &repair_descr);
	capture_start();
	debug_object_init(obj, &repair_descr);
	out = capture_stop();
	assert_non_null(strstr(out, "ODEBUG: init active"));
	assert_false(mapped("/libdw"));
	assert_false(mapped("libdebuginfod"));
	assert_false(mapped("libcurl"));
	free(out);
}

/* --- in children, with other options -------------------------------- */

/* A thread's whole life: the block's init, activation and free. */
static void *thread_culprit(void *arg)
{
	char *block = malloc(64);

	(void)arg;
	debug_object_init(block, &bare_descr);
	debug_object_activate(block, &bare_descr);
	hidden_culprit(block);
	return NULL;
}

static void child(const char *name)
{
	char *block;

	if (!strcmp(name, "thread")) {
		pthread_t t;

		pthread_create(&t, NULL, thread_culprit, NULL);
		pthread_join(t, NULL);
		return;
	}

	if (!strcmp(name, "repeat")) {
		int i;

		for (i = 0; i < 10; i++) {
			block = malloc(64);
			debug_object_init(block, &repair_descr);
			debug_object_activate(block, &repair_descr);
			hidden_culprit(block);
		}
		fprintf(stderr, "warnings=%lu suppressed=%lu\n",
			(unsigned long)stats_now().warnings, (unsigned long)stats_now().suppressed);
		return;
	}
	if (!strcmp(name, "inline")) {
		static char obj[16];

		debug_object_init(obj, &repair_descr);
		debug_object_activate(obj, &repair_descr);
		inline_caller(obj);
		fprintf(stderr, "warnings=%lu suppressed=%lu\n",
			(unsigned long)stats_now().warnings, (unsigned long)stats_now().suppressed);
		return;
	}
	block = malloc(64);	/* (only here: LeakSanitizer checks the children) */
	debug_object_init(block, &repair_descr);
	debug_object_activate(block, &repair_descr);
	hidden_culprit(block);
}

/* symbolizer=none: each frame is the address and module+offset. */
static void without_symbolizer_frames_are_module_offsets(void **state)
{
	int status;
	char *out = run_child(argv0, "report", &status, "ODEBUG=1",
			      "ODEBUG_OPTIONS=symbolizer=none", NULL);
	char *frame;

	(void)state;
	assert_int_equal(status, 0);
	frame = line_with(out, "    #0 0x");
	assert_non_null(frame);
	assert_non_null(strstr(frame, " in ?? ("));
	assert_non_null(strstr(frame, "/test-fileline+0x"));
	free(frame);
	free(out);
}

/*
 * A thread started by pthread_create runs its start routine from
 * libodebug's (preload/pthread-create.c): that frame is not the program's
 * and is not shown, in the culprit's stack nor in origins=1 stacks.
 */
static void thread_stacks_show_no_libodebug_frame(void **state)
{
	int status;
	char *out = run_child(argv0, "thread", &status, "ODEBUG=1",
			      "ODEBUG_OPTIONS=origins=1", NULL);

	(void)state;
	assert_int_equal(status, 0);
	assert_non_null(strstr(out, "ODEBUG: free active"));
	assert_non_null(strstr(out, " in thread_culprit"));
	assert_non_null(strstr(out, "ODEBUG: object initialised at:"));
	assert_non_null(strstr(out, "ODEBUG: object activated at:"));
	if (strstr(out, "/libodebug.so") || strstr(out, "prepared_start"))
		fail_msg("a libodebug frame in a report:\n%s", out);
	free(out);
}

/* func: rules match inlined frames too. */
static void func_rule_matches_an_inlined_frame(void **state)
{
	char path[] = "/tmp/odebug-inl.XXXXXX", opt[128];
	int fd = mkstemp(path), status;
	char *out;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "func:inlined_cul*\n", 18), 18);
	close(fd);
	snprintf(opt, sizeof(opt), "ODEBUG_OPTIONS=suppressions=%s", path);
	out = run_child(argv0, "inline", &status, "ODEBUG=1", opt, NULL);
	unlink(path);
	assert_int_equal(status, 0);
	assert_null(strstr(out, "ODEBUG: activate active"));
	assert_non_null(strstr(out, "warnings=1 suppressed=1"));
	free(out);
}

/*
 * A func: rule's verdict on a stack is remembered: ten reports from one
 * call site ask the symboliser for one stack's names, not ten (a fake
 * symboliser records the requests).
 */
static void func_rule_verdict_is_remembered_per_stack(void **state)
{
	char dir[] = "/tmp/odebug-verdict.XXXXXX", fake[128], reqs[160], supp[160];
	char opt[400], line[512];
	int status, lines = 0;
	char *out;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(fake, sizeof(fake), "%s/llvm-symbolizer", dir);
	snprintf(reqs, sizeof(reqs), "%s/requests", dir);
	snprintf(supp, sizeof(supp), "%s/supp", dir);
	f = fopen(fake, "w");
	assert_non_null(f);
	fprintf(f, "#!/bin/sh\nwhile read -r l; do echo \"$l\" >> %s; printf '??\\n\\n'; done\n",
		reqs);
	fclose(f);
	chmod(fake, 0755);
	f = fopen(supp, "w");
	assert_non_null(f);
	fputs("func:no_such_function\n", f);
	fclose(f);
	snprintf(opt, sizeof(opt), "ODEBUG_OPTIONS=max_reports=0:symbolizer=%s:suppressions=%s",
		 fake, supp);
	out = run_child(argv0, "repeat", &status, "ODEBUG=1", opt, NULL);
	assert_int_equal(status, 0);
	assert_non_null(strstr(out, "warnings=10 suppressed=0"));
	f = fopen(reqs, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		lines++;
	fclose(f);
	/* One stack of about 8 frames; ten would be 80. */
	assert_true(lines > 0 && lines <= 32);
	unlink(reqs);
	unlink(supp);
	unlink(fake);
	rmdir(dir);
	free(out);
}

/* A symboliser that cannot be run: module+offset, nothing else changes. */
static void missing_symbolizer_falls_back(void **state)
{
	int status;
	char *out = run_child(argv0, "report", &status, "ODEBUG=1",
			      "ODEBUG_OPTIONS=symbolizer=/nonexistent/llvm-symbolizer", NULL);
	char *frame;

	(void)state;
	assert_int_equal(status, 0);
	frame = line_with(out, "    #0 0x");
	assert_non_null(frame);
	assert_non_null(strstr(frame, " in ?? ("));
	assert_non_null(strstr(frame, "/test-fileline+0x"));
	free(frame);
	free(out);
}

/* symbolizer=/usr/bin/addr2line: names and lines, no +offset. */
static void addr2line_names_frames(void **state)
{
	int status;
	char *out, *frame, want[64];

	(void)state;
	if (access("/usr/bin/addr2line", X_OK))
		skip();
	out = run_child(argv0, "report", &status, "ODEBUG=1",
			"ODEBUG_OPTIONS=symbolizer=/usr/bin/addr2line", NULL);
	assert_int_equal(status, 0);
	frame = line_with(out, " in hidden_culprit ");
	assert_non_null(frame);
	snprintf(want, sizeof(want), "/test-fileline.c:%d", culprit_line);
	assert_true(ends_with(frame, want));
	free(frame);
	free(out);
}

/*
 * The symboliser runs with a scrubbed environment: a fake one records what
 * it was given.  No LD_PRELOAD, no ODEBUG*, no DEBUGINFOD_URLS.
 */
static void symbolizer_environment_is_scrubbed(void **state)
{
	char dir[] = "/tmp/odebug-sym.XXXXXX", fake[128], envf[160], opt[200];
	char got[4096] = "";
	FILE *f;
	int status;
	size_t n = 0;
	char *out;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(fake, sizeof(fake), "%s/llvm-symbolizer", dir);
	snprintf(envf, sizeof(envf), "%s/env", dir);
	f = fopen(fake, "w");
	assert_non_null(f);
	fprintf(f, "#!/bin/sh\nenv > %s\nexit 0\n", envf);
	fclose(f);
	chmod(fake, 0755);
	snprintf(opt, sizeof(opt), "ODEBUG_OPTIONS=symbolizer=%s", fake);
	out = run_child(argv0, "report", &status, "ODEBUG=1", opt,
			"DEBUGINFOD_URLS=http://127.0.0.1:9/", "LD_PRELOAD=", NULL);
	assert_int_equal(status, 0);
	/* It said nothing: frames fall back to module+offset. */
	assert_non_null(strstr(out, "/test-fileline+0x"));
	f = fopen(envf, "r");
	assert_non_null(f);
	n = fread(got, 1, sizeof(got) - 1, f);
	got[n] = '\0';
	fclose(f);
	assert_null(strstr(got, "DEBUGINFOD"));
	assert_null(strstr(got, "ODEBUG"));
	assert_null(strstr(got, "LD_"));
	assert_non_null(strstr(got, "PATH="));
	unlink(envf);
	unlink(fake);
	rmdir(dir);
	free(out);
}

int test_main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(report_names_static_function_and_line),
		cmocka_unit_test(inlined_call_is_a_frame_of_its_own),
		cmocka_unit_test(report_loads_nothing),
		cmocka_unit_test(without_symbolizer_frames_are_module_offsets),
		cmocka_unit_test(thread_stacks_show_no_libodebug_frame),
		cmocka_unit_test(func_rule_matches_an_inlined_frame),
		cmocka_unit_test(func_rule_verdict_is_remembered_per_stack),
		cmocka_unit_test(missing_symbolizer_falls_back),
		cmocka_unit_test(addr2line_names_frames),
		cmocka_unit_test(symbolizer_environment_is_scrubbed),
	};

	argv0 = argv[0];
	child_dispatch(argc, argv, child);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
