/* SPDX-License-Identifier: MIT */
/*
 * bench-locks: what the built-in pthread_mutex type costs.
 * Not linked with libodebug: the same binary runs plain and under
 * LD_PRELOAD=libodebug.so, with ODEBUG unset and set.
 *
 *   bench-locks pair [N]          uncontended lock+unlock of one cache-hot
 *                                 mutex, N pairs (default 20 M): ns/pair
 *   bench-locks spread LAYOUT [N] 4 threads, each N pairs (default 2 M) on
 *                                 16 mutexes picked at random; LAYOUT
 *                                 "array" (one array) or "page" (one
 *                                 mutex per 4 KiB page): ns/pair per thread
 *   bench-locks rdpair [N]        uncontended pthread_rwlock_rdlock+unlock of
 *                                 one cache-hot rwlock, N pairs (default
 *                                 20 M): ns/pair
 *   bench-locks wrpair [N]        the same with pthread_rwlock_wrlock: ns/pair
 *   bench-locks readers [N]       4 threads, each N rdlock+unlock pairs
 *                                 (default 2 M) on one shared rwlock:
 *                                 ns/pair per thread
 *   bench-locks rdlife|mlife [N]  N lives (default 1 M) of an rwlock (a
 *                                 mutex) in a heap block of 96 to 351
 *                                 bytes: init, four read (lock) pairs,
 *                                 destroy, and the free of the block made
 *                                 2,000 lives before: ns/life
 *   bench-locks fork quiet|started [N]
 *                                 N forks (default 200), each child exits at
 *                                 once: page faults per fork in the parent
 *                                 and in the child (read as its first act),
 *                                 and ms per fork+wait; "started" locks a
 *                                 mutex first (with ODEBUG=1 libodebug then
 *                                 starts), "quiet" makes no pthread call
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static pthread_mutex_t *locks[16];
static long per_thread;
static volatile long counter[16 * 8];

static void *spread(void *arg)
{
	unsigned int seed = (unsigned int)(long)arg * 2654435761u + 1;

	for (long i = 0; i < per_thread; i++) {
		int k = (int)((seed = seed * 1103515245u + 12345u) >> 16) & 15;

		pthread_mutex_lock(locks[k]);
		counter[k * 8]++;
		pthread_mutex_unlock(locks[k]);
	}
	return NULL;
}

static pthread_rwlock_t *shared_rw;

static void *reader(void *arg)
{
	(void)arg;
	for (long i = 0; i < per_thread; i++) {
		pthread_rwlock_rdlock(shared_rw);
		__asm__ volatile("" ::: "memory");
		pthread_rwlock_unlock(shared_rw);
	}
	return NULL;
}

static long faults(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

static int forks(bool started, long n)
{
	static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	long parent = 0, child = 0;
	double t;

	if (started) {
		pthread_mutex_lock(&m);
		pthread_mutex_unlock(&m);
	}
	t = now();
	for (long i = 0; i < n; i++) {
		long before = faults(), c;
		int fd[2];
		pid_t pid;

		if (pipe(fd))
			return 1;
		pid = fork();
		if (pid < 0)
			return 1;
		if (pid == 0) {
			c = faults();
			_exit(write(fd[1], &c, sizeof(c)) == sizeof(c) ? 0 : 1);
		}
		parent += faults() - before;
		if (read(fd[0], &c, sizeof(c)) != sizeof(c))
			return 1;
		child += c;
		waitpid(pid, NULL, 0);
		close(fd[0]);
		close(fd[1]);
	}
	t = now() - t;
	printf("fork %s: %.1f parent + %.1f child page faults, %.3f ms per fork+wait\n",
	       started ? "started" : "quiet", (double)parent / n, (double)child / n,
	       t * 1e3 / n);
	return 0;
}

/* One life of a lock in block @i (see the usage). */
static void *life(long i, bool mutex)
{
	char *p = malloc(96 + (size_t)(i * 37) % 256);

	if (mutex) {
		pthread_mutex_t *m = (pthread_mutex_t *)(p + 16);

		pthread_mutex_init(m, NULL);
		for (int j = 0; j < 4; j++) {
			pthread_mutex_lock(m);
			pthread_mutex_unlock(m);
		}
		pthread_mutex_destroy(m);
	} else {
		pthread_rwlock_t *rw = (pthread_rwlock_t *)(p + 16);

		pthread_rwlock_init(rw, NULL);
		for (int j = 0; j < 4; j++) {
			pthread_rwlock_rdlock(rw);
			pthread_rwlock_unlock(rw);
		}
		pthread_rwlock_destroy(rw);
	}
	return p;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "pair";
	double t;

	if (!strcmp(what, "pair")) {
		long n = argc > 2 ? atol(argv[2]) : 20000000;
		pthread_mutex_t *m = malloc(sizeof(*m));

		pthread_mutex_init(m, NULL);
		for (long i = 0; i < n / 10; i++) {	/* warm up */
			pthread_mutex_lock(m);
			pthread_mutex_unlock(m);
		}
		t = now();
		for (long i = 0; i < n; i++) {
			pthread_mutex_lock(m);
			__asm__ volatile("" ::: "memory");
			pthread_mutex_unlock(m);
		}
		t = now() - t;
		printf("pair %.2f ns\n", t * 1e9 / n);
		return 0;
	}
	if (!strcmp(what, "rdpair") || !strcmp(what, "wrpair")) {
		long n = argc > 2 ? atol(argv[2]) : 20000000;
		pthread_rwlock_t *rw = malloc(sizeof(*rw));
		int (*lock)(pthread_rwlock_t *) =
			what[0] == 'r' ? pthread_rwlock_rdlock : pthread_rwlock_wrlock;

		pthread_rwlock_init(rw, NULL);
		for (long i = 0; i < n / 10; i++) {	/* warm up */
			lock(rw);
			pthread_rwlock_unlock(rw);
		}
		t = now();
		for (long i = 0; i < n; i++) {
			lock(rw);
			__asm__ volatile("" ::: "memory");
			pthread_rwlock_unlock(rw);
		}
		t = now() - t;
		printf("%s %.2f ns\n", what, t * 1e9 / n);
		return 0;
	}
	if (!strcmp(what, "readers")) {
		pthread_t th[4];

		per_thread = argc > 2 ? atol(argv[2]) : 2000000;
		shared_rw = malloc(sizeof(*shared_rw));
		pthread_rwlock_init(shared_rw, NULL);
		t = now();
		for (long i = 0; i < 4; i++)
			pthread_create(&th[i], NULL, reader, NULL);
		for (int i = 0; i < 4; i++)
			pthread_join(th[i], NULL);
		t = now() - t;
		printf("readers %.2f ns\n", t * 1e9 / per_thread);
		return 0;
	}
	if (!strcmp(what, "spread") && argc > 2) {
		bool page = !strcmp(argv[2], "page");
		pthread_t th[4];
		char *mem;

		per_thread = argc > 3 ? atol(argv[3]) : 2000000;
		mem = mmap(NULL, 16 * 4096, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		for (int k = 0; k < 16; k++) {
			locks[k] = (pthread_mutex_t *)(mem + (size_t)k * (page ? 4096 : sizeof(pthread_mutex_t)));
			pthread_mutex_init(locks[k], NULL);
		}
		t = now();
		for (long i = 0; i < 4; i++)
			pthread_create(&th[i], NULL, spread, (void *)i);
		for (int i = 0; i < 4; i++)
			pthread_join(th[i], NULL);
		t = now() - t;
		printf("spread %s %.2f ns\n", argv[2], t * 1e9 / per_thread);
		return 0;
	}
	if (!strcmp(what, "rdlife") || !strcmp(what, "mlife")) {
		long n = argc > 2 ? atol(argv[2]) : 1000000, i;
		static void *kept[2000];

		for (i = 0; i < n / 10; i++) {	/* warm up: the blocks kept are a heap's */
			free(kept[i % 2000]);
			kept[i % 2000] = life(i, what[0] == 'm');
		}
		t = now();
		for (; i < n / 10 + n; i++) {
			free(kept[i % 2000]);
			kept[i % 2000] = life(i, what[0] == 'm');
		}
		t = now() - t;
		printf("%s %.2f ns\n", what, t * 1e9 / n);
		return 0;
	}
	if (!strcmp(what, "fork") && argc > 2)
		return forks(!strcmp(argv[2], "started"), argc > 3 ? atol(argv[3]) : 200);
	fprintf(stderr, "usage: bench-locks pair [N] | rdpair [N] | wrpair [N] | readers [N] | "
		"spread array|page [N] | rdlife|mlife [N] | fork quiet|started [N]\n");
	return 2;
}
