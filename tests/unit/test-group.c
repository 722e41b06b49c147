/* SPDX-License-Identifier: MIT */
/*
 * Reports grouped by cause (lib/report/group.c) and the summary at exit: the same
 * culprit line is one group from any caller (dedup=2: the same stack),
 * another line, operation or type is another; counts
 * stay exact with threads racing on one new cause; dedup=0 prints every
 * report; the summary appears in every sink when something was reported
 * and not at all on a clean run.  Cases that need their own process (the
 * summary, other options) run this program again as a child.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

#define THREADS 8
#define PER_THREAD 2000
#define MANY 1100	/* causes: more than the 1024 groups */

static const char *argv0;
static char tmpdir[64];
static const struct debug_obj_descr other_descr = { .name = "test_other" };

static void deactivate(void *obj)
{
	debug_object_deactivate(obj, &bare_descr);
}

/* Other culprit lines (bodies that differ: identical ones may be folded). */
__attribute__((noinline)) static void deactivate_elsewhere(void *obj)
{
	debug_object_deactivate(obj, &bare_descr);
	__asm__ volatile("nop" ::: "memory");
}

__attribute__((noinline)) static void deactivate_third(void *obj)
{
	debug_object_deactivate(obj, &bare_descr);
	__asm__ volatile("nop; nop" ::: "memory");
}

/* The racers' own repeated line. */
__attribute__((noinline)) static void racers_site(void *obj)
{
	debug_object_deactivate(obj, &other_descr);
	__asm__ volatile("nop; nop; nop" ::: "memory");
}

/* DEPTHS more types, for causes that differ by type alone. */
#define DEPTHS 10
static const struct debug_obj_descr depth_descr[DEPTHS] = {
	[0 ... DEPTHS - 1] = { .name = "test_depth" },
};

/* One call site: every call is the same cause. */
__attribute__((noinline)) static void same_site(void *obj, const struct debug_obj_descr *d)
{
	debug_object_deactivate(obj, d);
	__asm__ volatile("" ::: "memory");
}

static unsigned long distinct_now(void)
{
	return stats_now().distinct;
}

static void same_stack_is_one_group(void **state)
{
	static char objs[20][8];
	unsigned long distinct = distinct_now(), printed = stats_now().printed;
	char *out;
	int i;

	(void)state;
	stats_mark();
	capture_start();
	for (i = 0; i < 20; i++)
		same_site(objs[i], &bare_descr);
	out = capture_stop();
	assert_int_equal(stats_delta().warnings, 20);
	assert_int_equal(distinct_now() - distinct, 1);
	assert_int_equal(stats_now().printed - printed, 1);
	assert_int_equal(count_lines_with(out, "ODEBUG: deactivate not available"), 1);
	assert_int_equal(count_lines_with(out, "ODEBUG: in thread"), 1);
	free(out);
}

static void one_line_from_any_caller_is_one_group_another_line_op_or_type_another(void **state)
{
	static char objs[8][8];
	unsigned long distinct = distinct_now();
	volatile int end = 5;
	char *out;
	int i;

	(void)state;
	capture_start();
	for (i = 0; i < 3; i++)
		at_depth(i, deactivate, objs[i]);	/* three callers, one line */
	deactivate_elsewhere(objs[2]);			/* another line */
	for (i = 3; i < end; i++)		/* not unrolled: one call site */
		same_site(objs[i], &other_descr);	/* same site, other type */
	debug_object_assert_init(objs[5], &bare_descr);	/* another operation */
	debug_object_init(objs[6], &bare_descr);
	debug_object_destroy(objs[6], &bare_descr);
	for (i = 6; i < end + 3; i++)		/* destroyed, then twice untracked */
		same_site(objs[i], &bare_descr);	/* same site, other state */
	out = capture_stop();
	/* same_site's untracked bare_descr call is same_stack_is_one_group's cause. */
	assert_int_equal(distinct_now() - distinct, 5);
	assert_int_equal(count_lines_with(out, "ODEBUG: deactivate destroyed"), 1);
	assert_int_equal(count_lines_with(out, "ODEBUG: deactivate not available"), 3);
	assert_int_equal(count_lines_with(out, "object type: test_other"), 1);
	assert_int_equal(count_lines_with(out, "ODEBUG: assert_init not available"), 1);
	free(out);
}

struct as {
	char *obj;
	int type;
};

