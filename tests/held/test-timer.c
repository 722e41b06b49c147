/* SPDX-License-Identifier: MIT */
/*
 * The POSIX timer family of held memory (lib/checks/held/held.c): memory freed while
 * an armed timer holds it as sival_ptr is "free active" of type
 * posix_timer, named at the free, and the fixup disarms the timer so its
 * function or signal never gets the freed pointer; a timer disarmed,
 * deleted or expired first is silent.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>

#include "held-test.h"

/* glibc's first ABI (timer_t an int index): programs linked before 2.3.3. */
int timer_create_225(clockid_t c, struct sigevent *evp, int *id);
__asm__(".symver timer_create_225,timer_create@GLIBC_2.2.5");
int timer_settime_225(int id, int flags, const struct itimerspec *v, struct itimerspec *old);
__asm__(".symver timer_settime_225,timer_settime@GLIBC_2.2.5");
int timer_gettime_225(int id, struct itimerspec *v);
__asm__(".symver timer_gettime_225,timer_gettime@GLIBC_2.2.5");
int timer_delete_225(int id);
__asm__(".symver timer_delete_225,timer_delete@GLIBC_2.2.5");

struct conn {
	char name[40];
	long expiries;
};

static volatile long fired;

static void on_expiry(union sigval v)
{
	(void)v;
	__atomic_fetch_add(&fired, 1, __ATOMIC_RELAXED);
}

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)si, (void)uc;
	__atomic_fetch_add(&fired, 1, __ATOMIC_RELAXED);
}

static int setup(void **state)
{
	struct sigaction sa = { .sa_sigaction = on_signal, .sa_flags = SA_SIGINFO };

	(void)state;
	return sigaction(SIGRTMIN, &sa, NULL);
}

static timer_t make(int notify, void *ptr)
{
	struct sigevent se = { .sigev_notify = notify, .sigev_signo = SIGRTMIN,
			       .sigev_value.sival_ptr = ptr };
	timer_t t;

	if (notify == SIGEV_THREAD)
		se.sigev_notify_function = on_expiry;
	assert_int_equal(timer_create(CLOCK_MONOTONIC, &se, &t), 0);
	return t;
}

static void arm_ms(timer_t t, long ms)
{
	struct itimerspec v = { .it_value = { ms / 1000, ms % 1000 * 1000000 } };

	assert_int_equal(timer_settime(t, 0, &v, NULL), 0);
}

static bool armed(timer_t t)
{
	struct itimerspec v;

	assert_int_equal(timer_gettime(t, &v), 0);
	return v.it_value.tv_sec || v.it_value.tv_nsec;
}

/* The culprit: frees a connection whose timer is armed. */
static __attribute__((noinline)) void conn_free_armed(struct conn *c)
{
	free(c);
}

/*
 * SIGEV_THREAD: reported at the free with the holder and the timer's
 * function as the hint; the fixup disarms it, so the function never runs
 * and the reused block stays as written.
 */
static void thread_timer_freed_armed_is_reported_and_disarmed(void **state)
{
	struct conn *c = malloc(sizeof(*c)), *again;
	timer_t t = make(SIGEV_THREAD, c);
	char holder[80];
	long before;

	(void)state;
	fired = 0;
	arm_ms(t, 1000);	/* longer than the first report (the symboliser starts) */
	snprintf(holder, sizeof(holder), "holder: timer %p armed, sival_ptr %p", t, (void *)c);
	EXPECT_HELD_REPORT("conn_free_armed", conn_free_armed(c), "object type: posix_timer",
			   "hint: on_expiry", holder);
	assert_false(armed(t));
	/*
	 * On a loaded machine the timer may expire while the report is
	 * printed, before the fixup: the block is not yet released then.
	 * After the fixup it never runs again.
	 */
	before = fired;
	again = malloc(sizeof(*again));
	memset(again, 0x5a, sizeof(*again));
	usleep(1100000);	/* past the expiry it had */
	assert_int_equal(fired, before);
	for (size_t i = 0; i < sizeof(*again); i++)
		assert_int_equal(((unsigned char *)again)[i], 0x5a);
	timer_delete(t);
	free(again);
}

