/* SPDX-License-Identifier: MIT */
/*
 * The module-code family of held memory (lib/checks/held/held-module.c): when a
 * dlclose() unloads a module, a live key's destructor, an installed
 * signal handler, an armed SIGEV_THREAD timer's function or a running
 * thread's start routine left in it after its destructors is reported
 * ("dlclose held", module_code) at the dlclose, and the fixup makes the
 * holder stop calling into the unmapped code where it can (key deleted,
 * SIG_DFL, timer disarmed).  Released first, or by the module's own
 * destructor, the module unloads silently.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>

#include "held-test.h"

static const char *path;

static void *load(void)
{
	void *h = dlopen(path, RTLD_NOW);

	assert_non_null(h);
	return h;
}

static void *sym(void *h, const char *name)
{
	void *p = dlsym(h, name);

	assert_non_null(p);
	return p;
}

static int is_path(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	return info->dlpi_name && !strcmp(info->dlpi_name, data);
}

/* Is the module mapped?  (The loader's list: no reference taken or dropped.) */
static bool loaded(void)
{
	return dl_iterate_phdr(is_path, (void *)path) != 0;
}

/* The culprit: closes a module whose code is still needed. */
static __attribute__((noinline)) int module_close_held(void *h)
{
	return dlclose(h);
}

#define EXPECT_DLCLOSE_HELD(h, ...)						\
	EXPECT_HELD_AS("ODEBUG: dlclose held", "module_close_held", 1,		\
		       assert_int_equal(module_close_held(h), 0),		\
		       "object type: module_code", __VA_ARGS__)

static int setup(void **state)
{
	(void)state;
	path = getenv("HELD_MODULE");
	return path ? 0 : -1;
}

/* A key with a value in this thread: reported; the fixup deletes the key. */
static void key_destructor_is_reported(void **state)
{
	void *h = load();
	pthread_key_t key;

	(void)state;
	assert_int_equal(((int (*)(int))sym(h, "mod_key"))(1), 0);
	key = ((unsigned int (*)(void))sym(h, "mod_key_number"))();
	EXPECT_DLCLOSE_HELD(h, "holder: key destructor", "(a value set in this thread) in",
			    "unloaded after its destructors: key deleted", "hint: mod_destructor");
	assert_false(loaded());
	assert_int_equal(pthread_setspecific(key, &key), EINVAL);	/* deleted */
}

/* A handler still installed: reported; the fixup makes the disposition SIG_DFL. */
static void signal_handler_is_reported(void **state)
{
	void *h = load();
	struct sigaction now;

	(void)state;
	assert_int_equal(((int (*)(void))sym(h, "mod_handler"))(), 0);
	EXPECT_DLCLOSE_HELD(h, "holder: signal handler for SIGUSR1 in",
			    "unloaded after its destructors: reset to SIG_DFL", "hint: mod_on_usr1");
	assert_false(loaded());
	assert_int_equal(sigaction(SIGUSR1, NULL, &now), 0);
	assert_ptr_equal(now.sa_handler, SIG_DFL);
}

/* An armed timer: reported; the fixup disarms it. */
static void timer_function_is_reported(void **state)
{
	struct itimerspec now;
	void *h = load();
	timer_t t;

	(void)state;
	assert_int_equal(((int (*)(timer_t *, void *))sym(h, "mod_timer"))(&t, &t), 0);
	EXPECT_DLCLOSE_HELD(h, "holder: timer", "armed, its SIGEV_THREAD function in",
			    "unloaded after its destructors: disarmed", "hint: mod_on_timer");
	assert_false(loaded());
	assert_int_equal(timer_gettime(t, &now), 0);
	assert_true(!now.it_value.tv_sec && !now.it_value.tv_nsec);
	timer_delete(t);
}

/* Until thread @tid sleeps in read() (the kernel's word: its current system call). */
static void wait_in_read(int tid)
{
	char task[64], line[64];
	FILE *f;
	int i;

	snprintf(task, sizeof(task), "/proc/self/task/%d/syscall", tid);
	for (i = 0; i < 5000; i++) {
		f = fopen(task, "r");
		line[0] = '\0';
		if (f && !fgets(line, sizeof(line), f))
			line[0] = '\0';
		if (f)
			fclose(f);
		if (!strncmp(line, "0 ", 2))	/* SYS_read */
			return;
		usleep(1000);
	}
	fail_msg("thread %d never slept in read()", tid);
}

