/* SPDX-License-Identifier: MIT */
/*
 * fd-cost.c - what descriptors with an owner (lib/checks/fd) cost the calls
 * every program makes: a close() of a descriptor nobody owns (a dup()
 * closed, while one stream owns another descriptor, so that the tags are
 * mapped and each close reads its slot), and an fopen()/fclose() pair of
 * /dev/null, whose stream becomes an owner and stops being one.
 *
 * The program runs itself again in each setting, ROUNDS times in rotated
 * order, and prints the median ns per call of each, and the differences
 * and ratios against plain (no libodebug), all measured in this one run:
 *
 *   bench-fd-cost LIBODEBUG	ROUNDS (7) runs of each setting
 *   bench-fd-cost --child	one run: ns per close, ns per fopen/fclose pair
 *
 * Settings: plain; libodebug loaded, ODEBUG unset; ODEBUG=1 with
 * check_fd=0; ODEBUG=1, started by one annotation call (so that each
 * stream's tracker is made and freed).  Times are the thread's CPU time.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench-stats.h"

#define CLOSES	400000
#define PAIRS	100000
#define ROUNDS	7
#define SETTINGS 4

/*
 * libodebug started, as in a program that annotates or holds something
 * (an owner alone does not start it, and then makes no tracker): one
 * annotation call, found at run time (this program does not link it).
 */
static void start_libodebug(void)
{
	static const struct { const char *name; void *fns[7]; } descr = { "bench", { 0 } };
	static long obj;
	void (*init)(void *, const void *) =
		(void (*)(void *, const void *))dlsym(RTLD_DEFAULT, "debug_object_init");
	void (*fr)(void *, const void *) =
		(void (*)(void *, const void *))dlsym(RTLD_DEFAULT, "debug_object_free");

	if (init && fr) {
		init(&obj, &descr);
		fr(&obj, &descr);
	}
}

/* One run: dup+close, then dup alone (subtracted), then fopen+fclose pairs. */
static int child(void)
{
	FILE *owner = fopen("/dev/null", "r");
	int base = open("/dev/null", O_RDONLY), i;
	double t0, dupclose, duponly, pair;
	static int fds[CLOSES];

	if (!owner || base < 0)
		return 2;
	start_libodebug();
	for (i = 0; i < 1000; i++)	/* warm */
		close(dup(base));
	t0 = bench_ns(CLOCK_THREAD_CPUTIME_ID);
	for (i = 0; i < CLOSES; i++)
		close(dup(base));
	dupclose = bench_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
	/* dup alone, closed outside the timing (into many numbers: no reuse). */
	t0 = bench_ns(CLOCK_THREAD_CPUTIME_ID);
	for (i = 0; i < 1000; i++)
		fds[i] = dup(base);
	duponly = bench_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
	for (i = 0; i < 1000; i++)
		close(fds[i]);
	t0 = bench_ns(CLOCK_THREAD_CPUTIME_ID);
	for (i = 0; i < PAIRS; i++) {
		FILE *f = fopen("/dev/null", "r");

		if (!f)
			return 2;
		fclose(f);
	}
	pair = bench_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
	printf("%.3f %.3f\n", dupclose / CLOSES - duponly / 1000, pair / PAIRS);
	fclose(owner);
	return 0;
}

/* One run in setting @s: its two figures. */
static void run(const char *self, const char *lib, int s, double *close_ns, double *pair_ns)
{
	int p[2], status;
	char buf[128] = "";
	pid_t pid;

	if (pipe(p))
		exit(2);
	pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		if (s > 0)
			setenv("LD_PRELOAD", lib, 1);
		if (s >= 2)
			setenv("ODEBUG", "1", 1);
		if (s == 2)
			setenv("ODEBUG_OPTIONS", "check_fd=0", 1);
		execl(self, self, "--child", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	if (read(p[0], buf, sizeof(buf) - 1) <= 0 || waitpid(pid, &status, 0) != pid ||
	    !WIFEXITED(status) || WEXITSTATUS(status) ||
	    sscanf(buf, "%lf %lf", close_ns, pair_ns) != 2) {
		fprintf(stderr, "bench-fd-cost: setting %d failed\n", s);
		exit(1);
	}
	close(p[0]);
}

int main(int argc, char **argv)
{
	static const char *const names[SETTINGS] = {
		"plain", "ODEBUG unset", "ODEBUG=1 check_fd=0", "ODEBUG=1",
	};
	double c[SETTINGS][ROUNDS], f[SETTINGS][ROUNDS], mc[SETTINGS], mf[SETTINGS];
	int r, i;

	if (argc == 2 && !strcmp(argv[1], "--child"))
		return child();
	if (argc != 2) {
		fprintf(stderr, "usage: %s LIBODEBUG\n", argv[0]);
		return 2;
	}
	for (r = 0; r < ROUNDS; r++)
		for (i = 0; i < SETTINGS; i++) {
			int s = (i + r) % SETTINGS;

			run("/proc/self/exe", argv[1], s, &c[s][r], &f[s][r]);
		}
	printf("%-22s %14s %20s\n", "setting", "close ns", "fopen+fclose ns");
	for (i = 0; i < SETTINGS; i++) {
		mc[i] = bench_median(c[i], ROUNDS);
		mf[i] = bench_median(f[i], ROUNDS);
		printf("%-22s %14.1f %20.1f\n", names[i], mc[i], mf[i]);
	}
	printf("close of an unowned descriptor: ODEBUG unset %+.1f ns, ODEBUG=1 %+.1f ns "
	       "(check_fd=0 %+.1f ns) over plain\n", mc[1] - mc[0], mc[3] - mc[0], mc[2] - mc[0]);
	printf("fopen+fclose: ODEBUG unset %.3fx, ODEBUG=1 %.3fx (check_fd=0 %.3fx) of plain\n",
	       mf[1] / mf[0], mf[3] / mf[0], mf[2] / mf[0]);
	return 0;
}
