/* SPDX-License-Identifier: MIT */
/*
 * bench-start: what libodebug adds to a process's start.
 *
 *   bench-start [--runs N] [--rounds R] [--true] LIB [BASE]
 *   bench-start --steps [--runs N] [--rounds R] [--true] STEPS_LIB
 *
 * Starts `sh -c true` (--true: /bin/true) N times a round, plainly, with
 * LIB preloaded and ODEBUG unset, and with LIB and ODEBUG=1 (and BASE the
 * same two ways, given another build of the library to compare with), the
 * variants alternated start by start, so that each meets the same load
 * (the machine may be shared).  Per variant: the median over the rounds
 * of each round's median wall time per start, mean CPU (user + system,
 * the child's own) and minor faults; then each variant minus plain, the
 * difference taken within each round (which had the same load) and its
 * median, with the rounds' range.  The child's environment is ours with
 * LD_PRELOAD, ODEBUG and ODEBUG_OPTIONS replaced.
 *
 * --steps: where the time goes.  STEPS_LIB is the library built with a
 * time stamp at each step of its start (bench/start-steps/); each start,
 * ODEBUG unset and ODEBUG=1 alternated start by start, writes its stamps
 * to a pipe.
 * Printed: the median of each step's time over every start, from the
 * spawn to our first constructor (the exec, the loader's mapping and
 * relocating), each constructor's steps, then the program to our last
 * destructor and that to the parent's wait returning (a program that
 * leaves by _exit(), as sh does, runs no destructor: the program to the
 * wait).  The sum of the medians is not the median start.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <time.h>

#include "bench-stats.h"

extern char **environ;

#define MAX_VARIANTS 5
#define MAX_ROUNDS 101

struct variant {
	const char *name;
	const char *preload;	/* NULL: plain */
	bool on;
	char **envp;
	double *one;			/* this round's wall time of each start */
	double wall[MAX_ROUNDS], cpu[MAX_ROUNDS], faults[MAX_ROUNDS];
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool ours(const char *e)
{
	return !strncmp(e, "LD_PRELOAD=", 11) || !strncmp(e, "ODEBUG=", 7) ||
	       !strncmp(e, "ODEBUG_OPTIONS=", 15);
}

static char **make_env(const struct variant *v)
{
	size_t n = 0, k = 0;
	char **envp;

	while (environ[n])
		n++;
	envp = calloc(n + 3, sizeof(*envp));
	if (!envp)
		exit(2);
	for (n = 0; environ[n]; n++)
		if (!ours(environ[n]))
			envp[k++] = environ[n];
	if (v->preload && asprintf(&envp[k++], "LD_PRELOAD=%s", v->preload) < 0)
		exit(2);
	if (v->on)
		envp[k++] = "ODEBUG=1";
	return envp;
}