/*
 * The same with sigev_value 0, no pointer: the timer's function is held
 * all the same.  It would run 200 ms after the dlclose, in unmapped
 * code; disarmed by the fixup, the process lives on.
 */
static void timer_without_value_is_reported(void **state)
{
	struct itimerspec now;
	void *h = load();
	timer_t t;

	(void)state;
	assert_int_equal(((int (*)(timer_t *, long))sym(h, "mod_timer_in"))(&t, 200), 0);
	EXPECT_DLCLOSE_HELD(h, "holder: timer", "armed, its SIGEV_THREAD function in",
			    "unloaded after its destructors: disarmed", "hint: mod_on_timer");
	assert_false(loaded());
	usleep(400000);		/* past the expiry it would have had */
	assert_int_equal(timer_gettime(t, &now), 0);
	assert_true(!now.it_value.tv_sec && !now.it_value.tv_nsec);
	timer_delete(t);
}

/*
 * A thread still in its start routine: reported, with no fixup.  It
 * sleeps in read() for the rest of the process (in libc, not in the
 * module, once it is there): woken, it would run unmapped code.
 */
static void running_thread_is_reported(void **state)
{
	void *h = load();
	pthread_t t;

	(void)state;
	assert_int_equal(((int (*)(pthread_t *))sym(h, "mod_thread"))(&t), 0);
	wait_in_read(((int (*)(void))sym(h, "mod_thread_tid"))());
	EXPECT_HELD_AS("ODEBUG: dlclose held", "module_close_held", 0,
		       assert_int_equal(module_close_held(h), 0),
		       "object type: module_code", "holder: thread", "running its start routine in",
		       "unloaded after its destructors: no fixup", "hint: mod_routine");
	assert_false(loaded());
}

/*
 * A module opened twice: the first dlclose() only drops a reference (the
 * module stays, its destructor with it): silent; the second unloads it
 * and is reported.
 */
static void opened_twice_reports_at_last_close(void **state)
{
	void *h = load(), *again = load();

	(void)state;
	assert_ptr_equal(h, again);
	assert_int_equal(((int (*)(int))sym(h, "mod_key"))(1), 0);
	EXPECT_SILENT(assert_int_equal(dlclose(h), 0));
	assert_true(loaded());
	EXPECT_DLCLOSE_HELD(again, "holder: key destructor", "(a value set in this thread) in",
			    "hint: mod_destructor");
	assert_false(loaded());
}

/* Opened RTLD_NODELETE: no dlclose() unloads it, so none is checked. */
static void nodelete_is_silent(void **state)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_NODELETE);

	(void)state;
	assert_non_null(h);
	assert_int_equal(((int (*)(int))sym(h, "mod_key"))(1), 0);
	EXPECT_SILENT(assert_int_equal(dlclose(h), 0));
	assert_true(loaded());
	((int (*)(void))sym(h, "mod_key_delete"))();
}

/* --- must not be reported ------------------------------------------- */

/* Each released first (key deleted, handler reset, timer deleted, thread joined): unloads. */
static void released_first_unloads_silently(void **state)
{
	(void)state;
	EXPECT_SILENT({
		void *h = load();
		timer_t t;
		pthread_t th;

		((int (*)(int))sym(h, "mod_key"))(1);
		((int (*)(void))sym(h, "mod_handler"))();
		((int (*)(timer_t *, void *))sym(h, "mod_timer"))(&t, &t);
		((int (*)(pthread_t *))sym(h, "mod_thread"))(&th);
		((void (*)(pthread_t))sym(h, "mod_thread_stop"))(th);
		timer_delete(t);
		signal(SIGUSR1, SIG_DFL);
		((int (*)(void))sym(h, "mod_key_delete"))();
		assert_int_equal(dlclose(h), 0);
	});
	assert_false(loaded());
}

