/* SPDX-License-Identifier: MIT */
/*
 * The thread-stack family of held memory (lib/held-tstack.c): the stack
 * a thread was given with pthread_attr_setstack, freed while the thread
 * lives, is "free active" of type thread_stack, named at the free (a
 * report only: no fixup can take a stack from a running thread).  Freed
 * after the join, or after a detached thread is gone, it is silent.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "held-test.h"

#define STACKLEN (64 * 1024)
#define BIGSTACK (1024 * 1024)	/* above malloc's mmap threshold: a free unmaps it */

static int pipefd[2], go[2];	/* ready: thread to main; go: main to thread */
static volatile long thread_tid;

static void *waiter(void *arg)
{
	char c;

	(void)arg;
	thread_tid = syscall(SYS_gettid);
	assert_int_equal(write(pipefd[1], "r", 1), 1);
	assert_int_equal(read(go[0], &c, 1), 1);
	return NULL;
}

static void *quick(void *arg)
{
	thread_tid = syscall(SYS_gettid);
	return arg;
}

/* Start @fn on a stack of @len bytes at @stack. */
static pthread_t start_on(void *stack, size_t len, void *(*fn)(void *), bool detached)
{
	pthread_attr_t a;
	pthread_t t;

	pthread_attr_init(&a);
	assert_int_equal(pthread_attr_setstack(&a, stack, len), 0);
	if (detached)
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	assert_int_equal(pthread_create(&t, &a, fn, NULL), 0);
	pthread_attr_destroy(&a);
	return t;
}

/* The culprit: frees the stack of a thread still running on it. */
static __attribute__((noinline)) void stack_free_running(void *p)
{
	free(p);
}

/*
 * The stack is above malloc's mmap threshold, so the free unmaps it; the
 * thread stays blocked in read() on a pipe nobody writes, and never runs
 * on the unmapped stack again (the process's exit ends it).  glibc keeps
 * its descriptor, now unmapped, on its list of user stacks, which the next
 * pthread_create walks: this test runs last.
 */
static int never[2];

static void *blocked(void *arg)
{
	char c;

	(void)arg;
	thread_tid = syscall(SYS_gettid);
	if (write(pipefd[1], "r", 1) != 1 || read(never[0], &c, 1) >= 0)
		abort();
	return NULL;
}

static void running_threads_stack_freed_is_reported(void **state)
{
	void *stack = malloc(BIGSTACK);
	char c, holder[64];

	(void)state;
	assert_int_equal(pipe(pipefd), 0);
	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(never), 0);
	start_on(stack, BIGSTACK, blocked, true);
	assert_int_equal(read(pipefd[0], &c, 1), 1);
	snprintf(holder, sizeof(holder), "holder: stack of thread %ld, running", thread_tid);
	EXPECT_HELD_AS("ODEBUG: free active", "stack_free_running", 0,
		       stack_free_running(stack), "object type: thread_stack", holder);
	close(pipefd[0]);
	close(pipefd[1]);
	close(go[0]);
	close(go[1]);
}

/* --- must not be reported ------------------------------------------- */

static void joined_or_gone_first_is_silent(void **state)
{
	(void)state;
	EXPECT_SILENT({	/* joined, then freed */
		void *stack = NULL;

		posix_memalign(&stack, 4096, STACKLEN);
		pthread_join(start_on(stack, STACKLEN, quick, false), NULL);
		free(stack);
	});
	EXPECT_SILENT({	/* detached, gone (the kernel says so), then freed */
		void *stack = NULL;

		posix_memalign(&stack, 4096, STACKLEN);
		thread_tid = 0;
		start_on(stack, STACKLEN, quick, true);
		while (!thread_tid || syscall(SYS_tgkill, getpid(), thread_tid, 0) == 0)
			usleep(1000);
		free(stack);
	});
}

/* One stack for thread after thread, then freed. */
static void reused_stack_is_silent(void **state)
{
	(void)state;
	EXPECT_SILENT({
		void *stack = NULL;

		posix_memalign(&stack, 4096, STACKLEN);
		for (int i = 0; i < 50; i++)
			pthread_join(start_on(stack, STACKLEN, quick, false), NULL);
		free(stack);
		for (int i = 0; i < 20; i++) {
			posix_memalign(&stack, 4096, STACKLEN);
			pthread_join(start_on(stack, STACKLEN, quick, false), NULL);
			free(stack);
		}
	});
}

/* A fork child has no thread but the forking one: its copy of a stack is its own. */
static void fork_child_is_silent(void **state)
{
	void *stack = NULL;
	char c;
	int status;
	pthread_t t;
	pid_t pid;

	(void)state;
	posix_memalign(&stack, 4096, STACKLEN);
	assert_int_equal(pipe(pipefd), 0);
	assert_int_equal(pipe(go), 0);
	t = start_on(stack, STACKLEN, waiter, false);
	assert_int_equal(read(pipefd[0], &c, 1), 1);
	EXPECT_SILENT({
		pid = fork();
		if (pid == 0) {
			stats_mark();
			free(stack);
			_exit(stats_delta().warnings ? 1 : 0);
		}
		waitpid(pid, &status, 0);
	});
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(write(go[1], "g", 1), 1);
	EXPECT_SILENT({
		pthread_join(t, NULL);
		free(stack);
	});
	close(pipefd[0]);
	close(pipefd[1]);
	close(go[0]);
	close(go[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(joined_or_gone_first_is_silent),
		cmocka_unit_test(reused_stack_is_silent),
		cmocka_unit_test(fork_child_is_silent),
		cmocka_unit_test(running_threads_stack_freed_is_reported),	/* last */
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
