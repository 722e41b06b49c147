/* SPDX-License-Identifier: MIT */
/*
 * churn.c - the release-path benchmark.
 *
 * A fixed malloc/free churn loop: each thread owns 4096 slots; every
 * iteration picks a slot at random, frees its block and allocates a new one
 * of a random size (16 B to 1 KiB, or 1 in 8 from 1 KiB to 64 KiB).  The
 * loop is the function churn_loop(), so that callgrind counts exactly it:
 *
 *   valgrind --tool=callgrind --toggle-collect=churn_loop ./bench-churn ...
 *
 * The program does not link libodebug: run it plain, or with libodebug.so in
 * LD_PRELOAD (ODEBUG unset or 1).  With --pairs N, each thread first
 * allocates N/threads pairs of blocks, a 64-byte block holding an object
 * and a block of a churn-like size, then frees the second block of every
 * pair: the churned blocks then fill the holes and share 4 KiB chunks with
 * the others.  When libodebug is loaded and enabled (found with dlsym, so
 * the same binary runs plain), each of those objects is initialised and
 * activated: N tracked objects.  Nothing else is tracked: the threads start
 * together on an atomic counter, not a pthread barrier, which libodebug's
 * built-in checks would track (one tracker anywhere sends every free()
 * through the range check).  --static 1 tracks one object in .bss, far from
 * the churned blocks: the cost of a program that has one tracked object.
 *
 * Usage: bench-churn [--threads T] [--iters I] [--pairs N] [--seed S] [--static 0|1]
 * (numbers take k = 1000 and m = 1000000).
 * Prints one line of key=value pairs.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "odebug.h"

#define SLOTS		4096u		/* per thread */
#define SMALL_MAX	1024u
#define LARGE_MAX	65536u
#define PAIR_BLOCK	64u		/* the block that holds an object */
#define OBJ_OFFSET	16u		/* where the object sits in it */

typedef void (*obj_fn)(void *, const struct debug_obj_descr *);
typedef int (*act_fn)(void *, const struct debug_obj_descr *);
typedef bool (*enabled_fn)(void);
typedef size_t (*stats_fn)(struct debug_objects_stats *, size_t);

static obj_fn odb_init;
static act_fn odb_activate;
static stats_fn odb_stats;

static const struct debug_obj_descr churn_descr = { .name = "churn-object" };

struct worker {
	pthread_t thread;
	unsigned int id;
	unsigned long iters, pairs;
	uint64_t seed;
	double ns;			/* time spent in churn_loop */
	unsigned long shared;		/* live blocks sharing a chunk with an object */
	uintptr_t *obj_chunks;		/* sorted chunk numbers of the objects */
	void *slots[SLOTS];
};

static unsigned int start_line;		/* threads arrived; no pthread object */
static unsigned long start_threads;
static int tracking;
static struct { char pad[16]; long obj; } static_obj;	/* --static 1 */
static size_t live_at_start;		/* trackers when the loop starts */

static uint64_t next_rand(uint64_t s)
{
	return s * 6364136223846793005ULL + 1442695040888963407ULL;
}

/* 16 B .. 1 KiB, uniform. */
static size_t small_size(uint64_t r)
{
	return 16 + (size_t)(r % (SMALL_MAX - 16 + 1));
}

/* 16 B .. 1 KiB, or 1 time in 8 1 KiB + 1 .. 64 KiB, uniform in each. */
static size_t churn_size(uint64_t s)
{
	uint64_t r = s >> 24;

	if ((r & 7) == 0)
		return SMALL_MAX + 1 + (size_t)((r >> 3) % (LARGE_MAX - SMALL_MAX));
	return small_size(r >> 3);
}

/*
 * The measured loop: one free() and one malloc() per iteration, nothing
 * else but the random number.  Exported so callgrind can find it by name.
 */
__attribute__((noinline, visibility("default")))
void churn_loop(void **slots, unsigned long iters, uint64_t *state);

__attribute__((noinline, visibility("default")))
void churn_loop(void **slots, unsigned long iters, uint64_t *state)
{
	uint64_t s = *state;
	unsigned long i;

	for (i = 0; i < iters; i++) {
		unsigned int slot;
		char *p;

		s = next_rand(s);
		slot = (unsigned int)(s >> 45) & (SLOTS - 1);
		free(slots[slot]);
		p = malloc(churn_size(s));
		if (!p)
			abort();
		p[0] = 1;	/* the program uses its memory */
		slots[slot] = p;
	}
	*state = s;
}

static int cmp_uintptr(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;

	return x < y ? -1 : x > y;
}

static bool chunk_has_object(const struct worker *w, uintptr_t chunk)
{
	return bsearch(&chunk, w->obj_chunks, w->pairs, sizeof(uintptr_t),
		       cmp_uintptr) != NULL;
}

/* Pairs: a 64-byte block with an object in it, and a hole made next to it. */
static void make_pairs(struct worker *w)
{
	void **holes;
	unsigned long i;
	uint64_t s = w->seed ^ 0x9e3779b97f4a7c15ULL;

	if (!w->pairs)
		return;
	holes = malloc(w->pairs * sizeof(*holes));
	w->obj_chunks = malloc(w->pairs * sizeof(*w->obj_chunks));
	if (!holes || !w->obj_chunks)
		abort();
	for (i = 0; i < w->pairs; i++) {
		char *block = malloc(PAIR_BLOCK);
		void *obj;

		s = next_rand(s);
		holes[i] = malloc(small_size(s >> 24));
		if (!block || !holes[i])
			abort();
		memset(block, 0, PAIR_BLOCK);
		obj = block + OBJ_OFFSET;
		if (tracking) {
			odb_init(obj, &churn_descr);
			odb_activate(obj, &churn_descr);
		}
		w->obj_chunks[i] = (uintptr_t)obj >> 12;
	}
	for (i = 0; i < w->pairs; i++)
		free(holes[i]);
	free(holes);
	qsort(w->obj_chunks, w->pairs, sizeof(*w->obj_chunks), cmp_uintptr);
}

