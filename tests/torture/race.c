/* SPDX-License-Identifier: MIT */
/*
 * Race torture: the lockless annotation calls (activate and deactivate by
 * compare-and-swap, table.c's header) against the locked ones on the same
 * objects, from several threads at once.  The table must stay one state
 * machine: whatever the interleaving, an object is held (ACTIVE by a
 * successful activate) by at most one thread, and no hold is lost without
 * a report.
 *
 *   race state SECONDS	3 threads take and release 64 objects (activate
 *			returning 0 grants a hold, deactivate ends it; the
 *			object must stay ACTIVE in between), one more
 *			destroys, frees and re-initialises them
 *   race free SECONDS	3 threads take 64 objects and keep them; one more
 *			runs the free check over each and re-initialises it:
 *			every hold granted is reported by one free check
 *			(fixup_free counts it) before the next is granted
 *   race freed SECONDS LOG
 *			one thread frees and re-initialises 8 objects (the
 *			lockless free), destroys and re-initialises 4
 *			semaphores and 4 spinlocks (the built-in types' free
 *			on re-init), while 3 threads run every other call on
 *			them (the locked paths that look a tracker up and then
 *			read its word: it may turn FREED in between).  Every
 *			state debug_object_get_state() returns and every
 *			report names (LOG: the log_path prefix, JSON) must be
 *			a real one, and the pool's count must match
 *   race signal SECONDS
 *			one thread frees and re-initialises 64 objects while
 *			a 50 us SIGALRM handler does the same to any of them:
 *			the lockless free interrupted by the handler's (and
 *			the other way round; the locked init ignores the
 *			handler's calls); no deadlock, and the pool's count
 *			must match at the end
 *
 * Objects are 16 bytes apart in one 1 KiB array: one chunk, one bucket,
 * four to a chain, so lockless walks pass over their neighbours.  A
 * violation is counted, printed once per kind, and fails the run.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "torture.h"	/* the counters and CHECK(); its descriptor is not used */

#define OBJS	64
#define TAKERS	3

static _Alignas(4096) char objs[OBJS][16];
static int holders[OBJS];		/* threads holding each object now */
static unsigned long granted[OBJS];	/* holds granted (free scenario) */
static unsigned long reported[OBJS];	/* free checks that found it held */
static int stop;
static unsigned long violations, grants;

/* No fixups: a refused destroy, free or init leaves a hold alone. */
static const struct debug_obj_descr descr = { .name = "race" };
static bool count_free(void *addr, enum debug_obj_state state);
static const struct debug_obj_descr kept = {
	.name = "race-kept", .fixup_free = count_free,
};

/* The free check found the object ACTIVE: its hold ends here. */
static bool count_free(void *addr, enum debug_obj_state state)
{
	size_t i = (size_t)((char (*)[16])addr - objs);

	if (state == ODEBUG_STATE_ACTIVE && i < OBJS)
		__atomic_fetch_add(&reported[i], 1, __ATOMIC_SEQ_CST);
	return false;
}

static void violation(const char *what, size_t i)
{
	static int said;

	__atomic_fetch_add(&violations, 1, __ATOMIC_RELAXED);
	if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
		printf("violation: %s (object %zu)\n", what, i);
}

static unsigned int next_rand(unsigned int *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return *seed >> 16;
}

/* Take an object, check nobody else holds it, release it. */
static void *taker(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		size_t i = next_rand(&seed) % OBJS;

		if (debug_object_activate(objs[i], &descr))
			continue;
		__atomic_fetch_add(&grants, 1, __ATOMIC_RELAXED);
		if (__atomic_fetch_add(&holders[i], 1, __ATOMIC_SEQ_CST) != 0)
			violation("two threads hold one object", i);
		/* Refused destroys, frees and inits leave a held object ACTIVE. */
		if (debug_object_get_state(objs[i]) != ODEBUG_STATE_ACTIVE)
			violation("a held object is no longer ACTIVE", i);
		__atomic_fetch_sub(&holders[i], 1, __ATOMIC_SEQ_CST);
		debug_object_deactivate(objs[i], &descr);
	}
	return NULL;
}

/*
 * Destroy, free and re-initialise: each is refused while the object is
 * ACTIVE, and none may overwrite a hold a lockless activate just granted.
 */
static void *changer(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		size_t i = next_rand(&seed) % OBJS;

		switch (next_rand(&seed) % 3) {
		case 0:
			debug_object_destroy(objs[i], &descr);
			break;
		case 1:
			debug_object_free(objs[i], &descr);
			break;
		default:
			debug_object_init(objs[i], &descr);
			break;
		}
		/* An object left untracked or destroyed comes back. */
		if (debug_object_get_state(objs[i]) != ODEBUG_STATE_ACTIVE &&
		    debug_object_get_state(objs[i]) != ODEBUG_STATE_INIT) {
			debug_object_free(objs[i], &descr);
			debug_object_init(objs[i], &descr);
		}
	}
	return NULL;
}