/* The object deactivated as one of depth_descr's types. */
static void deactivate_as(void *arg)
{
	const struct as *a = arg;

	debug_object_deactivate(a->obj, &depth_descr[a->type]);
}

/* Every thread: one site many times (one cause), then DEPTHS other causes. */
static void *racer(void *arg)
{
	static char objs[THREADS][8];
	int i, t = (int)(intptr_t)arg;

	for (i = 0; i < PER_THREAD; i++)
		racers_site(objs[t]);
	for (i = 0; i < DEPTHS; i++)
		at_depth(i + 5, deactivate_as, &(struct as){ objs[t], i });
	return NULL;
}

static void race(void)
{
	pthread_t th[THREADS];
	int i;

	for (i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, racer, (void *)(intptr_t)i), 0);
	for (i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
}

static void counts_are_exact_under_threads(void **state)
{
	unsigned long distinct = distinct_now(), printed = stats_now().printed;
	char *out;

	(void)state;
	stats_mark();
	capture_start();
	race();
	out = capture_stop();
	assert_int_equal(stats_delta().warnings, THREADS * (PER_THREAD + DEPTHS));
	assert_int_equal(distinct_now() - distinct, 1 + DEPTHS);
	assert_int_equal(stats_now().printed - printed, 1 + DEPTHS);
	assert_int_equal(count_lines_with(out, "ODEBUG: deactivate not available"), 1 + DEPTHS);
	free(out);
}

/* --- in a child of its own ------------------------------------------- */

/* With stack_depth=2 (same_site and this), one cause from any caller. */
__attribute__((noinline)) static void report_once(void)
{
	static char obj[8];

	same_site(obj, &bare_descr);
	__asm__ volatile("" ::: "memory");
}

/*
 * Fork FORKS children from a process that made no API call (a shell under
 * ODEBUG=1) and print the most page faults one of them took inside fork(),
 * read as its first act: the atfork handlers' cost, which a shell pays on
 * every $(...).
 */
#define FORKS 8
static void fork_faults(void)
{
	long most = 0;
	int i;

	for (i = 0; i < FORKS; i++) {
		struct rusage ru;
		int fd[2];
		long n = -1;
		pid_t pid;

		assert_int_equal(pipe(fd), 0);
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			getrusage(RUSAGE_SELF, &ru);
			n = ru.ru_minflt;
			_exit(write(fd[1], &n, sizeof(n)) == sizeof(n) ? 0 : 1);
		}
		assert_int_equal(read(fd[0], &n, sizeof(n)), sizeof(n));
		waitpid(pid, NULL, 0);
		close(fd[0]);
		close(fd[1]);
		if (n > most)
			most = n;
	}
	printf("child faults %ld\n", most);
}

static void child(const char *name)
{
	static char objs[20][8];
	int i;

	if (!strcmp(name, "repeat")) {
		for (i = 0; i < 20; i++)
			same_site(objs[i], &bare_descr);
		deactivate(objs[0]);		/* three other lines */
		deactivate_elsewhere(objs[1]);
		deactivate_third(objs[2]);
	} else if (!strcmp(name, "types")) {
		/* test_bare: 3 tracked at most, 1 left and active, 1 report. */
		for (i = 0; i < 3; i++)
			debug_object_init(objs[i], &bare_descr);
		debug_object_activate(objs[0], &bare_descr);
		debug_object_free(objs[1], &bare_descr);
		debug_object_free(objs[2], &bare_descr);
		deactivate(objs[3]);		/* untracked: the report */
		debug_object_init(objs[4], &other_descr);	/* test_other: 1, 0, 1, 0 */
	} else if (!strcmp(name, "callers")) {
		for (i = 0; i < 3; i++)
			at_depth(i, deactivate, objs[i]);	/* one line, three callers */
	} else if (!strcmp(name, "race")) {
		race();
	} else if (!strcmp(name, "many")) {
		/* More causes than the table holds: one type each, twice over. */
		static struct debug_obj_descr many[MANY];
		static char obj[8];
		volatile int rounds = 2;	/* not unrolled: one call site */
		int round;

		for (i = 0; i < MANY; i++)
			many[i].name = "many";
		for (round = 0; round < rounds; round++)
			for (i = 0; i < MANY; i++)
				debug_object_deactivate(obj, &many[i]);
	} else if (!strcmp(name, "fork")) {
		pid_t pid;

		report_once();
		pid = fork();
		report_once();	/* the parent's second, the child's first */
		if (pid > 0)
			waitpid(pid, NULL, 0);
	} else if (!strcmp(name, "fork-faults")) {
		fork_faults();
	} else if (!strcmp(name, "fork-faults-started")) {
		static char obj[8];

		debug_object_init(obj, &repair_descr);	/* starts libodebug: one bucket used */
		fork_faults();
		debug_object_free(obj, &repair_descr);
	} else if (!strcmp(name, "fixed")) {
		static char obj[8];

		debug_object_init(obj, &repair_descr);
		debug_object_activate(obj, &repair_descr);
		debug_object_init(obj, &repair_descr);	/* init active: fixed up */
	}
	/* "clean": nothing reported */
}

