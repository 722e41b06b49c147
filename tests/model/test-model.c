/* SPDX-License-Identifier: MIT */
/*
 * test-model.c - differential testing of libodebug against the reference
 * model (model.c), through the engine in diff.c.
 *
 *   test-model [--seed N | --random] [--steps N] [--threads T]
 *   test-model --seeds FILE          regression list (see seeds.txt)
 *   test-model --replay FILE         one saved operation sequence
 *   options:   --minimise [--out FILE]  shrink a failing sequence
 *              --inject-bug          a deliberately wrong model
 *              --coverage            print the state-table coverage
 *
 * Needs ODEBUG=1 (ODEBUG_OPTIONS=max_reports=0 keeps it quiet).  The last
 * line is "N passed, N failed"; the exit status is 1 on any failure, 77
 * (skipped) when libodebug is disabled.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "odebug.h"
#include "model.h"
#include "diff.h"

static bool inject_bug, want_minimise, want_coverage;
static const char *out_path;
static unsigned long cover[MOP_MAX * MROW_MAX];
static unsigned long passed, failed;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t layout_of(uint64_t seed)
{
	return seed * 0x2545F4914F6CDD1Dull + 1;
}

/* ---- single-threaded runs ---- */

/*
 * Run @n operations, from @ops or (ops == NULL) drawn from @seed.  Returns
 * the index of the failing step, n if the steps passed and the final
 * release failed, or -1 when all is well.
 */
static long run_single(uint64_t seed, uint64_t layout, const struct op *ops,
		       size_t n, FILE *log)
{
	char stack_area[DIFF_STACK_AREA];
	struct world_config cfg = {
		.layout_seed = layout, .stack_area = stack_area,
		.inject_bug = inject_bug, .log = log,
	};
	struct world *w = world_new(&cfg);
	uint64_t rng = seed;
	struct op op;
	long fail = -1;
	size_t i;

	if (!w) {
		fprintf(log, "model: cannot start (is ODEBUG=1 set?)\n");
		return 0;
	}
	for (i = 0; i < n; i++) {
		if (ops)
			op = ops[i];
		else
			op_random(&rng, &op, false);
		if (world_step(w, &op)) {
			fail = (long)i;
			break;
		}
	}
	if (fail < 0 && world_finish(w))
		fail = (long)n;
	world_cover(w, cover);
	world_free(w);
	if (fail >= 0)
		diff_drop_all();	/* leave nothing for the next run */
	return fail;
}