/* Take an object and keep it: only a free check ends the hold. */
static void *keeper(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		size_t i = next_rand(&seed) % OBJS;
		unsigned long g;

		if (debug_object_activate(objs[i], &kept))
			continue;
		__atomic_fetch_add(&grants, 1, __ATOMIC_RELAXED);
		/*
		 * The previous hold was reported (count_free ran before the
		 * check dropped the tracker, and the re-init came after).
		 */
		g = __atomic_add_fetch(&granted[i], 1, __ATOMIC_SEQ_CST);
		/* 0 or less when the previous holder has not counted its grant yet. */
		if ((long)(g - __atomic_load_n(&reported[i], __ATOMIC_SEQ_CST)) > 1)
			violation("a hold granted while another was never reported", i);
	}
	return NULL;
}

/* The free check of each object in turn, then a fresh init. */
static void *checker(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		size_t i = next_rand(&seed) % OBJS;

		debug_check_no_obj_freed(objs[i], sizeof(objs[i]));
		debug_object_init(objs[i], &kept);
	}
	return NULL;
}

/* --- freed: the lockless free against every locked reader --- */

#define FOBJS	8	/* few: the freer meets the readers often */
#define BOBJS	4
static sem_t sems[BOBJS];
static pthread_spinlock_t spins[BOBJS];

/* Untracked objects are static ones: an activate or assert_init tracks them. */
static bool always(void *addr)
{
	(void)addr;
	return true;
}
static const struct debug_obj_descr sdescr = { .name = "race-static", .is_static_object = always };

static bool real_state(int s)
{
	return s == ODEBUG_STATE_INIT || s == ODEBUG_STATE_INACTIVE || s == ODEBUG_STATE_ACTIVE ||
	       s == ODEBUG_STATE_DESTROYED || s == ODEBUG_STATE_NOTAVAILABLE;
}

/* Free (lockless, mostly) and re-initialise; destroy first now and then. */
static void *freer(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		unsigned int r = next_rand(&seed);
		size_t i = r % FOBJS, j = (r >> 4) % BOBJS;

		switch ((r >> 8) % 8) {
		case 0:	/* DESTROYED to FREED */
			debug_object_destroy(objs[i], &sdescr);
			/* fall through */
		default:
			debug_object_free(objs[i], &sdescr);
			debug_object_init(objs[i], &sdescr);
			break;
		case 6:	/* sem_init frees a destroyed semaphore's tracker first */
			sem_destroy(&sems[j]);
			sem_init(&sems[j], 0, 1);
			break;
		case 7:
			pthread_spin_destroy(&spins[j]);
			pthread_spin_init(&spins[j], PTHREAD_PROCESS_PRIVATE);
			break;
		}
	}
	return NULL;
}

/* Every other call, on the same objects: whatever they report, the states are real. */
static void *reader(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg;
	struct timespec past = { 0, 0 };
	int s;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		unsigned int r = next_rand(&seed);
		size_t i = r % FOBJS, j = (r >> 4) % BOBJS;

		__atomic_fetch_add(&grants, 1, __ATOMIC_RELAXED);
		switch ((r >> 8) % 11) {
		case 0:
			debug_object_init(objs[i], &sdescr);
			break;
		case 1:
			if (!debug_object_activate(objs[i], &sdescr))
				debug_object_deactivate(objs[i], &sdescr);
			break;
		case 2:
			debug_object_deactivate(objs[i], &sdescr);
			break;
		case 3:
			debug_object_destroy(objs[i], &sdescr);
			break;
		case 4:
			debug_object_free(objs[i], &sdescr);
			break;
		case 5:
			debug_object_assert_init(objs[i], &sdescr);
			break;
		case 6:
			debug_object_active_state(objs[i], &sdescr, 0, 0);
			break;
		case 7:
			s = debug_object_get_state(objs[i]);
			if (!real_state(s))
				violation("debug_object_get_state() returned no state", i);
			break;
		case 8:
			if (!sem_timedwait(&sems[j], &past))
				sem_post(&sems[j]);
			break;
		case 9:
			if (!sem_trywait(&sems[j]))
				sem_post(&sems[j]);
			break;
		default:
			if (!pthread_spin_trylock(&spins[j]))
				pthread_spin_unlock(&spins[j]);
			break;
		}
	}
	return NULL;
}

/* Every "state" the JSON reports in @path name is a real one; how many reports. */
static long check_log(const char *path)
{
	static const char *const names[] = {
		"initialized", "inactive", "active", "destroyed", "not available",
	};
	static char text[1 << 20];
	const char *p;
	long reports = 0;
	size_t n, k;
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	for (p = text; (p = strstr(p, "\"state\":\"")); ) {
		p += strlen("\"state\":\"");
		for (k = 0; k < sizeof(names) / sizeof(names[0]); k++)
			if (!strncmp(p, names[k], strlen(names[k])) && p[strlen(names[k])] == '"')
				break;
		if (k == sizeof(names) / sizeof(names[0]))
			violation("a report names no state", 0);
		reports++;
	}
	return reports;
}