/* One start of @v: its wall time (ms); its CPU time and faults added to the round's. */
static double start_once(struct variant *v, char *const argv[], int r)
{
	struct rusage ru;
	int status;
	double t0 = now();
	pid_t pid;

	if (posix_spawn(&pid, argv[0], NULL, NULL, argv, v->envp)) {
		perror(argv[0]);
		exit(2);
	}
	if (wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "bench-start: %s failed (%s)\n", argv[0], v->name);
		exit(2);
	}
	v->cpu[r] += (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
		     (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
	v->faults[r] += (double)ru.ru_minflt;
	return (now() - t0) * 1e3;
}

static void stats(double *x, int n, double out[3]);

/*
 * Round @r: @runs starts of each variant, interleaved one by one (the
 * order turning each time), so that every variant meets the same load;
 * each variant's median wall time per start (a start the scheduler
 * delayed moves a mean, not the median), mean CPU (ms) and faults.
 */
static void round_of(struct variant *v, int nv, char *const argv[], int runs, int r)
{
	double st[3];
	int i, k;

	for (k = 0; k < nv; k++)
		v[k].cpu[r] = v[k].faults[r] = 0;
	for (i = 0; i < runs; i++)
		for (k = 0; k < nv; k++) {
			struct variant *x = &v[(k + i + r) % nv];

			x->one[i] = start_once(x, argv, r);
		}
	for (k = 0; k < nv; k++) {
		stats(v[k].one, runs, st);
		v[k].wall[r] = st[0];
		v[k].cpu[r] /= runs;
		v[k].faults[r] /= runs;
	}
}

/* Median, min and max of @n values (sorted in place). */
static void stats(double *x, int n, double out[3])
{
	qsort(x, n, sizeof(*x), bench_cmp_double);
	out[0] = n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
	out[1] = x[0];
	out[2] = x[n - 1];
}

static void print_variant(struct variant *v, int rounds)
{
	double w[MAX_ROUNDS], c[MAX_ROUNDS], f[MAX_ROUNDS], sw[3], sc[3], sf[3];

	memcpy(w, v->wall, sizeof(w));
	memcpy(c, v->cpu, sizeof(c));
	memcpy(f, v->faults, sizeof(f));
	stats(w, rounds, sw);
	stats(c, rounds, sc);
	stats(f, rounds, sf);
	printf("%-14s wall %.3f ms [%.3f - %.3f]  cpu %.3f ms  faults %.1f\n",
	       v->name, sw[0], sw[1], sw[2], sc[0], sf[0]);
}

static void print_added(const struct variant *v, const struct variant *plain, int rounds)
{
	double d[MAX_ROUNDS], c[MAX_ROUNDS], sd[3], sc[3];
	int r;

	for (r = 0; r < rounds; r++) {
		d[r] = v->wall[r] - plain->wall[r];
		c[r] = v->cpu[r] - plain->cpu[r];
	}
	stats(d, rounds, sd);
	stats(c, rounds, sc);
	printf("%-14s adds wall %+.3f ms [%+.3f - %+.3f]  cpu %+.3f ms\n",
	       v->name, sd[0], sd[1], sd[2], sc[0]);
}

#define MAX_STEPS 48

static struct step {
	char name[48];
	int n;
	double *us;
} steps[2][MAX_STEPS];
static int nsteps[2];

static void step_add(int mode, const char *name, double us, int cap)
{
	struct step *s = steps[mode];
	int i;

	for (i = 0; i < nsteps[mode] && strcmp(s[i].name, name); i++)
		;
	if (i == MAX_STEPS)
		return;
	if (i == nsteps[mode]) {
		snprintf(s[i].name, sizeof(s[i].name), "%s", name);
		s[i].us = calloc((size_t)cap, sizeof(double));
		if (!s[i].us)
			exit(2);
		nsteps[mode]++;
	}
	if (s[i].n < cap)
		s[i].us[s[i].n++] = us;
}

/* One start with the stamps piped back: each step's time, in order. */
static void steps_once(char **envp, char *const argv[], int mode, int cap)
{
	posix_spawn_file_actions_t fa;
	char buf[8192], *line, *save;
	double t0, last, ns;
	ssize_t n, len = 0;
	int fd[2], status;
	bool exited = false;
	pid_t pid;

	if (pipe(fd) || posix_spawn_file_actions_init(&fa) ||
	    posix_spawn_file_actions_adddup2(&fa, fd[1], 3))
		exit(2);
	t0 = now();
	if (posix_spawn(&pid, argv[0], &fa, NULL, argv, envp) ||
	    waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "bench-start: %s failed\n", argv[0]);
		exit(2);
	}
	last = now();
	close(fd[1]);
	while ((n = read(fd[0], buf + len, sizeof(buf) - 1 - (size_t)len)) > 0)
		len += n;
	close(fd[0]);
	posix_spawn_file_actions_destroy(&fa);
	buf[len] = 0;
	ns = t0 * 1e9;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *sp = strrchr(line, ' ');
		double at;

		if (!sp)
			continue;
		*sp = 0;
		at = atof(sp + 1);
		step_add(mode, ns == t0 * 1e9 ? "spawn to our first constructor" : line,
			 (at - ns) / 1e3, cap);
		exited = !strncmp(line, "the program", 11);
		ns = at;
	}
	if (ns != t0 * 1e9)
		step_add(mode, exited ? "our last destructor to the wait" : "the program, to the wait",
			 (last * 1e9 - ns) / 1e3, cap);
}