static void *run(void *arg)
{
	struct worker *w = arg;
	struct timespec t0, t1;
	uint64_t s = w->seed;
	unsigned int i;

	make_pairs(w);
	/* Fill every slot first: each measured iteration frees one block. */
	for (i = 0; i < SLOTS; i++) {
		s = next_rand(s);
		w->slots[i] = malloc(churn_size(s));
		if (!w->slots[i])
			abort();
	}
	__atomic_add_fetch(&start_line, 1, __ATOMIC_ACQ_REL);
	while (__atomic_load_n(&start_line, __ATOMIC_ACQUIRE) < start_threads)
		sched_yield();
	if (!w->id && tracking && odb_stats) {
		struct debug_objects_stats st;

		memset(&st, 0, sizeof(st));
		odb_stats(&st, sizeof(st));
		live_at_start = st.pool_used;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	churn_loop(w->slots, w->iters, &s);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	w->ns = (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);

	/* How many live churned blocks share a 4 KiB chunk with an object? */
	if (w->pairs) {
		for (i = 0; i < SLOTS; i++) {
			uintptr_t a = (uintptr_t)w->slots[i];
			uintptr_t c, last = (a + malloc_usable_size(w->slots[i]) - 1) >> 12;

			for (c = a >> 12; c <= last; c++)
				if (chunk_has_object(w, c)) {
					w->shared++;
					break;
				}
		}
	}
	for (i = 0; i < SLOTS; i++)
		free(w->slots[i]);
	free(w->obj_chunks);
	return NULL;
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
		fprintf(stderr, "bench-churn: bad number '%s'\n", s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	unsigned long threads = 1, iters = 1000000, pairs = 0, seed = 1;
	unsigned long shared = 0, i, stat = 0;
	struct debug_objects_stats st;
	struct worker *w;
	double ns = 0, wall = 0;
	enabled_fn enabled;
	int a;

	for (a = 1; a + 1 < argc; a += 2) {
		if (!strcmp(argv[a], "--threads"))
			threads = arg_num(argv[a + 1]);
		else if (!strcmp(argv[a], "--iters"))
			iters = arg_num(argv[a + 1]);
		else if (!strcmp(argv[a], "--pairs"))
			pairs = arg_num(argv[a + 1]);
		else if (!strcmp(argv[a], "--static"))
			stat = arg_num(argv[a + 1]);
		else if (!strcmp(argv[a], "--seed"))
			seed = arg_num(argv[a + 1]);
		else
			break;
	}
	if (a != argc || !threads || threads > 64 || stat > 1) {
		fprintf(stderr, "usage: bench-churn [--threads T] [--iters I] "
			"[--pairs N] [--seed S] [--static 0|1]\n");
		return 2;
	}

	/* libodebug, if the process has it: found at run time, never linked. */
	*(void **)&enabled = dlsym(RTLD_DEFAULT, "debug_objects_enabled");
	*(void **)&odb_init = dlsym(RTLD_DEFAULT, "debug_object_init");
	*(void **)&odb_activate = dlsym(RTLD_DEFAULT, "debug_object_activate");
	*(void **)&odb_stats = dlsym(RTLD_DEFAULT, "debug_objects_get_stats");
	tracking = enabled && odb_init && odb_activate && enabled();

	w = calloc(threads, sizeof(*w));
	if (!w)
		return 1;
	start_threads = threads;
	if (tracking && stat) {
		odb_init(&static_obj.obj, &churn_descr);
		odb_activate(&static_obj.obj, &churn_descr);
	}
	for (i = 0; i < threads; i++) {
		w[i].id = (unsigned int)i;
		w[i].iters = iters;
		w[i].pairs = pairs / threads;
		w[i].seed = seed * 0x2545F4914F6CDD1DULL + i * 7919;
		if (i && pthread_create(&w[i].thread, NULL, run, &w[i]))
			return 1;
	}
	run(&w[0]);
	for (i = 1; i < threads; i++)
		pthread_join(w[i].thread, NULL);
	for (i = 0; i < threads; i++) {
		ns += w[i].ns;
		wall = w[i].ns > wall ? w[i].ns : wall;
		shared += w[i].shared;
	}
	memset(&st, 0, sizeof(st));
	if (tracking && odb_stats)
		odb_stats(&st, sizeof(st));
	printf("churn threads=%lu iters=%lu frees=%lu pairs=%lu tracked=%lu "
	       "ns_per_iter=%.2f wall_ms=%.2f shared=%.3f pool_used=%lu max_chain=%lu "
	       "max_checked=%lu live_at_start=%zu\n",
	       threads, iters, iters * threads, pairs, tracking ? pairs / threads * threads : 0,
	       ns / (double)threads / (double)iters, wall / 1e6,
	       pairs ? (double)shared / (double)(SLOTS * threads) : 0.0,
	       st.pool_used, st.max_chain, st.max_checked, live_at_start);
	free(w);
	return 0;
}
