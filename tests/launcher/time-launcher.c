/* SPDX-License-Identifier: MIT */
/*
 * time-launcher.c - what the odebug launcher adds to a program's run.
 *
 * usage: time-launcher RUNS BOUND_MS LAUNCHER LIBRARY PROGRAM [ARGS...]
 *
 * Runs, RUNS times and interleaved (the order rotating each round, so a
 * burst of load hits every kind alike): PROGRAM alone; PROGRAM with
 * ODEBUG=1 and LD_PRELOAD=LIBRARY set directly; LAUNCHER PROGRAM.  Each
 * run's wall time (posix_spawn to wait4) and CPU time (the child's user +
 * system time from wait4: launcher and program are one process, exec()
 * keeps it) are kept; the medians are printed.  The check is on CPU time:
 * on a machine shared with other jobs the wall time measures the load,
 * while the CPU a run uses is its own.  Exit status 1 when the launcher
 * adds more than BOUND_MS of CPU time to PROGRAM's median (or four times
 * PROGRAM's own median, if more: a machine slow for the launcher is slow
 * for PROGRAM too), 0 otherwise (BOUND_MS 0: the figures only).
 */
#define _GNU_SOURCE
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

enum { PLAIN, PRELOADED, LAUNCHED, KINDS };
static const char *const kind_name[KINDS] = {
	"PROGRAM alone", "ODEBUG=1 LD_PRELOAD=LIBRARY PROGRAM", "LAUNCHER PROGRAM"
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Run @argv with @envp; its wall and CPU milliseconds; exits on failure. */
static void run(char **argv, char **envp, double *wall, double *cpu)
{
	struct rusage ru;
	double t0 = now_ms();
	pid_t pid;
	int st;

	if (posix_spawn(&pid, argv[0], NULL, NULL, argv, envp) != 0) {
		perror(argv[0]);
		exit(2);
	}
	if (wait4(pid, &st, 0, &ru) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "time-launcher: %s failed (status %#x)\n", argv[0], st);
		exit(2);
	}
	*wall = now_ms() - t0;
	*cpu = ru.ru_utime.tv_sec * 1e3 + ru.ru_utime.tv_usec / 1e3 +
	       ru.ru_stime.tv_sec * 1e3 + ru.ru_stime.tv_usec / 1e3;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp);
	return v[n / 2];
}

/*
 * The environment without ODEBUG, ODEBUG_OPTIONS and LD_PRELOAD; with @lib,
 * ODEBUG=1 and LD_PRELOAD=@lib.
 */
static char **make_env(const char *lib)
{
	size_t n = 0, k = 0;
	char **e;

	while (environ[n])
		n++;
	e = calloc(n + 3, sizeof(*e));
	if (!e || (lib && asprintf(&e[k++], "LD_PRELOAD=%s", lib) < 0))
		exit(2);
	if (lib)
		e[k++] = "ODEBUG=1";
	for (n = 0; environ[n]; n++)
		if (strncmp(environ[n], "LD_PRELOAD=", 11) && strncmp(environ[n], "ODEBUG=", 7) &&
		    strncmp(environ[n], "ODEBUG_OPTIONS=", 15))
			e[k++] = environ[n];
	return e;
}

int main(int argc, char **argv)
{
	double *wall[KINDS], *cpu[KINDS], w[KINDS], c[KINDS], bound;
	char **args[KINDS], **envs[KINDS], **launched;
	int runs, i, k;

	if (argc < 6 || (runs = atoi(argv[1])) < 1) {
		fprintf(stderr, "usage: time-launcher RUNS BOUND_MS LAUNCHER LIBRARY PROGRAM [ARGS...]\n");
		return 2;
	}
	bound = atof(argv[2]);
	/* LAUNCHER PROGRAM [ARGS...] */
	launched = calloc((size_t)argc, sizeof(*launched));
	if (!launched)
		return 2;
	launched[0] = argv[3];
	memcpy(launched + 1, argv + 5, (size_t)(argc - 5) * sizeof(*launched));
	/* No libodebug the caller's environment may name but the one measured. */
	args[PLAIN] = argv + 5;
	envs[PLAIN] = make_env(NULL);
	args[PRELOADED] = argv + 5;
	envs[PRELOADED] = make_env(argv[4]);
	args[LAUNCHED] = launched;
	envs[LAUNCHED] = envs[PLAIN];
	for (k = 0; k < KINDS; k++) {
		wall[k] = calloc((size_t)runs, sizeof(double));
		cpu[k] = calloc((size_t)runs, sizeof(double));
		if (!wall[k] || !cpu[k])
			return 2;
	}
	for (i = 0; i < runs; i++)
		for (k = 0; k < KINDS; k++) {
			int j = (k + i) % KINDS;

			run(args[j], envs[j], &wall[j][i], &cpu[j][i]);
		}
	for (k = 0; k < KINDS; k++) {
		w[k] = median(wall[k], runs);
		c[k] = median(cpu[k], runs);
		printf("%-40s median of %d: wall %7.2f ms, CPU %7.2f ms\n", kind_name[k], runs,
		       w[k], c[k]);
	}
	printf("added by the launcher and libodebug's start: wall %+.2f ms, CPU %+.2f ms\n",
	       w[LAUNCHED] - w[PLAIN], c[LAUNCHED] - c[PLAIN]);
	printf("added by the launcher alone:                 wall %+.2f ms, CPU %+.2f ms\n",
	       w[LAUNCHED] - w[PRELOADED], c[LAUNCHED] - c[PRELOADED]);
	if (bound <= 0)
		return 0;	/* a benchmark: figures only */
	/* A slow machine (or another architecture) is slow for /bin/true too. */
	if (bound < 4 * c[PLAIN])
		bound = 4 * c[PLAIN];
	if (c[LAUNCHED] - c[PLAIN] > bound) {
		printf("FAIL: more than %.1f ms of CPU added\n", bound);
		return 1;
	}
	printf("ok: at most %.1f ms of CPU added\n", bound);
	return 0;
}