static char *run(int *status, const char *scenario, const char *options)
{
	char *env_opt, *out;

	if (asprintf(&env_opt, "ODEBUG_OPTIONS=%s", options) < 0)
		fail();
	out = run_child(argv0, scenario, status, "ODEBUG=1", env_opt, (char *)NULL);
	free(env_opt);
	assert_true(WIFEXITED(*status));
	assert_int_equal(WEXITSTATUS(*status), 0);
	return out;
}

static void dedup_0_prints_every_report(void **state)
{
	int status;
	char *out = run(&status, "repeat", "dedup=0:max_reports=100");

	(void)state;
	assert_int_equal(count_lines_with(out, "ODEBUG: deactivate not available"), 23);
	assert_int_equal(count_lines_with(out, "ODEBUG: SUMMARY: 23 warnings, 23 distinct reports (23 printed, 0 suppressed), 0 fixed up"), 1);
	free(out);
	out = run(&status, "repeat", "max_reports=100");
	assert_int_equal(count_lines_with(out, "ODEBUG: deactivate not available"), 4);
	free(out);
}

static void dedup_2_tells_callers_of_one_line_apart(void **state)
{
	int status;
	char *out = run(&status, "callers", "max_reports=100");

	(void)state;
	assert_int_equal(count_lines_with(out, "ODEBUG: deactivate not available"), 1);
	free(out);
	out = run(&status, "callers", "dedup=2:max_reports=100");
	assert_int_equal(count_lines_with(out, "ODEBUG: deactivate not available"), 3);
	free(out);
}

static void summary_on_stderr_counts_and_names_the_option(void **state)
{
	int status;
	char *out = run(&status, "repeat", "max_reports=2");

	(void)state;
	assert_int_equal(count_lines_with(out, "ODEBUG: deactivate not available"), 2);
	assert_int_equal(count_lines_with(out,
		"ODEBUG: SUMMARY: 23 warnings, 4 distinct reports (2 printed, 0 suppressed), 0 fixed up"), 1);
	assert_int_equal(count_lines_with(out,
		"ODEBUG:   report 1 (deactivate, state not available, type test_bare) happened 20 times"), 1);
	assert_int_equal(count_lines_with(out,
		"ODEBUG: 2 distinct reports were not printed (max_reports=2); max_reports=4 prints them all"), 1);
	/* The summary comes last. */
	assert_non_null(strstr(out, "prints them all\n"));
	assert_null(strstr(strstr(out, "ODEBUG: SUMMARY"), "ODEBUG: in thread"));
	free(out);
	out = run(&status, "fixed", "");
	assert_int_equal(count_lines_with(out,
		"ODEBUG: SUMMARY: 1 warning, 1 distinct report (1 printed, 0 suppressed), 1 fixed up"), 1);
	assert_null(strstr(out, "not printed"));
	assert_null(strstr(out, "happened"));
	free(out);
}

/* A forked child groups and summarises its own reports. */
static void forked_child_has_its_own_groups(void **state)
{
	int status;
	char *out = run(&status, "fork", "stack_depth=2");

	(void)state;
	/* Parent: the cause twice (printed once); child: once more, printed. */
	assert_int_equal(count_lines_with(out, "ODEBUG: deactivate not available"), 2);
	assert_int_equal(count_lines_with(out,
		"ODEBUG: SUMMARY: 2 warnings, 1 distinct report (1 printed, 0 suppressed)"), 1);
	assert_int_equal(count_lines_with(out,
		"ODEBUG: SUMMARY: 1 warning, 1 distinct report (1 printed, 0 suppressed)"), 1);
	free(out);
}

static long child_faults_of(const char *scenario, const char *odebug)
{
	long n = -1;
	int status;
	char *out = run_child(argv0, scenario, &status, odebug, (char *)NULL);

	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(sscanf(out, "child faults %ld", &n), 1);
	free(out);
	return n;
}

