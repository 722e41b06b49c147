/* SPDX-License-Identifier: MIT */
/*
 * Threads hammering the table: on disjoint objects, and on shared objects
 * with operations whose outcome does not depend on their order.  Every
 * tracker must be accounted for at the end.  Threads only count; the main
 * thread asserts (cmocka is not thread-safe).
 */
#include <pthread.h>
#include <stdlib.h>

#include "helpers.h"

#define THREADS	4
#define OBJS	2000
#define ROUNDS	200000
#define SHARED	512

struct worker {
	pthread_t thread;
	unsigned int seed;
	char *objs;			/* OBJS objects of 16 bytes */
	unsigned char state[OBJS];	/* the model: what we expect */
	long errors;
};

static char shared[SHARED][16];

static unsigned int next_rand(unsigned int *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

/* Disjoint objects: a legal life cycle, checked against a private model. */
static void *disjoint_worker(void *arg)
{
	struct worker *w = arg;
	int i;

	for (i = 0; i < ROUNDS; i++) {
		unsigned int r = next_rand(&w->seed);
		int k = (int)(r % OBJS);
		void *obj = w->objs + 16 * k;

		switch (w->state[k]) {
		case ODEBUG_STATE_NOTAVAILABLE:
			debug_object_init(obj, &bare_descr);
			w->state[k] = ODEBUG_STATE_INIT;
			break;
		case ODEBUG_STATE_INIT:
		case ODEBUG_STATE_INACTIVE:
			if (r & 0x100) {
				if (debug_object_activate(obj, &bare_descr))
					w->errors++;
				w->state[k] = ODEBUG_STATE_ACTIVE;
			} else {
				debug_object_free(obj, &bare_descr);
				w->state[k] = ODEBUG_STATE_NOTAVAILABLE;
			}
			break;
		case ODEBUG_STATE_ACTIVE:
			debug_object_deactivate(obj, &bare_descr);
			w->state[k] = ODEBUG_STATE_INACTIVE;
			break;
		}
		if (debug_object_get_state(obj) != w->state[k])
			w->errors++;
		/* Shared objects: init, deactivate and assert_init commute. */
		obj = shared[r % SHARED];
		switch ((r >> 12) % 3) {
		case 0: debug_object_init(obj, &bare_descr); break;
		case 1: debug_object_deactivate(obj, &bare_descr); break;
		default: debug_object_assert_init(obj, &bare_descr); break;
		}
	}
	return NULL;
}

static void threads_on_disjoint_and_shared_objects_lose_nothing(void **state)
{
	struct worker w[THREADS];
	long tracked = 0;
	int i, k;

	(void)state;
	for (k = 0; k < SHARED; k++)
		debug_object_init(shared[k], &bare_descr);
	stats_mark();
	for (i = 0; i < THREADS; i++) {
		w[i].seed = 1234u + (unsigned int)i;
		w[i].objs = calloc(OBJS, 16);
		w[i].errors = 0;
		for (k = 0; k < OBJS; k++)
			w[i].state[k] = ODEBUG_STATE_NOTAVAILABLE;
		assert_int_equal(pthread_create(&w[i].thread, NULL, disjoint_worker, &w[i]), 0);
	}
	for (i = 0; i < THREADS; i++)
		assert_int_equal(pthread_join(w[i].thread, NULL), 0);

	assert_int_equal(stats_delta().warnings, 0);
	for (i = 0; i < THREADS; i++) {
		assert_int_equal(w[i].errors, 0);
		for (k = 0; k < OBJS; k++) {
			assert_int_equal(debug_object_get_state(w[i].objs + 16 * k), w[i].state[k]);
			tracked += w[i].state[k] != ODEBUG_STATE_NOTAVAILABLE;
		}
	}
	for (k = 0; k < SHARED; k++) {
		enum debug_obj_state s = debug_object_get_state(shared[k]);

		assert_true(s == ODEBUG_STATE_INIT || s == ODEBUG_STATE_INACTIVE);
	}
	/* Every tracker accounted for: the model's objects plus the shared. */
	assert_int_equal(stats_delta().used, tracked);
	for (i = 0; i < THREADS; i++) {
		for (k = 0; k < OBJS; k++)
			if (w[i].state[k] == ODEBUG_STATE_ACTIVE)
				debug_object_deactivate(w[i].objs + 16 * k, &bare_descr);
		release(w[i].objs, OBJS * 16);	/* the free check drops every tracker */
	}
	assert_int_equal(stats_delta().used, 0);
	assert_int_equal(stats_delta().warnings, 0);
}

/* Threads releasing blocks while others init objects in blocks of their own. */
static void *churn_worker(void *arg)
{
	struct worker *w = arg;
	int i;

	for (i = 0; i < ROUNDS / 10; i++) {
		unsigned int r = next_rand(&w->seed);
		size_t size = 16 + r % 4096;
		char *block = malloc(size);

		if (!block) {
			w->errors++;
			continue;
		}
		debug_object_init(block, &bare_descr);
		if (r & 1)
			debug_object_init(block + size / 2, &bare_descr);
		release(block, size);	/* silently drops the inactive trackers */
	}
	return NULL;
}

static void releases_racing_with_tracking_leak_no_tracker(void **state)
{
	struct worker w[THREADS];
	int i;

	(void)state;
	stats_mark();
	for (i = 0; i < THREADS; i++) {
		w[i].seed = 99u + (unsigned int)i;
		w[i].errors = 0;
		assert_int_equal(pthread_create(&w[i].thread, NULL, churn_worker, &w[i]), 0);
	}
	for (i = 0; i < THREADS; i++) {
		assert_int_equal(pthread_join(w[i].thread, NULL), 0);
		assert_int_equal(w[i].errors, 0);
	}
	assert_int_equal(stats_delta().warnings, 0);
	assert_int_equal(stats_delta().used, 0);
}

int test_main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(threads_on_disjoint_and_shared_objects_lose_nothing),
		cmocka_unit_test(releases_racing_with_tracking_leak_no_tracker),
	};

	(void)argc, (void)argv;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
