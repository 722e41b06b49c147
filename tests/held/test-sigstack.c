/* SPDX-License-Identifier: MIT */
/*
 * The signal-stack family of held memory (lib/checks/held/held-sigstack.c): an
 * installed sigaltstack freed is "free active" of type sigaltstack,
 * named at the free; when the freeing thread is its owner the fixup
 * disables it (handlers then run on the thread's stack), another
 * thread's is a report only.  SS_DISABLE, a replacement or the thread's
 * exit first is silent.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "held-test.h"

#define SSLEN (64 * 1024)

static volatile int handled;

static void on_usr1(int sig)
{
	(void)sig;
	handled++;
}

static int setup(void **state)
{
	struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = SA_ONSTACK };

	(void)state;
	return sigaction(SIGUSR1, &sa, NULL);
}

static void *install(size_t len)
{
	stack_t ss = { .ss_sp = malloc(len), .ss_size = len };

	assert_int_equal(sigaltstack(&ss, NULL), 0);
	return ss.ss_sp;
}

static void disable(void)
{
	stack_t off = { .ss_flags = SS_DISABLE };

	assert_int_equal(sigaltstack(&off, NULL), 0);
}

/* The culprit: frees a signal stack still installed. */
static __attribute__((noinline)) void sigstack_free_installed(void *p)
{
	free(p);
}

/* This thread's: reported, disabled by the fixup; a signal then runs on the thread's stack. */
static void own_stack_freed_is_reported_and_disabled(void **state)
{
	void *p = install(SSLEN), *again;
	char holder[80];
	stack_t cur;

	(void)state;
	snprintf(holder, sizeof(holder), "holder: sigaltstack of thread %ld (this thread)",
		 (long)syscall(SYS_gettid));
	EXPECT_HELD_REPORT("sigstack_free_installed", sigstack_free_installed(p),
			   "object type: sigaltstack", holder);
	assert_int_equal(sigaltstack(NULL, &cur), 0);
	assert_true(cur.ss_flags & SS_DISABLE);
	again = malloc(SSLEN);
	memset(again, 0x5a, SSLEN);
	handled = 0;
	raise(SIGUSR1);
	assert_int_equal(handled, 1);
	for (size_t i = 0; i < SSLEN; i++)
		assert_int_equal(((unsigned char *)again)[i], 0x5a);
	free(again);
}

/* Another thread's, still installed: a report only (no fixup from here). */
static int pipefd[2], go[2];	/* ready: thread to main; go: main to thread */
static void *owner_stack;
static long owner_tid;

static void *owner(void *arg)
{
	char c;

	(void)arg;
	owner_tid = syscall(SYS_gettid);
	owner_stack = install(SSLEN);
	assert_int_equal(write(pipefd[1], "r", 1), 1);
	assert_int_equal(read(go[0], &c, 1), 1);	/* until the main thread freed it */
	disable();
	return NULL;
}

static void other_threads_stack_freed_is_reported(void **state)
{
	pthread_t t;
	char c, holder[80];

	(void)state;
	assert_int_equal(pipe(pipefd), 0);
	assert_int_equal(pipe(go), 0);
	pthread_create(&t, NULL, owner, NULL);
	assert_int_equal(read(pipefd[0], &c, 1), 1);
	snprintf(holder, sizeof(holder), "holder: sigaltstack of thread %ld (another thread)",
		 owner_tid);
	EXPECT_HELD_AS("ODEBUG: free active", "sigstack_free_installed", 0,
		       sigstack_free_installed(owner_stack), "object type: sigaltstack", holder);
	assert_int_equal(write(go[1], "g", 1), 1);
	pthread_join(t, NULL);
	close(pipefd[0]);
	close(pipefd[1]);
	close(go[0]);
	close(go[1]);
}

/* --- must not be reported ------------------------------------------- */

static void *install_and_exit(void *arg)
{
	(void)arg;
	return install(SSLEN);
}

/* A signal stack in the thread's own frames, installed when it exits. */
static void *local_stack_at_exit(void *arg)
{
	char local[SSLEN] __attribute__((aligned(16)));
	stack_t ss = { .ss_sp = local, .ss_size = sizeof(local) };

	(void)arg;
	assert_int_equal(sigaltstack(&ss, NULL), 0);
	return NULL;
}

static void released_first_is_silent(void **state)
{
	(void)state;
	EXPECT_SILENT({	/* SS_DISABLE, then free */
		void *p = install(SSLEN);

		disable();
		free(p);
	});
	EXPECT_SILENT({	/* replaced, then the first freed */
		void *a = install(SSLEN), *b = install(SSLEN);

		free(a);
		disable();
		free(b);
	});
	EXPECT_SILENT({	/* its thread exited (and was joined), then freed */
		pthread_t t;
		void *p;

		pthread_create(&t, NULL, install_and_exit, NULL);
		pthread_join(t, &p);
		free(p);
	});
	EXPECT_SILENT({	/* in the thread's own frames, its exit ends it */
		pthread_t t;

		pthread_create(&t, NULL, local_stack_at_exit, NULL);
		pthread_join(t, NULL);
	});
}