/* SIGEV_SIGNAL, periodic: the same, and no signal comes. */
static void signal_timer_freed_armed_is_reported_and_disarmed(void **state)
{
	struct conn *c = malloc(sizeof(*c));
	timer_t t = make(SIGEV_SIGNAL, c);
	struct itimerspec v = { .it_value = { 0, 50000000 }, .it_interval = { 0, 50000000 } };

	(void)state;
	fired = 0;
	assert_int_equal(timer_settime(t, 0, &v, NULL), 0);
	EXPECT_HELD_REPORT("conn_free_armed", conn_free_armed(c), "object type: posix_timer");
	assert_false(armed(t));
	fired = 0;	/* expiries before the fixup ran (the report takes time) */
	usleep(150000);
	assert_int_equal(fired, 0);
	timer_delete(t);
}

/* glibc's first ABI (int ids) is checked, and fixed up, the same way. */
static void old_abi_timer_is_reported(void **state)
{
	struct conn *c = malloc(sizeof(*c));
	struct sigevent se = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGRTMIN,
			       .sigev_value.sival_ptr = c };
	struct itimerspec v = { .it_value = { 10, 0 } };
	int id;

	(void)state;
	assert_int_equal(timer_create_225(CLOCK_MONOTONIC, &se, &id), 0);
	assert_int_equal(timer_settime_225(id, 0, &v, NULL), 0);
	EXPECT_HELD_REPORT("conn_free_armed", conn_free_armed(c), "object type: posix_timer");
	assert_int_equal(timer_gettime_225(id, &v), 0);
	assert_int_equal(v.it_value.tv_sec | v.it_value.tv_nsec, 0);
	timer_delete_225(id);
}

/* --- must not be reported ------------------------------------------- */

static void disarmed_deleted_or_expired_first_is_silent(void **state)
{
	static const struct itimerspec zero;

	(void)state;
	EXPECT_SILENT({	/* disarmed, then freed */
		struct conn *c = malloc(sizeof(*c));
		timer_t t = make(SIGEV_THREAD, c);

		arm_ms(t, 10000);
		timer_settime(t, 0, &zero, NULL);
		free(c);
		timer_delete(t);
	});
	EXPECT_SILENT({	/* deleted, then freed */
		struct conn *c = malloc(sizeof(*c));
		timer_t t = make(SIGEV_SIGNAL, c);

		arm_ms(t, 10000);
		timer_delete(t);
		free(c);
	});
	EXPECT_SILENT({	/* a one-shot that expired, left undeleted */
		struct conn *c = malloc(sizeof(*c));
		timer_t t = make(SIGEV_THREAD, c);

		fired = 0;
		arm_ms(t, 10);
		while (!fired)
			usleep(1000);
		free(c);
		timer_delete(t);
	});
	EXPECT_SILENT({	/* SIGEV_NONE hands nothing back */
		struct conn *c = malloc(sizeof(*c));
		timer_t t = make(SIGEV_NONE, c);

		arm_ms(t, 10000);
		free(c);
		timer_delete(t);
	});
}

/* The same memory held again after a free and a reuse. */
static void reused_memory_held_again_is_silent(void **state)
{
	(void)state;
	EXPECT_SILENT({
		for (int i = 0; i < 50; i++) {
			struct conn *c = malloc(sizeof(*c));
			timer_t t = make(i % 2 ? SIGEV_THREAD : SIGEV_SIGNAL, c);

			arm_ms(t, 10000);
			timer_delete(t);
			free(c);
		}
	});
}

/* A fork child has none of its parent's timers: its free is silent. */
static void fork_child_is_silent(void **state)
{
	struct conn *c = malloc(sizeof(*c));
	timer_t t = make(SIGEV_SIGNAL, c);
	int status;
	pid_t pid;

	(void)state;
	arm_ms(t, 10000);
	EXPECT_SILENT({
		pid = fork();
		if (pid == 0) {
			stats_mark();
			free(c);
			_exit(stats_delta().warnings ? 1 : 0);
		}
		waitpid(pid, &status, 0);
	});
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_SILENT({
		timer_delete(t);
		free(c);
	});
}