static long child_faults(const char *odebug)
{
	return child_faults_of("fork-faults", odebug);
}

/*
 * A forked child of a process that reported nothing leaves the 80 KiB
 * group table alone: clearing it would fault in its 21 zero pages in
 * every child (about 41 page faults a fork against 9 without libodebug;
 * 15 without the clearing).
 */
static void a_quiet_fork_does_not_touch_the_group_table(void **state)
{
	long off = child_faults("ODEBUG=0"), on = child_faults("ODEBUG=1");

	(void)state;
	print_message("# page faults in a forked child: %ld with ODEBUG=0, %ld with ODEBUG=1\n",
		      off, on);
	/*
	 * Clearing the table costs its 21 pages or more; the rest of a
	 * child's faults move by a few pages with the build's layout (an
	 * ASan build's data is larger): +16 catches the one, not the other.
	 */
	assert_true(on <= off + 16);
}

/*
 * The fork handlers lock and unlock only the buckets of pages some thread
 * used: locking all 8192 would write every page of the 512 KiB array
 * before the fork, so the parent and the child would each copy all 128 of
 * them (about 142 faults in the child against 9 without libodebug; 17
 * when only the used pages are locked).
 */
static void a_fork_copies_only_the_used_buckets(void **state)
{
	long off = child_faults_of("fork-faults-started", "ODEBUG=0");
	long on = child_faults_of("fork-faults-started", "ODEBUG=1");

	(void)state;
	print_message("# page faults in a forked child of a started process: %ld with ODEBUG=0, "
		      "%ld with ODEBUG=1\n", off, on);
	assert_true(on <= off + 40);
}

static void clean_run_prints_nothing(void **state)
{
	char opts[128], cmd[256];
	int status;
	char *out = run(&status, "clean", "print_stats=0");

	(void)state;
	assert_string_equal(out, "");
	free(out);
	snprintf(opts, sizeof(opts), "log_path=%s/clean:log_format=json", tmpdir);
	out = run(&status, "clean", opts);
	assert_string_equal(out, "");
	free(out);
	snprintf(cmd, sizeof(cmd), "ls %s/clean.* 2>/dev/null", tmpdir);
	assert_int_not_equal(system(cmd), 0);	/* no log file created either */
}

/* The log file PREFIX.<pid> of the child: the only one with that prefix. */
static char *read_log(const char *prefix)
{
	char cmd[256];
	char *text = calloc(1, 1 << 20);
	FILE *p;
	size_t n;

	assert_non_null(text);
	snprintf(cmd, sizeof(cmd), "cat %s/%s.*; rm -f %s/%s.*", tmpdir, prefix, tmpdir, prefix);
	p = popen(cmd, "r");
	assert_non_null(p);
	n = fread(text, 1, (1 << 20) - 1, p);
	text[n] = '\0';
	pclose(p);
	return text;
}

static void summary_goes_to_the_log_file(void **state)
{
	char opts[128];
	int status;
	char *out, *log;

	(void)state;
	snprintf(opts, sizeof(opts), "log_path=%s/text", tmpdir);
	out = run(&status, "repeat", opts);
	assert_null(strstr(out, "ODEBUG"));	/* nothing on stderr */
	log = read_log("text");
	assert_int_equal(count_lines_with(log,
		"ODEBUG: SUMMARY: 23 warnings, 4 distinct reports (4 printed, 0 suppressed), 0 fixed up"), 1);
	free(log);
	free(out);
}