/* --- signal: the lockless free from a handler that interrupted one --- */

static volatile sig_atomic_t handler_runs;

static void on_alarm(int sig)
{
	static unsigned int seed = 7;
	size_t i = next_rand(&seed) % OBJS;

	(void)sig;
	debug_object_free(objs[i], &sdescr);
	debug_object_init(objs[i], &sdescr);
	handler_runs++;
}

static void signal_run(long seconds)
{
	struct itimerval every = { { 0, 50 }, { 0, 50 } }, off = { { 0, 0 }, { 0, 0 } };
	unsigned int seed = 3;
	time_t end = time(NULL) + seconds;
	size_t i;

	for (i = 0; i < OBJS; i++)
		debug_object_init(objs[i], &sdescr);
	signal(SIGALRM, on_alarm);
	setitimer(ITIMER_REAL, &every, NULL);
	while (time(NULL) < end) {
		for (i = 0; i < 100000; i++) {
			size_t k = next_rand(&seed) % OBJS;

			debug_object_free(objs[k], &sdescr);
			debug_object_init(objs[k], &sdescr);
		}
		grants += i;
	}
	setitimer(ITIMER_REAL, &off, NULL);
	for (i = 0; i < OBJS; i++)
		if (debug_object_get_state(objs[i]) != ODEBUG_STATE_INIT)
			violation("an object freed and initialised is not INIT", i);
	printf("%ld handler runs\n", (long)handler_runs);
	CHECK(handler_runs > 1000, "only %ld handler runs", (long)handler_runs);
}

static void run(void *(*take)(void *), void *(*change)(void *),
		const struct debug_obj_descr *d, long seconds)
{
	pthread_t th[TAKERS + 1];
	struct timespec ts = { seconds, 0 };
	int i;

	for (i = 0; i < OBJS; i++)
		debug_object_init(objs[i], d);
	for (i = 0; i < TAKERS; i++)
		pthread_create(&th[i], NULL, take, (void *)(uintptr_t)(i + 1));
	pthread_create(&th[TAKERS], NULL, change, (void *)(uintptr_t)99);
	nanosleep(&ts, NULL);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i <= TAKERS; i++)
		pthread_join(th[i], NULL);
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";
	long seconds = argc > 2 ? atol(argv[2]) : 2;
	struct debug_objects_stats s;
	size_t i, held = 0, tracked = 0, extra = 0;

	if (!strcmp(what, "state")) {
		run(taker, changer, &descr, seconds);
	} else if (!strcmp(what, "free")) {
		run(keeper, checker, &kept, seconds);
		/* What is still held was granted once more than it was reported. */
		for (i = 0; i < OBJS; i++)
			if (granted[i] - reported[i] !=
			    (debug_object_get_state(objs[i]) == ODEBUG_STATE_ACTIVE))
				violation("holds granted, reported and left disagree", i);
	} else if (!strcmp(what, "freed") && argc > 3) {
		char path[4096];
		long reports;

		for (i = 0; i < BOBJS; i++) {
			sem_init(&sems[i], 0, 1);
			pthread_spin_init(&spins[i], PTHREAD_PROCESS_PRIVATE);
		}
		run(reader, freer, &sdescr, seconds);
		snprintf(path, sizeof(path), "%s.%d", argv[3], (int)getpid());
		reports = check_log(path);
		unlink(path);
		CHECK(reports > 0, "no report in %s: the race was not run", path);
		printf("%ld distinct reports checked\n", reports);
		/* The built-in objects' trackers count too. */
		for (i = 0; i < BOBJS; i++) {
			extra += debug_object_get_state(&sems[i]) != ODEBUG_STATE_NOTAVAILABLE;
			extra += debug_object_get_state((void *)&spins[i]) != ODEBUG_STATE_NOTAVAILABLE;
		}
	} else if (!strcmp(what, "signal")) {
		signal_run(seconds);
	} else {
		fprintf(stderr, "usage: race state|free|signal [SECONDS] | race freed SECONDS LOG\n");
		return 2;
	}
	/* One tracker per tracked object, none leaked or shared. */
	for (i = 0; i < OBJS; i++) {
		held += debug_object_get_state(objs[i]) == ODEBUG_STATE_ACTIVE;
		tracked += debug_object_get_state(objs[i]) != ODEBUG_STATE_NOTAVAILABLE;
	}
	debug_objects_get_stats(&s, sizeof(s));
	tracked += extra;
	CHECK(s.pool_used == tracked, "pool_used %lu, objects tracked %zu", s.pool_used, tracked);
	CHECK(grants > 1000, "only %lu holds granted: the race was not run", grants);
	CHECK(violations == 0, "%lu violations", violations);
	printf("%lu holds granted, %zu held at the end\n", grants, held);
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