/*
 * A signal handler that arms a held timer while its thread is inside our
 * bookkeeping (timer_settime is async-signal-safe): it must pass through,
 * not spin on the lock its own thread holds.
 */
static timer_t in_handler;
static volatile long handled;

static void rearm_in_handler(int sig)
{
	struct itimerspec v = { .it_value = { 100, 0 } };

	(void)sig;
	timer_settime(in_handler, 0, &v, NULL);
	handled++;
}

static void signal_handler_in_bookkeeping_does_not_hang(void **state)
{
	struct conn *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b)), *c = malloc(sizeof(*c));
	struct sigaction sa = { .sa_handler = rearm_in_handler }, old;
	struct sigevent se = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGRTMIN + 1,
			       .sigev_value.sival_ptr = c };
	struct itimerspec fast = { { 0, 20000 }, { 0, 20000 } };
	static const struct itimerspec zero;
	timer_t t = make(SIGEV_SIGNAL, a), tick;

	(void)state;
	in_handler = make(SIGEV_SIGNAL, b);
	sigaction(SIGRTMIN + 1, &sa, &old);
	assert_int_equal(timer_create(CLOCK_MONOTONIC, &se, &tick), 0);
	timer_settime(tick, 0, &fast, NULL);
	EXPECT_SILENT({
		for (int i = 0; i < 20000 || handled < 100; i++) {
			arm_ms(t, 100000);
			timer_settime(t, 0, &zero, NULL);
		}
	});
	timer_delete(tick);
	timer_delete(t);
	timer_delete(in_handler);
	sigaction(SIGRTMIN + 1, &old, NULL);
	free(a), free(b), free(c);
}

/*
 * A signal handler deletes its timer while its thread is inside
 * libodebug (the re-entry guard set; here in a descriptor's
 * is_static_object, which runs under a bucket lock): the deletion passes
 * straight through, unseen.  glibc gives the next SIGEV_THREAD timer the
 * same id; made without a pointer and armed, it holds nothing of ours.
 */
static timer_t doomed;

static void delete_in_handler(int sig)
{
	(void)sig;
	timer_delete(doomed);
}

static bool raise_inside(void *addr)
{
	(void)addr;
	raise(SIGUSR2);
	return true;
}

static const struct debug_obj_descr raising_descr = {
	.name = "raising",
	.is_static_object = raise_inside,
};

static void deleted_unseen_then_id_reused_is_silent(void **state)
{
	struct conn *c = malloc(sizeof(*c));
	struct sigaction sa = { .sa_handler = delete_in_handler }, old;
	struct sigevent se = { .sigev_notify = SIGEV_THREAD, .sigev_notify_function = on_expiry };
	static long obj;
	timer_t t;

	(void)state;
	doomed = make(SIGEV_THREAD, c);
	arm_ms(doomed, 100000);
	sigaction(SIGUSR2, &sa, &old);
	debug_object_assert_init(&obj, &raising_descr);	/* the handler runs in there */
	sigaction(SIGUSR2, &old, NULL);
	debug_object_free(&obj, &raising_descr);
	assert_int_equal(timer_create(CLOCK_MONOTONIC, &se, &t), 0);
	if (t != doomed) {
		timer_delete(t);
		free(c);
		skip();
	}
	arm_ms(t, 100000);
	EXPECT_SILENT(free(c));
	timer_delete(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(thread_timer_freed_armed_is_reported_and_disarmed),
		cmocka_unit_test(signal_timer_freed_armed_is_reported_and_disarmed),
		cmocka_unit_test(old_abi_timer_is_reported),
		cmocka_unit_test(disarmed_deleted_or_expired_first_is_silent),
		cmocka_unit_test(reused_memory_held_again_is_silent),
		cmocka_unit_test(fork_child_is_silent),
		cmocka_unit_test(signal_handler_in_bookkeeping_does_not_hang),
		cmocka_unit_test(deleted_unseen_then_id_reused_is_silent),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
