/* SPDX-License-Identifier: MIT */
/*
 * Unlocks by a thread that does not hold the lock: reported at the
 * culprit's call ("unlock non-owner"), naming the owner by thread id and
 * name; the owner's own unlock that follows stays silent.  Every mutex
 * kind (glibc releases normal and adaptive ones for anyone, refuses the
 * others with EPERM), both places a mutex's hold lives (glibc's words;
 * the tracker, for one on the owner's stack, a process-shared one, and
 * every mutex with origins=1: this suite also runs so), C11 mtx_t, and an
 * rwlock's writer.  Silent: a holder that exited, and a fork() child's
 * unlock of what the forking thread held.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <threads.h>

#include "pt.h"

#define NOINLINE __attribute__((noinline, noclone))

static char owner_line[96];

/* "ODEBUG: held by thread <tid> (<name>)": the calling thread is the owner. */
static const char *owner_is_me(void)
{
	char name[17] = "";

	prctl(PR_GET_NAME, name, 0, 0, 0);
	snprintf(owner_line, sizeof(owner_line), "ODEBUG: held by thread %d (%s)\n", tid(), name);
	return owner_line;
}

/* The culprits: a thread that unlocks what the main thread holds. */
static NOINLINE void *culprit_unlocks_mutex(void *m)
{
	intptr_t r = pthread_mutex_unlock(m);

	__asm__ volatile("" : : : "memory");
	return (void *)r;
}

static NOINLINE void *culprit_unlocks_rwlock(void *rw)
{
	intptr_t r = pthread_rwlock_unlock(rw);

	__asm__ volatile("" : : : "memory");
	return (void *)r;
}

static NOINLINE int culprit_unlocks_mtx(void *m)
{
	int r = mtx_unlock(m);

	__asm__ volatile("" : : : "memory");
	return r;
}

static int in_thread(void *(*fn)(void *), void *arg)
{
	pthread_t t;
	void *r;

	assert_int_equal(pthread_create(&t, NULL, fn, arg), 0);
	assert_int_equal(pthread_join(t, &r), 0);
	return (int)(intptr_t)r;
}

/*
 * One non-owner unlock of @m, held by this thread: one report whose first
 * frame is the culprit and whose owner line is ours; glibc's result
 * (@expect) unchanged.
 */
static void expect_nonowner(void *m, void *(*culprit)(void *), int expect, const char *func)
{
	struct stats_delta d;
	char *out, *frame0;
	int r;

	stats_mark();
	capture_start();
	r = in_thread(culprit, m);
	out = capture_stop();
	d = stats_delta();
	assert_int_equal(r, expect);
	if (d.warnings != 1 || count_lines_with(out, "ODEBUG: unlock non-owner active") != 1 ||
	    !strstr(out, owner_is_me()))
		fail_msg("%ld warnings, want one unlock non-owner with \"%s\":\n%s",
			 d.warnings, owner_line, out);
	frame0 = strstr(out, "    #0 ");
	if (!frame0 || !strstr(frame0, func) ||
	    (strchr(frame0, '\n') && strstr(frame0, func) > strchr(frame0, '\n')))
		fail_msg("frame #0 is not %s:\n%s", func, out);
	free(out);
}

/* The job-pool story: a normal mutex, released by a thread that never locked it. */
static void nonowner_unlock_of_a_normal_mutex_names_the_culprit_and_the_owner(void **state)
{
	pthread_mutex_t *m = calloc(1, sizeof(*m));

	(void)state;
	pthread_mutex_init(m, NULL);
	assert_int_equal(pthread_mutex_lock(m), 0);
	expect_nonowner(m, culprit_unlocks_mutex, 0, "culprit_unlocks_mutex");
	/* glibc released it: the owner's unlock is the victim's, silent. */
	EXPECT_SILENT(assert_int_equal(pthread_mutex_unlock(m), 0));
	assert_int_not_equal(debug_object_get_state(m), ODEBUG_STATE_ACTIVE);
	EXPECT_SILENT((pthread_mutex_lock(m), pthread_mutex_unlock(m), free(m)));
}

