/* SPDX-License-Identifier: MIT */
/*
 * objops.c - object-operation benchmarks.
 *
 * bench-objops cycle --live N --per-page P --threads T --ops M
 *	N objects live (tracked) all the time, P per 4 KiB page (1: sparse,
 *	64: dense, an array of 64-byte structs), split evenly over T threads
 *	on disjoint pages.  Each cycle picks one of the thread's objects
 *	uniformly at random and ends its life and starts the next one:
 *	free -> init -> activate -> deactivate, four operations.  M operations
 *	in all (M / 4 cycles); prints the wall time per operation (total wall
 *	time / M, so with T threads it is the inverse of the throughput), and
 *	each thread's CPU time per operation (cpu_ns_per_op, the mean over
 *	threads): what sharing costs, apart from waiting for a core.
 *	With --mix 2, the second mix: the objects stay ACTIVE between
 *	cycles, and a cycle is deactivate -> free -> init -> activate (the
 *	first call of a cycle is then a lockless one on a cold object).
 *
 * bench-objops mem --live N [--per-page P]
 *	Resident bytes of the anonymous mappings (not the heap, not the stack,
 *	not the objects' own mapping) at start and after tracking N objects
 *	(init + activate, from 100 distinct call sites), read from
 *	/proc/self/smaps.  Run with ODEBUG unset as the control.
 *
 * bench-objops activate --live N --ops M
 *	M / 2 activate + deactivate pairs on N objects, each activate from one
 *	of 100 distinct call sites (for origins=1); prints ns per pair.
 *
 * bench-objops hot --ops M
 *	A cache-hot annotation call against a spinlock: 16 objects, each
 *	activated and deactivated in turn, M calls; and M / 2 uncontended
 *	spinlock lock + unlock pairs (glibc's pthread_spin_lock, our copy:
 *	libodebug interposes glibc's), the two loops
 *	alternated over 11 rounds.  Prints the median ns per call, per pair
 *	and their ratio (with the rounds' lowest and highest ratios).  With
 *	--threads 2, a second thread sleeps throughout (glibc's one-thread
 *	flag off: libodebug's compare-and-swap is the locked one, where one
 *	thread gets the unlocked cmpxchg).
 *
 * bench-objops first --live N
 *	The first N objects a program tracks, one per 1,100-byte malloc'd
 *	block (a heap of N * 1.1 KB, touched before): the page faults the
 *	N debug_object_init() calls take (getrusage), after one object
 *	tracked and freed elsewhere has mapped the table and the pool.
 *	What the table's lines and the pool cost a program's first
 *	objects; ODEBUG unset is the control (0).
 *
 * Objects are never touched by the benchmark, and libodebug does not read
 * them: their pages stay unpopulated (MAP_NORESERVE), so a million sparse
 * objects cost address space only.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "odebug.h"

#define PAGE	4096ul

static const struct debug_obj_descr bench_descr = { .name = "bench-object" };

struct region {
	char *base;
	size_t bytes;
	unsigned long n, per_page;
};

struct worker {
	pthread_t thread;
	struct region r;
	unsigned long cycles;
	uint64_t seed;
	double ns, cpu_ns;
};

static pthread_barrier_t start_line;
static unsigned long mix = 1;		/* --mix: 1 free first, 2 deactivate first */

/* 100 distinct call sites, for origins: site_00 .. site_99. */
static volatile unsigned int site_sink;

#define SITE(n)								\
	static __attribute__((noinline)) void site_##n(void *p, int op)	\
	{								\
		site_sink = 1##n;	/* distinct bodies: no folding */	\
		if (op)							\
			(void)debug_object_activate(p, &bench_descr);	\
		else							\
			debug_object_init(p, &bench_descr);		\
	}