/* Does @ops fail?  In a child, so a crash or a hang is a failure too. */
static bool fails(const struct op *ops, size_t n, uint64_t layout)
{
	pid_t pid;
	int status;

	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(2);
	}
	if (pid == 0) {
		FILE *null = fopen("/dev/null", "w");

		alarm(60);
		_exit(run_single(0, layout, ops, n, null ? null : stderr) >= 0);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* Delta debugging (ddmin): the smallest sequence that still fails. */
static size_t minimise(struct op *ops, size_t n, uint64_t layout)
{
	struct op *tmp = malloc(n * sizeof(*ops));
	size_t gran = 2, trials = 0, k;

	if (!tmp)
		abort();
	/* Most failures need only recent history: try suffixes first. */
	for (k = 16; k < n; k *= 4) {
		trials++;
		if (fails(ops + n - k, k, layout)) {
			memmove(ops, ops + n - k, k * sizeof(*ops));
			n = k;
			break;
		}
	}
	while (n >= 2) {
		size_t chunk = (n + gran - 1) / gran, start;
		bool reduced = false;

		for (start = 0; start < n; start += chunk) {
			size_t end = start + chunk < n ? start + chunk : n, m;

			memcpy(tmp, ops, start * sizeof(*ops));
			memcpy(tmp + start, ops + end, (n - end) * sizeof(*ops));
			m = n - (end - start);
			trials++;
			if (m && fails(tmp, m, layout)) {
				memcpy(ops, tmp, m * sizeof(*ops));
				n = m;
				gran = gran > 2 ? gran - 1 : 2;
				reduced = true;
				break;
			}
		}
		if (!reduced) {
			if (gran >= n)
				break;
			gran = gran * 2 < n ? gran * 2 : n;
		}
	}
	free(tmp);
	printf("model: minimised to %zu operations in %zu trials\n", n, trials);
	return n;
}

static void save_ops(FILE *f, const struct op *ops, size_t n, uint64_t layout)
{
	size_t i;

	fprintf(f, "layout %llu\n", (unsigned long long)layout);
	for (i = 0; i < n; i++)
		op_print(f, &ops[i]);
}

static void minimise_seed(uint64_t seed, size_t steps)
{
	struct op *ops = malloc((steps + 1) * sizeof(*ops));
	uint64_t rng = seed, layout = layout_of(seed);
	size_t i, n;
	FILE *f;

	if (!ops)
		abort();
	for (i = 0; i < steps; i++)
		op_random(&rng, &ops[i], false);
	if (!fails(ops, steps, layout)) {
		printf("model: the failure did not reproduce in a fresh process\n");
		free(ops);
		return;
	}
	n = minimise(ops, steps, layout);
	printf("model: --- minimised sequence (save as tests/model/regress/NAME.ops) ---\n");
	save_ops(stdout, ops, n, layout);
	printf("model: ---\n");
	if (out_path && (f = fopen(out_path, "w"))) {
		save_ops(f, ops, n, layout);
		fclose(f);
		printf("model: written to %s\n", out_path);
	}
	free(ops);
}

static void run_seed(uint64_t seed, size_t steps)
{
	double t0 = now(), dt;
	long fail = run_single(seed, layout_of(seed), NULL, steps, stderr);

	dt = now() - t0;
	if (fail < 0) {
		passed++;
		printf("ok: seed %llu, %zu steps in %.2f s (%.0f steps/s)\n",
		       (unsigned long long)seed, steps, dt, (double)steps / dt);
		return;
	}
	failed++;
	printf("FAIL: seed %llu failed at step %ld of %zu\n"
	       "  replay:   test-model --seed %llu --steps %ld\n"
	       "  minimise: test-model --seed %llu --steps %ld --minimise --out FILE\n",
	       (unsigned long long)seed, fail, steps, (unsigned long long)seed,
	       fail + 1, (unsigned long long)seed, fail + 1);
	if (want_minimise)
		minimise_seed(seed, (size_t)fail + 1);
}

/* A listing file (ops or seeds), or a FAIL line and NULL. */
static FILE *open_listing(const char *path)
{
	FILE *f = fopen(path, "r");

	if (!f) {
		printf("FAIL: cannot open %s: %s\n", path, strerror(errno));
		failed++;
	}
	return f;
}

/* The next line that is neither a comment nor empty; false at the end. */
static bool next_entry(FILE *f, char *line, int size)
{
	while (fgets(line, size, f))
		if (line[0] != '#' && line[0] != '\n')
			return true;
	return false;
}

static void run_replay(const char *path)
{
	FILE *f = open_listing(path);
	char line[256];
	struct op *ops = NULL;
	size_t n = 0, cap = 0;
	unsigned long long layout = 1;
	long fail;

	if (!f)
		return;
	while (next_entry(f, line, sizeof(line))) {
		if (sscanf(line, "layout %llu", &layout) == 1)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			ops = realloc(ops, cap * sizeof(*ops));
			if (!ops)
				abort();
		}
		if (!op_parse(line, &ops[n])) {
			printf("FAIL: %s: bad line: %s", path, line);
			failed++;
			fclose(f);
			free(ops);
			return;
		}
		n++;
	}
	fclose(f);
	fail = run_single(0, layout, ops, n, stderr);
	if (fail < 0) {
		passed++;
		printf("ok: %s, %zu steps\n", path, n);
	} else {
		failed++;
		printf("FAIL: %s failed at step %ld\n", path, fail);
		if (want_minimise) {
			n = minimise(ops, (size_t)fail + 1 < n ? (size_t)fail + 1 : n, layout);
			save_ops(stdout, ops, n, layout);
		}
	}
	free(ops);
}

/* ---- threads ---- */

static const struct debug_obj_descr shared_descr = { .name = "model_shared" };

struct thread_run {
	pthread_t thread;
	unsigned int index, nthreads;
	uint64_t seed;
	size_t steps;
	long fail;
	unsigned long warnings, fixups, tracked;
	unsigned long cover[MOP_MAX * MROW_MAX];
};

/*
 * A thread owns its own objects, checked against its own model after every
 * step; on the shared objects it only does what commutes (init,
 * deactivate, assert_init of INIT/INACTIVE objects).
 */