/* A static initializer and the adaptive kind: the same. */
static void nonowner_unlock_of_static_and_adaptive_mutexes(void **state)
{
	static pthread_mutex_t s = PTHREAD_MUTEX_INITIALIZER;
	static pthread_mutex_t a = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP;

	(void)state;
	pthread_mutex_lock(&s);
	expect_nonowner(&s, culprit_unlocks_mutex, 0, "culprit_unlocks_mutex");
	EXPECT_SILENT(pthread_mutex_unlock(&s));
	pthread_mutex_lock(&a);
	expect_nonowner(&a, culprit_unlocks_mutex, 0, "culprit_unlocks_mutex");
	EXPECT_SILENT(pthread_mutex_unlock(&a));
	/* The note is used up: a second unlock of nobody's hold is reported. */
	EXPECT_REPORT(pthread_mutex_unlock(&a), "ODEBUG: unlock inactive");
}

/* glibc refuses (EPERM) and the owner keeps the hold: reported, nothing changes. */
static void nonowner_unlock_that_glibc_refuses_is_reported_and_changes_nothing(void **state)
{
	static const int kinds[] = { PTHREAD_MUTEX_ERRORCHECK, PTHREAD_MUTEX_RECURSIVE };

	(void)state;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		pthread_mutex_t *m = calloc(1, sizeof(*m));
		pthread_mutexattr_t a;

		pthread_mutexattr_init(&a);
		pthread_mutexattr_settype(&a, kinds[i]);
		pthread_mutex_init(m, &a);
		pthread_mutex_lock(m);
		expect_nonowner(m, culprit_unlocks_mutex, EPERM, "culprit_unlocks_mutex");
		/* Still ours (glibc's 0 says so): the unlock is silent. */
		EXPECT_SILENT((assert_int_equal(pthread_mutex_unlock(m), 0),
			       pthread_mutex_destroy(m), free(m)));
	}
}

/* Robust: the owner is in the lock word; glibc refuses. */
static void nonowner_unlock_of_a_robust_mutex(void **state)
{
	pthread_mutex_t *m = calloc(1, sizeof(*m));
	pthread_mutexattr_t a;

	(void)state;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(m, &a);
	pthread_mutex_lock(m);
	expect_nonowner(m, culprit_unlocks_mutex, EPERM, "culprit_unlocks_mutex");
	EXPECT_SILENT((pthread_mutex_unlock(m), pthread_mutex_destroy(m), free(m)));
}

/* Tracked mode: the hold is in the tracker, and the tracker follows glibc. */
static NOINLINE void stack_mutex_unlocked_by_another(void)
{
	pthread_mutex_t m;

	pthread_mutex_init(&m, NULL);
	pthread_mutex_lock(&m);
	expect_nonowner(&m, culprit_unlocks_mutex, 0, "culprit_unlocks_mutex");
	EXPECT_SILENT(pthread_mutex_unlock(&m));
	assert_int_not_equal(debug_object_get_state(&m), ODEBUG_STATE_ACTIVE);
}

static void nonowner_unlock_of_mutexes_whose_hold_the_tracker_keeps(void **state)
{
	pthread_mutex_t *p = calloc(1, sizeof(*p));
	pthread_mutexattr_t a;
	char here[8];

	(void)state;
	stack_mutex_unlocked_by_another();
	/* Its frame has returned: nothing held there, nothing to say. */
	EXPECT_SILENT(debug_object_init_on_stack(here, &bare_descr); debug_object_free(here, &bare_descr));
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutex_init(p, &a);
	pthread_mutex_lock(p);
	expect_nonowner(p, culprit_unlocks_mutex, 0, "culprit_unlocks_mutex");
	EXPECT_SILENT((pthread_mutex_unlock(p), free(p)));
}