#define SITES10(d) SITE(d##0) SITE(d##1) SITE(d##2) SITE(d##3) SITE(d##4) \
		   SITE(d##5) SITE(d##6) SITE(d##7) SITE(d##8) SITE(d##9)
SITES10(0) SITES10(1) SITES10(2) SITES10(3) SITES10(4)
SITES10(5) SITES10(6) SITES10(7) SITES10(8) SITES10(9)
#define PTRS10(d) site_##d##0, site_##d##1, site_##d##2, site_##d##3, site_##d##4, \
		  site_##d##5, site_##d##6, site_##d##7, site_##d##8, site_##d##9
static void (*const sites[100])(void *, int) = {
	PTRS10(0), PTRS10(1), PTRS10(2), PTRS10(3), PTRS10(4),
	PTRS10(5), PTRS10(6), PTRS10(7), PTRS10(8), PTRS10(9),
};

static uint64_t next_rand(uint64_t s)
{
	return s * 6364136223846793005ULL + 1442695040888963407ULL;
}

/* Uniform in [0, n) for n < 2^32. */
static unsigned long pick(uint64_t s, unsigned long n)
{
	return (unsigned long)(((s >> 32) * (uint64_t)n) >> 32);
}

static double clock_ns(clockid_t clock)
{
	struct timespec t;

	clock_gettime(clock, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static double now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static void region_map(struct region *r, unsigned long n, unsigned long per_page)
{
	r->n = n;
	r->per_page = per_page;
	r->bytes = (n + per_page - 1) / per_page * PAGE;
	r->base = mmap(NULL, r->bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (r->base == MAP_FAILED) {
		perror("bench-objops: mmap");
		exit(1);
	}
}

static void *obj_at(const struct region *r, unsigned long i)
{
	return r->base + i / r->per_page * PAGE + i % r->per_page * (PAGE / r->per_page);
}

/* ---- cycle ---------------------------------------------------------- */

static void *cycle_thread(void *arg)
{
	struct worker *w = arg;
	uint64_t s = w->seed;
	unsigned long c, i;
	double t0, cpu0;

	for (i = 0; i < w->r.n; i++) {
		void *obj = obj_at(&w->r, i);

		debug_object_init(obj, &bench_descr);
		debug_object_activate(obj, &bench_descr);
		if (mix == 1)
			debug_object_deactivate(obj, &bench_descr);
	}
	pthread_barrier_wait(&start_line);
	t0 = now_ns();
	cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	if (mix == 1) {
		for (c = 0; c < w->cycles; c++) {
			void *obj;

			s = next_rand(s);
			obj = obj_at(&w->r, pick(s, w->r.n));
			debug_object_free(obj, &bench_descr);
			debug_object_init(obj, &bench_descr);
			debug_object_activate(obj, &bench_descr);
			debug_object_deactivate(obj, &bench_descr);
		}
	} else {
		for (c = 0; c < w->cycles; c++) {
			void *obj;

			s = next_rand(s);
			obj = obj_at(&w->r, pick(s, w->r.n));
			debug_object_deactivate(obj, &bench_descr);
			debug_object_free(obj, &bench_descr);
			debug_object_init(obj, &bench_descr);
			debug_object_activate(obj, &bench_descr);
		}
	}
	w->ns = now_ns() - t0;
	w->cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
	pthread_barrier_wait(&start_line);
	return NULL;
}

static int cycle(unsigned long live, unsigned long per_page, unsigned long threads,
		 unsigned long ops)
{
	struct debug_objects_stats st;
	struct worker *w = calloc(threads, sizeof(*w));
	unsigned long i, cycles = ops / 4 / threads;
	double t0, wall, sum = 0, cpu = 0;

	if (!w)
		return 1;
	pthread_barrier_init(&start_line, NULL, (unsigned int)threads + 1);
	for (i = 0; i < threads; i++) {
		region_map(&w[i].r, live / threads, per_page);
		w[i].cycles = cycles;
		w[i].seed = 0x9E3779B97F4A7C15ULL * (i + 1);
		if (pthread_create(&w[i].thread, NULL, cycle_thread, &w[i]))
			return 1;
	}
	pthread_barrier_wait(&start_line);	/* every object tracked */
	t0 = now_ns();
	pthread_barrier_wait(&start_line);	/* every thread done */
	wall = now_ns() - t0;
	for (i = 0; i < threads; i++) {
		pthread_join(w[i].thread, NULL);
		sum += w[i].ns;
		cpu += w[i].cpu_ns;
	}
	debug_objects_get_stats(&st, sizeof(st));
	printf("objops mode=cycle mix=%lu live=%lu per_page=%lu threads=%lu ops=%lu "
	       "ns_per_op=%.2f thread_ns_per_op=%.2f cpu_ns_per_op=%.2f mops=%.3f enabled=%d "
	       "pool_used=%lu max_chain=%lu\n",
	       mix, live / threads * threads, per_page, threads, cycles * 4 * threads,
	       wall / (double)(cycles * 4 * threads),
	       sum / (double)threads / (double)(cycles * 4),
	       cpu / (double)threads / (double)(cycles * 4),
	       (double)(cycles * 4 * threads) / wall * 1e3,
	       (int)debug_objects_enabled(), st.pool_used, st.max_chain);
	free(w);
	return 0;
}

/* ---- first --------------------------------------------------------- */

static long minor_faults(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

static int first(unsigned long live)
{
	static char warm[64];
	char **blocks = calloc(live, sizeof(*blocks));
	unsigned long i;
	long before, after;

	if (!blocks)
		return 1;
	for (i = 0; i < live; i++) {
		blocks[i] = malloc(1100);
		if (!blocks[i])
			return 1;
		memset(blocks[i], 0, 1100);
	}
	debug_object_init(warm, &bench_descr);
	debug_object_free(warm, &bench_descr);
	before = minor_faults();
	for (i = 0; i < live; i++)
		debug_object_init(blocks[i], &bench_descr);
	after = minor_faults();
	printf("objops mode=first live=%lu block=1100 heap_kb=%lu page_faults=%ld\n",
	       live, live * 1100 / 1024, after - before);
	return 0;
}

/* ---- mem ------------------------------------------------------------ */

static char smaps[4 << 20];

/*
 * Resident kB of the anonymous mappings other than the heap, the stacks,
 * the kernel's and @skip: what libodebug maps for itself lives here (its
 * table and tracker slabs are anonymous mmaps).  No malloc, no stdio.
 */
static unsigned long anon_rss_kb(const struct region *skip)
{
	unsigned long total = 0, lo = 0, hi = 0;
	size_t len = 0;
	ssize_t got;
	bool counted = false;
	char *line, *end;
	int fd = open("/proc/self/smaps", O_RDONLY);

	if (fd < 0)
		return 0;
	while ((got = read(fd, smaps + len, sizeof(smaps) - 1 - len)) > 0)
		len += (size_t)got;
	close(fd);
	smaps[len] = '\0';
	for (line = smaps; *line; line = end + 1) {
		char perms[8], dev[16], path[256];
		unsigned long off, inode;
		int fields;

		end = strchr(line, '\n');
		if (!end)
			break;
		*end = '\0';
		path[0] = '\0';
		fields = sscanf(line, "%lx-%lx %7s %lx %15s %lu %255s",
				&lo, &hi, perms, &off, dev, &inode, path);
		if (fields >= 6) {
			counted = inode == 0 &&
				  (!path[0] || !strncmp(path, "[anon", 5)) &&
				  !(skip && lo < (uintptr_t)skip->base + skip->bytes &&
				    hi > (uintptr_t)skip->base);
			continue;
		}
		if (counted && !strncmp(line, "Rss:", 4))
			total += strtoul(line + 4, NULL, 10);
	}
	return total;
}

static int mem(unsigned long live, unsigned long per_page)
{
	struct debug_objects_stats st0, st1;
	struct region r;
	unsigned long i, start_kb, end_kb;

	memset(&r, 0, sizeof(r));
	debug_objects_get_stats(&st0, sizeof(st0));
	start_kb = anon_rss_kb(NULL);
	region_map(&r, live, per_page);
	for (i = 0; i < live; i++) {
		void *obj = obj_at(&r, i);

		sites[i % 100](obj, 0);
		sites[i % 100](obj, 1);
	}
	end_kb = anon_rss_kb(&r);
	debug_objects_get_stats(&st1, sizeof(st1));
	printf("objops mode=mem live=%lu per_page=%lu enabled=%d anon_start_kb=%lu anon_end_kb=%lu "
	       "pool_used=%lu pool_total_start=%lu pool_total=%lu\n",
	       live, per_page, (int)debug_objects_enabled(), start_kb, end_kb, st1.pool_used,
	       st0.pool_used + st0.pool_free, st1.pool_used + st1.pool_free);
	return 0;
}

/* ---- activate ------------------------------------------------------- */

static int activate(unsigned long live, unsigned long ops)
{
	struct region r;
	unsigned long i, pairs = ops / 2;
	uint64_t s = 12345;
	double t0, ns;

	region_map(&r, live, 1);
	for (i = 0; i < live; i++)
		sites[i % 100](obj_at(&r, i), 0);
	t0 = now_ns();
	for (i = 0; i < pairs; i++) {
		void *obj;

		s = next_rand(s);
		obj = obj_at(&r, pick(s, live));
		sites[(s >> 16) % 100](obj, 1);
		debug_object_deactivate(obj, &bench_descr);
	}
	ns = now_ns() - t0;
	printf("objops mode=activate live=%lu pairs=%lu ns_per_pair=%.2f enabled=%d\n",
	       live, pairs, ns / (double)pairs, (int)debug_objects_enabled());
	return 0;
}

/* ---- hot ------------------------------------------------------------ */

#define HOT_ROUNDS 11

/*
 * glibc's pthread_spin_lock, out of line as it is there (a call, an
 * atomic exchange; the unlock a call and a store), but our own: libodebug
 * interposes pthread_spin_lock with check_pthread=1.
 */
static __attribute__((noinline)) void spin_lock(int *l)
{
	while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(l, __ATOMIC_RELAXED))
			__builtin_ia32_pause();
}

static __attribute__((noinline)) void spin_unlock(int *l)
{
	__atomic_store_n(l, 0, __ATOMIC_RELEASE);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void *sleeper(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static int hot(unsigned long ops, unsigned long threads)
{
	static struct { _Alignas(64) char bytes[64]; } objs[16];
	double call[HOT_ROUNDS], pair[HOT_ROUNDS], ratio[HOT_ROUNDS], t0;
	unsigned long i, n = ops / 2;
	static int lock;
	int r;

	if (threads > 1) {
		pthread_t th;

		if (pthread_create(&th, NULL, sleeper, NULL))
			return 1;
	}
	for (i = 0; i < 16; i++)
		debug_object_init(&objs[i], &bench_descr);
	for (r = 0; r < HOT_ROUNDS; r++) {
		t0 = now_ns();
		for (i = 0; i < n; i++) {
			spin_lock(&lock);
			spin_unlock(&lock);
		}
		pair[r] = (now_ns() - t0) / (double)n;
		t0 = now_ns();
		for (i = 0; i < n; i++) {
			(void)debug_object_activate(&objs[i & 15], &bench_descr);
			debug_object_deactivate(&objs[i & 15], &bench_descr);
		}
		call[r] = (now_ns() - t0) / (double)(2 * n);
		ratio[r] = call[r] / pair[r];
	}
	qsort(call, HOT_ROUNDS, sizeof(double), cmp_double);
	qsort(pair, HOT_ROUNDS, sizeof(double), cmp_double);
	qsort(ratio, HOT_ROUNDS, sizeof(double), cmp_double);
	printf("objops mode=hot threads=%lu calls=%lu ns_per_call=%.2f ns_per_spin_pair=%.2f "
	       "ratio=%.3f ratio_min=%.3f ratio_max=%.3f enabled=%d\n",
	       threads > 1 ? 2ul : 1ul, 2 * n, call[HOT_ROUNDS / 2], pair[HOT_ROUNDS / 2],
	       call[HOT_ROUNDS / 2] / pair[HOT_ROUNDS / 2], ratio[0], ratio[HOT_ROUNDS - 1],
	       (int)debug_objects_enabled());
	return 0;
}

static unsigned long arg_num(const char *s)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (*end == 'k' || *end == 'K')
		v *= 1000, end++;
	else if (*end == 'm' || *end == 'M')
		v *= 1000000, end++;
	if (*end) {
		fprintf(stderr, "bench-objops: bad number '%s'\n", s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	unsigned long live = 1000, per_page = 1, threads = 1, ops = 4000000;
	const char *mode = argc > 1 ? argv[1] : "";
	int a;

	for (a = 2; a + 1 < argc; a += 2) {
		if (!strcmp(argv[a], "--live"))
			live = arg_num(argv[a + 1]);
		else if (!strcmp(argv[a], "--per-page"))
			per_page = arg_num(argv[a + 1]);
		else if (!strcmp(argv[a], "--threads"))
			threads = arg_num(argv[a + 1]);
		else if (!strcmp(argv[a], "--ops"))
			ops = arg_num(argv[a + 1]);
		else if (!strcmp(argv[a], "--mix"))
			mix = arg_num(argv[a + 1]);
		else
			break;
	}
	if (a != argc || !live || live >= 1ul << 32 || !threads || threads > 64 ||
	    live < threads || !per_page || per_page > 512 || PAGE % per_page ||
	    (mix != 1 && mix != 2)) {
		fprintf(stderr, "usage: bench-objops cycle|first|mem|activate|hot [--live N] "
			"[--per-page P (1..512, a power of 2)] [--threads T] [--ops M] "
			"[--mix 1|2]\n"
			"  (N, M take k = 1000 and m = 1000000)\n");
		return 2;
	}
	if (!strcmp(mode, "cycle"))
		return cycle(live, per_page, threads, ops);
	if (!strcmp(mode, "first"))
		return first(live);
	if (!strcmp(mode, "mem"))
		return mem(live, per_page);
	if (!strcmp(mode, "activate"))
		return activate(live, ops);
	if (!strcmp(mode, "hot"))
		return hot(ops, threads);
	fprintf(stderr, "bench-objops: unknown mode '%s'\n", mode);
	return 2;
}