/* JSON: the last line is the summary, with each group's exact count. */
static void json_summary_has_exact_counts(void **state)
{
	char opts[128], cmd[1024], result[256] = "", path[128];
	FILE *p, *f;
	int status;
	char *log;

	(void)state;
	snprintf(opts, sizeof(opts), "log_path=%s/json:log_format=json:max_reports=100", tmpdir);
	free(run(&status, "race", opts));
	log = read_log("json");
	snprintf(path, sizeof(path), "%s/json-copy", tmpdir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(log, f);
	fclose(f);
	free(log);
	snprintf(cmd, sizeof(cmd),
		 "python3 -c 'import json,sys\n"
		 "lines = [json.loads(l) for l in open(sys.argv[1]).read().splitlines()]\n"
		 "s = lines[-1][\"summary\"]\n"
		 "reports = [l for l in lines[:-1] if \"op\" in l]\n"
		 "counts = sorted(g[\"count\"] for g in s[\"groups\"])\n"
		 "print(len(reports), s[\"warnings\"], s[\"distinct\"], s[\"printed\"], s[\"not_printed\"],\n"
		 "      counts[-1], set(counts[:-1]), sorted(g[\"report\"] for g in s[\"groups\"]))' %s",
		 path);
	p = popen(cmd, "r");
	assert_non_null(p);
	if (!fgets(result, sizeof(result), p))
		result[0] = '\0';
	assert_int_equal(pclose(p), 0);
	/* 8 threads: 8 x 2000 from one site, 8 x each of 10 depths. */
	assert_string_equal(result,
		"11 16080 11 11 0 16000 {8} [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]\n");
}

/* The kernel's rows, unchanged and in order, then distinct and printed. */
static void print_stats_adds_distinct_and_printed(void **state)
{
	static const char *const rows[] = {
		"max_chain     : ", "max_checked   : ", "warnings      : 23\n",
		"suppressed    : 0\n", "fixups        : 0\n", "pool_free     : ",
		"pool_min_free : ", "pool_used     : ", "pool_max_used : ",
		"objs_allocated: ", "objs_freed    : ", "distinct      : 4\n",
		"printed       : 2\n",
	};
	int status;
	char *out = run(&status, "repeat", "print_stats=1:max_reports=2");
	const char *at = out;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		at = strstr(at, rows[i]);
		assert_non_null(at);
		assert_true(at == out || at[-1] == '\n');
	}
	free(out);
}

static void print_stats_adds_a_table_per_type(void **state)
{
	int status;
	char *out = run(&status, "types", "print_stats=1");

	(void)state;
	assert_int_equal(count_lines_with(out,
		"ODEBUG: type                  tracked   active     most  reports"), 1);
	assert_int_equal(count_lines_with(out,
		"ODEBUG: test_bare                   1        1        3        1"), 1);
	assert_int_equal(count_lines_with(out,
		"ODEBUG: test_other                  1        0        1        0"), 1);
	assert_int_equal(count_lines_with(out, "ODEBUG: selftest"), 0);
	free(out);
	out = run(&status, "types", "print_stats=0");
	assert_int_equal(count_lines_with(out, "tracked   active"), 0);
	free(out);
}

static void a_full_table_counts_new_causes_as_distinct(void **state)
{
	int status;
	char *out = run(&status, "many", "max_reports=0");

	(void)state;
	/* 1024 groups; 76 causes ungrouped in each of the two rounds. */
	assert_int_equal(count_lines_with(out,
		"ODEBUG: SUMMARY: 2200 warnings, 1176 distinct reports (0 printed, 0 suppressed), 0 fixed up"), 1);
	assert_int_equal(count_lines_with(out,
		"ODEBUG: the group table was full: 152 reports were not grouped"), 1);
	assert_int_equal(count_lines_with(out,
		"ODEBUG: 1176 distinct reports were not printed (max_reports=0); max_reports=1176 prints them all"), 1);
	free(out);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(same_stack_is_one_group),
		cmocka_unit_test(one_line_from_any_caller_is_one_group_another_line_op_or_type_another),
		cmocka_unit_test(counts_are_exact_under_threads),
		cmocka_unit_test(dedup_0_prints_every_report),
		cmocka_unit_test(dedup_2_tells_callers_of_one_line_apart),
		cmocka_unit_test(summary_on_stderr_counts_and_names_the_option),
		cmocka_unit_test(clean_run_prints_nothing),
		cmocka_unit_test(forked_child_has_its_own_groups),
		cmocka_unit_test(a_quiet_fork_does_not_touch_the_group_table),
		cmocka_unit_test(a_fork_copies_only_the_used_buckets),
		cmocka_unit_test(summary_goes_to_the_log_file),
		cmocka_unit_test(json_summary_has_exact_counts),
		cmocka_unit_test(a_full_table_counts_new_causes_as_distinct),
		cmocka_unit_test(print_stats_adds_distinct_and_printed),
		cmocka_unit_test(print_stats_adds_a_table_per_type),
	};
	char cmd[128];
	int rc;

	argv0 = argv[0];
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/odebug-group.%d", (int)getpid());
	child_dispatch(argc, argv, child);
	if (mkdir(tmpdir, 0700))
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	if (system(cmd))
		rc = 1;
	return rc;
}