static void print_steps(int mode)
{
	double total = 0;
	int i;

	for (i = 0; i < nsteps[mode]; i++) {
		struct step *s = &steps[mode][i];
		double st[3];

		stats(s->us, s->n, st);
		total += st[0];
		printf("  %-34s %8.1f us\n", s->name, st[0]);
	}
	printf("  %-34s %8.1f us (sum of the medians)\n", "total", total);
}

static void run_steps(const char *lib, char **cmd, int runs, int rounds)
{
	struct variant v[2] = {
		{ .name = "unset", .preload = lib },
		{ .name = "ODEBUG=1", .preload = lib, .on = true },
	};
	int m, i, r, cap = runs * rounds;

	for (m = 0; m < 2; m++) {
		char **e = make_env(&v[m]);

		for (i = 0; e[i]; i++)
			;
		v[m].envp = realloc(e, (size_t)(i + 2) * sizeof(*e));
		if (!v[m].envp)
			exit(2);
		v[m].envp[i] = "ODEBUG_START_STEPS_FD=3";
		v[m].envp[i + 1] = NULL;
	}
	for (r = 0; r < rounds; r++)
		for (i = 0; i < runs; i++)
			for (m = 0; m < 2; m++)
				steps_once(v[(m + i) % 2].envp, cmd, (m + i) % 2, cap);
	printf("%s, %d starts of each, alternated: median time of each step\n", cmd[0], cap);
	for (m = 0; m < 2; m++) {
		printf("%s:\n", v[m].name);
		print_steps(m);
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: bench-start [--steps] [--runs N] [--rounds R] [--true] LIB [BASE]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static struct variant v[MAX_VARIANTS];
	char *sh[] = { "/bin/sh", "-c", "true", NULL }, *tr[] = { "/bin/true", NULL };
	char **cmd = sh;
	int runs = 200, rounds = 7, nv = 0, i, r;
	bool by_steps = false;

	while (argc > 1 && !strncmp(argv[1], "--", 2)) {
		if (!strcmp(argv[1], "--true") || !strcmp(argv[1], "--steps")) {
			if (argv[1][2] == 't')
				cmd = tr;
			else
				by_steps = true;
			argv++, argc--;
			continue;
		}
		if (argc < 3)
			usage();
		if (!strcmp(argv[1], "--runs"))
			runs = atoi(argv[2]);
		else if (!strcmp(argv[1], "--rounds"))
			rounds = atoi(argv[2]);
		else
			usage();
		argv += 2, argc -= 2;
	}
	if (argc < 2 || argc > 3 || runs < 1 || rounds < 1 || rounds > MAX_ROUNDS)
		usage();
	if (by_steps) {
		run_steps(argv[1], cmd, runs, rounds);
		return 0;
	}
	v[nv++] = (struct variant){ .name = "plain" };
	v[nv++] = (struct variant){ .name = "unset", .preload = argv[1] };
	v[nv++] = (struct variant){ .name = "ODEBUG=1", .preload = argv[1], .on = true };
	if (argc == 3) {
		v[nv++] = (struct variant){ .name = "base unset", .preload = argv[2] };
		v[nv++] = (struct variant){ .name = "base ODEBUG=1", .preload = argv[2], .on = true };
	}
	for (i = 0; i < nv; i++) {
		v[i].envp = make_env(&v[i]);
		v[i].one = calloc((size_t)(runs > 10 ? runs : 10), sizeof(double));
		if (!v[i].one)
			exit(2);
	}
	round_of(v, nv, cmd, 10, 0);	/* warm the page cache and the loader's caches */
	for (r = 0; r < rounds; r++)
		round_of(v, nv, cmd, runs, r);
	printf("%s, %d starts of each a round, alternated, %d rounds: medians [min - max] of the rounds\n",
	       cmd == sh ? "sh -c true" : "/bin/true", runs, rounds);
	for (i = 0; i < nv; i++)
		print_variant(&v[i], rounds);
	for (i = 1; i < nv; i++)
		print_added(&v[i], &v[0], rounds);
	return 0;
}