static void nonowner_unlock_of_a_c11_mutex(void **state)
{
	mtx_t *m = calloc(1, sizeof(*m));
	thrd_t t;
	int r = -1;

	(void)state;
	mtx_init(m, mtx_plain);
	mtx_lock(m);
	stats_mark();
	capture_start();
	thrd_create(&t, culprit_unlocks_mtx, m);
	thrd_join(t, &r);
	{
		char *out = capture_stop();

		assert_int_equal(r, thrd_success);
		assert_int_equal(stats_delta().warnings, 1);
		assert_non_null(strstr(out, "ODEBUG: unlock non-owner active"));
		assert_non_null(strstr(out, owner_is_me()));
		assert_non_null(strstr(out, " in culprit_unlocks_mtx"));
		free(out);
	}
	EXPECT_SILENT((mtx_unlock(m), mtx_destroy(m), free(m)));
}

/* An rwlock's writer: glibc would count the culprit's unlock as a reader's. */
static void nonowner_unlock_of_a_write_locked_rwlock(void **state)
{
	pthread_rwlock_t *rw = calloc(1, sizeof(*rw));

	(void)state;
	pthread_rwlock_init(rw, NULL);
	pthread_rwlock_wrlock(rw);
	expect_nonowner(rw, culprit_unlocks_rwlock, 0, "culprit_unlocks_rwlock");
	/* The writer still holds it, as far as the table knows: its unlock is silent. */
	EXPECT_SILENT(pthread_rwlock_unlock(rw));
	assert_int_equal(debug_object_get_state(rw), ODEBUG_STATE_INACTIVE);
	/* Read locks are not a writer's: another thread's read unlock is not judged. */
	free(rw);
}

/* --- silent ---------------------------------------------------------- */

static NOINLINE void *lock_and_exit(void *m)
{
	pthread_mutex_lock(m);
	return NULL;
}

/* The holder exited: nobody live to name (as mutex_held() decides). */
static void unlock_of_a_mutex_whose_holder_exited_is_silent(void **state)
{
	pthread_mutex_t *m = calloc(1, sizeof(*m));

	(void)state;
	pthread_mutex_init(m, NULL);
	in_thread(lock_and_exit, m);
	if (strstr(getenv("ODEBUG_OPTIONS") ? getenv("ODEBUG_OPTIONS") : "", "origins=1"))
		return;	/* the tracker keeps the dead thread's hold: free() would say so */
	EXPECT_SILENT((pthread_mutex_unlock(m), free(m)));
}

static pthread_mutex_t at_fork = PTHREAD_MUTEX_INITIALIZER;
static void fork_prepare(void) { pthread_mutex_lock(&at_fork); }
static void fork_release(void) { pthread_mutex_unlock(&at_fork); }

/* pthread_atfork's child handler unlocks what prepare locked, in the parent's thread's name. */
static void fork_child_unlocking_what_the_parent_held_is_silent(void **state)
{
	int status;
	pid_t pid;

	(void)state;
	pthread_atfork(fork_prepare, fork_release, fork_release);
	pthread_mutex_lock(&at_fork);
	pthread_mutex_unlock(&at_fork);
	stats_mark();
	pid = fork();
	if (pid == 0)
		_exit(stats_delta().warnings ? 1 : 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(stats_delta().warnings, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(nonowner_unlock_of_a_normal_mutex_names_the_culprit_and_the_owner),
		cmocka_unit_test(nonowner_unlock_of_static_and_adaptive_mutexes),
		cmocka_unit_test(nonowner_unlock_that_glibc_refuses_is_reported_and_changes_nothing),
		cmocka_unit_test(nonowner_unlock_of_a_robust_mutex),
		cmocka_unit_test(nonowner_unlock_of_mutexes_whose_hold_the_tracker_keeps),
		cmocka_unit_test(nonowner_unlock_of_a_c11_mutex),
		cmocka_unit_test(nonowner_unlock_of_a_write_locked_rwlock),
		cmocka_unit_test(unlock_of_a_mutex_whose_holder_exited_is_silent),
		cmocka_unit_test(fork_child_unlocking_what_the_parent_held_is_silent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