static void *thread_main(void *arg)
{
	struct thread_run *t = arg;
	struct world_config cfg = {
		.thread = t->index, .nthreads = t->nthreads,
		.layout_seed = layout_of(t->seed) + t->index, .log = stderr,
		.inject_bug = inject_bug,
	};
	struct world *w = world_new(&cfg);
	uint64_t rng = t->seed ^ (0x9E3779B97F4A7C15ull * (t->index + 1));
	struct op op;
	size_t i;

	t->fail = -1;
	if (!w) {
		t->fail = 0;
		return NULL;
	}
	for (i = 0; i < t->steps; i++) {
		uint64_t r = diff_rand(&rng);

		if (r % 4 == 0) {
			void *obj = diff_shared_addr(t->nthreads, (unsigned int)(r >> 8) % DIFF_MAX_SHARED);

			switch ((r >> 16) % 3) {
			case 0: debug_object_init(obj, &shared_descr); break;
			case 1: debug_object_deactivate(obj, &shared_descr); break;
			default: debug_object_assert_init(obj, &shared_descr); break;
			}
		}
		op_random(&rng, &op, true);
		if (world_step(w, &op)) {
			t->fail = (long)i;
			break;
		}
	}
	if (t->fail < 0 && world_finish(w))
		t->fail = (long)t->steps;
	world_model_totals(w, &t->warnings, &t->fixups, &t->tracked);
	world_cover(w, t->cover);
	world_free(w);
	return NULL;
}

static void run_threads(uint64_t seed, size_t steps, unsigned int nthreads)
{
	struct thread_run t[DIFF_MAX_THREADS];
	struct debug_objects_stats s0, s1;
	unsigned long warnings = 0, fixups = 0, tracked = 0;
	double t0, dt;
	unsigned int i, k;
	bool ok = true;

	if (nthreads > DIFF_MAX_THREADS)
		nthreads = DIFF_MAX_THREADS;
	diff_check_free();
	diff_drop_all();
	for (k = 0; k < DIFF_MAX_SHARED; k++)
		debug_object_init(diff_shared_addr(nthreads, k), &shared_descr);
	debug_objects_get_stats(&s0, sizeof(s0));
	t0 = now();
	for (i = 0; i < nthreads; i++) {
		memset(&t[i], 0, sizeof(t[i]));
		t[i].index = i;
		t[i].nthreads = nthreads;
		t[i].seed = seed;
		t[i].steps = steps;
		if (pthread_create(&t[i].thread, NULL, thread_main, &t[i])) {
			perror("pthread_create");
			exit(2);
		}
	}
	for (i = 0; i < nthreads; i++) {
		pthread_join(t[i].thread, NULL);
		if (t[i].fail >= 0) {
			printf("FAIL: thread %u of seed %llu failed at step %ld\n", i,
			       (unsigned long long)seed, t[i].fail);
			ok = false;
		}
		warnings += t[i].warnings;
		fixups += t[i].fixups;
		tracked += t[i].tracked;
		for (k = 0; k < MOP_MAX * MROW_MAX; k++)
			cover[k] += t[i].cover[k];
	}
	dt = now() - t0;
	debug_objects_get_stats(&s1, sizeof(s1));
	/* The shared objects warn never, so the totals add up exactly. */
	if (s1.warnings - s0.warnings != warnings || s1.fixups - s0.fixups != fixups ||
	    s1.pool_used - s0.pool_used != tracked) {
		printf("FAIL: threads: library warnings +%lu fixups +%lu trackers %+ld, "
		       "models +%lu +%lu %lu\n", s1.warnings - s0.warnings,
		       s1.fixups - s0.fixups, (long)(s1.pool_used - s0.pool_used),
		       warnings, fixups, tracked);
		ok = false;
	}
	for (k = 0; k < DIFF_MAX_SHARED; k++) {
		void *obj = diff_shared_addr(nthreads, k);
		enum debug_obj_state s = debug_object_get_state(obj);

		if (s != ODEBUG_STATE_INIT && s != ODEBUG_STATE_INACTIVE) {
			printf("FAIL: shared object %u is in state %d\n", k, (int)s);
			ok = false;
		}
		debug_object_free(obj, &shared_descr);
	}
	if (ok) {
		passed++;
		printf("ok: seed %llu, %u threads x %zu steps in %.2f s (%.0f steps/s)\n",
		       (unsigned long long)seed, nthreads, steps, dt,
		       (double)(steps * nthreads) / dt);
	} else {
		failed++;
		printf("  replay: test-model --threads %u --seed %llu --steps %zu\n",
		       nthreads, (unsigned long long)seed, steps);
	}
}