static void reused_memory_held_again_is_silent(void **state)
{
	(void)state;
	EXPECT_SILENT({
		for (int i = 0; i < 50; i++) {
			void *p = install(SSLEN);

			disable();
			free(p);
		}
	});
}

static void fork_child_is_silent(void **state)
{
	void *p = install(SSLEN);
	int status;
	pid_t pid;

	(void)state;
	EXPECT_SILENT({
		pid = fork();
		if (pid == 0) {
			stats_mark();
			free(p);
			_exit(stats_delta().warnings ? 1 : 0);
		}
		waitpid(pid, &status, 0);
	});
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_SILENT({
		disable();
		free(p);
	});
}

/* Until the main thread (thread id = pid) is a zombie, as the kernel says. */
static bool leader_is_zombie(void)
{
	char path[64], line[256], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)getpid());
	f = fopen(path, "r");
	p = f && fgets(line, sizeof(line), f) ? strrchr(line, ')') : NULL;
	if (f)
		fclose(f);
	return p && p[1] == ' ' && p[2] == 'Z';
}

static void *free_once_leader_gone(void *p)
{
	for (int i = 0; i < 5000 && !leader_is_zombie(); i++)
		usleep(1000);
	if (!leader_is_zombie())
		_exit(2);
	free(p);
	_exit(stats_delta().warnings ? 1 : 0);
}

/*
 * The main thread installs a signal stack and leaves by pthread_exit():
 * the process goes on, its leader a zombie on which no handler can run
 * again (though tgkill(pid, pid, 0) still succeeds).  Another thread
 * frees the stack: silent.
 */
static void leader_exited_stack_freed_is_silent(void **state)
{
	int status;
	pid_t pid;

	(void)state;
	EXPECT_SILENT({
		pid = fork();
		if (pid == 0) {
			pthread_t t;

			stats_mark();
			pthread_create(&t, NULL, free_once_leader_gone, install(SSLEN));
			pthread_exit(NULL);
		}
		waitpid(pid, &status, 0);
	});
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/*
 * A thread that installed a signal stack and returned from its start
 * routine holds it no more (the kernel drops it at the thread's exit),
 * even once its thread id is another thread's: a long-running process
 * reuses ids.  Needs a pid_max small enough to wrap in a test.
 */
static volatile pid_t wanted_tid;
static volatile int tid_seen, release_it;

static volatile int by_pthread_exit;

static void *install_keep_and_exit(void *arg)
{
	stack_t ss = { .ss_sp = arg, .ss_size = SSLEN };

	assert_int_equal(sigaltstack(&ss, NULL), 0);
	wanted_tid = (pid_t)syscall(SYS_gettid);
	if (by_pthread_exit)
		pthread_exit(NULL);
	return NULL;
}

static void *report_tid(void *arg)
{
	(void)arg;
	__atomic_store_n(&tid_seen, (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
	if ((pid_t)syscall(SYS_gettid) == wanted_tid)
		while (!__atomic_load_n(&release_it, __ATOMIC_ACQUIRE))
			usleep(1000);
	return NULL;
}

static void thread_id_reused_after_exit_is_silent(void **state)
{
	void *p = malloc(SSLEN);
	pthread_t t;
	long pid_max = 0;
	FILE *f = fopen("/proc/sys/kernel/pid_max", "r");

	(void)state;
	if (f) {
		if (fscanf(f, "%ld", &pid_max) != 1)
			pid_max = 0;
		fclose(f);
	}
	if (!pid_max || pid_max > 40000) {
		free(p);
		skip();
	}
	pthread_create(&t, NULL, install_keep_and_exit, p);
	pthread_join(t, NULL);
	for (long i = 0; i < 4 * pid_max; i++) {
		__atomic_store_n(&tid_seen, 0, __ATOMIC_RELAXED);
		pthread_create(&t, NULL, report_tid, NULL);
		while (!__atomic_load_n(&tid_seen, __ATOMIC_ACQUIRE))
			sched_yield();
		if (tid_seen == wanted_tid)
			break;
		pthread_join(t, NULL);
	}
	if (tid_seen != wanted_tid) {
		free(p);
		skip();
	}
	EXPECT_SILENT(free(p));	/* its installer is gone; the id's new thread installed nothing */
	release_it = 1;
	pthread_join(t, NULL);
	release_it = 0;
}

/* The same for a thread that ends by pthread_exit() instead of a return. */
static void thread_id_reused_after_pthread_exit_is_silent(void **state)
{
	by_pthread_exit = 1;
	thread_id_reused_after_exit_is_silent(state);
	by_pthread_exit = 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(own_stack_freed_is_reported_and_disabled),
		cmocka_unit_test(other_threads_stack_freed_is_reported),
		cmocka_unit_test(released_first_is_silent),
		cmocka_unit_test(thread_id_reused_after_exit_is_silent),
		cmocka_unit_test(thread_id_reused_after_pthread_exit_is_silent),
		cmocka_unit_test(reused_memory_held_again_is_silent),
		cmocka_unit_test(fork_child_is_silent),
		cmocka_unit_test(leader_exited_stack_freed_is_silent),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