/*
 * Each still set up at the dlclose, and released by the module's own
 * destructor (handler restored, key deleted, thread joined, timer
 * deleted), which runs inside that dlclose: nothing needs the code once
 * it is unmapped, so the module unloads silently.
 */
static void released_by_its_destructor_unloads_silently(void **state)
{
	struct sigaction now;

	(void)state;
	EXPECT_SILENT({
		void *h = load();
		timer_t t;
		pthread_t th;

		assert_int_equal(((int (*)(int))sym(h, "mod_key"))(1), 0);
		assert_int_equal(((int (*)(void))sym(h, "mod_handler"))(), 0);
		assert_int_equal(((int (*)(timer_t *, void *))sym(h, "mod_timer"))(&t, &t), 0);
		assert_int_equal(((int (*)(pthread_t *))sym(h, "mod_thread"))(&th), 0);
		((void (*)(void))sym(h, "mod_release_at_unload"))();
		assert_int_equal(dlclose(h), 0);
	});
	assert_false(loaded());
	assert_int_equal(sigaction(SIGUSR1, NULL, &now), 0);
	assert_ptr_equal(now.sa_handler, SIG_DFL);
}

/* A SIGEV_THREAD timer of the module that expired (one-shot) calls nothing more: unloads. */
static void expired_timer_unloads_silently(void **state)
{
	struct itimerspec soon = { .it_value = { 0, 1000000 } }, now;
	void *h = load();
	timer_t t;

	(void)state;
	assert_int_equal(((int (*)(timer_t *, void *))sym(h, "mod_timer"))(&t, &t), 0);
	assert_int_equal(timer_settime(t, 0, &soon, NULL), 0);
	for (int i = 0; i < 1000; i++) {
		assert_int_equal(timer_gettime(t, &now), 0);
		if (!now.it_value.tv_sec && !now.it_value.tv_nsec)
			break;
		usleep(1000);
	}
	usleep(20000);	/* its function has run and returned */
	EXPECT_SILENT(assert_int_equal(dlclose(h), 0));
	assert_false(loaded());
	timer_delete(t);
}

/* The same module loaded, used and released again and again. */
static void reloaded_is_silent(void **state)
{
	(void)state;
	EXPECT_SILENT({
		for (int i = 0; i < 10; i++) {
			void *h = load();

			((int (*)(int))sym(h, "mod_key"))(1);
			((int (*)(void))sym(h, "mod_key_delete"))();
			dlclose(h);
		}
	});
	assert_false(loaded());
}

/* A fork child's dlclose: its parent's records are not its own. */
static void fork_child_is_silent(void **state)
{
	void *h = load();
	int status;
	pid_t pid;

	(void)state;
	((int (*)(void))sym(h, "mod_handler"))();
	signal(SIGUSR1, SIG_IGN);	/* the child's disposition names nothing in it */
	((int (*)(int))sym(h, "mod_key"))(0);
	EXPECT_SILENT({
		pid = fork();
		if (pid == 0) {
			stats_mark();
			dlclose(h);
			_exit(stats_delta().warnings ? 1 : 0);
		}
		waitpid(pid, &status, 0);
	});
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	signal(SIGUSR1, SIG_DFL);
	((int (*)(void))sym(h, "mod_key_delete"))();
	EXPECT_SILENT(dlclose(h));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(released_first_unloads_silently),
		cmocka_unit_test(released_by_its_destructor_unloads_silently),
		cmocka_unit_test(reloaded_is_silent),
		cmocka_unit_test(fork_child_is_silent),
		cmocka_unit_test(key_destructor_is_reported),
		cmocka_unit_test(signal_handler_is_reported),
		cmocka_unit_test(timer_function_is_reported),
		cmocka_unit_test(timer_without_value_is_reported),
		cmocka_unit_test(expired_timer_unloads_silently),
		cmocka_unit_test(opened_twice_reports_at_last_close),
		/* Its thread sleeps on in the process, one more thread from then on. */
		cmocka_unit_test(running_thread_is_reported),
		cmocka_unit_test(nodelete_is_silent),	/* last: the module stays */
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