/* ---- the regression list ---- */

static void run_seeds(const char *path)
{
	FILE *f = open_listing(path);
	char line[512], file[400], full[1024];
	unsigned long long seed;
	unsigned long steps;
	unsigned int threads;
	const char *slash = strrchr(path, '/');
	int dirlen = slash ? (int)(slash - path + 1) : 0;

	if (!f)
		return;
	while (next_entry(f, line, sizeof(line))) {
		if (sscanf(line, "seed %llu steps %lu threads %u", &seed, &steps, &threads) == 3) {
			run_threads(seed, steps, threads);
		} else if (sscanf(line, "seed %llu steps %lu", &seed, &steps) == 2) {
			run_seed(seed, steps);
		} else if (sscanf(line, "ops %399s", file) == 1) {
			snprintf(full, sizeof(full), "%.*s%s", dirlen, path, file);
			run_replay(full);
		} else {
			printf("FAIL: %s: bad line: %s", path, line);
			failed++;
		}
	}
	fclose(f);
}

static void print_coverage(void)
{
	static const char *const ops[MOP_MAX] = {
		"init", "activate", "deactivate", "destroy", "free",
		"assert_init", "active_state", "check_free",
	};
	static const char *const rows[MROW_MAX] = {
		"none", "init", "inactive", "active", "destroyed", "untracked",
		"static", "seed", "astate!=0",
	};
	int i, j;

	printf("coverage: calls by operation (rows) and state found (columns)\n%-13s", "");
	for (j = 0; j < MROW_MAX; j++)
		printf(" %10s", rows[j]);
	printf("\n");
	for (i = 0; i < MOP_MAX; i++) {
		printf("%-13s", ops[i]);
		for (j = 0; j < MROW_MAX; j++)
			printf(" %10lu", cover[i * MROW_MAX + j]);
		printf("\n");
	}
}

static void usage(void)
{
	fprintf(stderr,
		"usage: test-model [--seed N | --random] [--steps N] [--threads T]\n"
		"                  [--seeds FILE] [--replay FILE] [--minimise [--out FILE]]\n"
		"                  [--inject-bug] [--coverage]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned long long seed = 1;
	size_t steps = 1000000;
	unsigned int threads = 0;
	const char *seeds = NULL, *replay = NULL;
	bool random_seed = false;
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--seed") && v)
			seed = strtoull(v, NULL, 0), i++;
		else if (!strcmp(a, "--steps") && v)
			steps = strtoul(v, NULL, 0), i++;
		else if (!strcmp(a, "--threads") && v)
			threads = (unsigned int)strtoul(v, NULL, 0), i++;
		else if (!strcmp(a, "--seeds") && v)
			seeds = v, i++;
		else if (!strcmp(a, "--replay") && v)
			replay = v, i++;
		else if (!strcmp(a, "--out") && v)
			out_path = v, i++;
		else if (!strcmp(a, "--random"))
			random_seed = true;
		else if (!strcmp(a, "--minimise") || !strcmp(a, "--minimize"))
			want_minimise = true;
		else if (!strcmp(a, "--inject-bug"))
			inject_bug = true;
		else if (!strcmp(a, "--coverage"))
			want_coverage = true;
		else
			usage();
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!debug_objects_enabled()) {
		printf("libodebug is disabled: run with ODEBUG=1\n0 passed, 0 failed\n");
		return 77;
	}
	if (random_seed) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		seed = ((unsigned long long)ts.tv_nsec ^ ((unsigned long long)ts.tv_sec << 20) ^
			((unsigned long long)getpid() << 40)) % 1000000000000ull;
		printf("random seed %llu (replay with --seed %llu%s)\n", seed, seed,
		       threads ? " and the same --threads" : "");
	}
	if (seeds)
		run_seeds(seeds);
	else if (replay)
		run_replay(replay);
	else if (threads)
		run_threads(seed, steps, threads);
	else
		run_seed(seed, steps);
	if (!diff_check_free())
		printf("note: check_free is off: ranges and released blocks check nothing\n");
	if (want_coverage)
		print_coverage();
	printf("%lu passed, %lu failed\n", passed, failed);
	return failed ? 1 : 0;
}
