/* SPDX-License-Identifier: MIT */
/*
 * The thread-stack family of held memory (lib/checks/held/held-tstack.c): the stack
 * a thread was given with pthread_attr_setstack, freed while the thread
 * lives or until it is joined, is "free active" of type thread_stack,
 * named at the free (a report only: no fixup can take a stack from a
 * running thread).  Freed after any of the joins, or after a detached
 * thread is gone (detached at its creation, before or after its exit),
 * it is silent.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
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
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	char c;

	(void)arg;
	/* Objects of its own frames, checked as frames return: its stack stays held. */
	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&m);
	pthread_mutex_destroy(&m);
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

/* Until the thread is gone, as the kernel says. */
static void wait_gone(void)
{
	while (!thread_tid || syscall(SYS_tgkill, getpid(), thread_tid, 0) == 0)
		usleep(1000);
}

/* The culprit: unmaps the stack of a thread that exited but was not joined. */
static __attribute__((noinline)) void stack_unmap_unjoined(void *p, size_t len)
{
	munmap(p, len);
}

/*
 * The join reads the thread's descriptor at the top of its stack: released
 * after the thread's exit but before the join, the stack is still held.
 * The stack is a mapping of its own, so that its bytes can be put back
 * (mapped again in place, the descriptor copied back) for the join.
 */
static void exited_unjoined_stack_freed_is_reported(void **state)
{
	static char top[16384];
	void *stack, *again;
	pthread_t t;

	(void)state;
	stack = mmap(NULL, STACKLEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(stack != MAP_FAILED);
	thread_tid = 0;
	t = start_on(stack, STACKLEN, quick, false);
	wait_gone();
	memcpy(top, (char *)stack + STACKLEN - sizeof(top), sizeof(top));
	EXPECT_HELD_AS("ODEBUG: free active", "stack_unmap_unjoined", 0,
		       stack_unmap_unjoined(stack, STACKLEN), "object type: thread_stack",
		       "exited, not yet joined");
	again = mmap(stack, STACKLEN, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	assert_ptr_equal(again, stack);
	memcpy((char *)stack + STACKLEN - sizeof(top), top, sizeof(top));
	pthread_join(t, NULL);
	munmap(stack, STACKLEN);
}

/* --- must not be reported ------------------------------------------- */

/* Joined by each of glibc's joins, or detached after or before the exit: then freed. */
static void every_join_and_detach_ends_it(void **state)
{
	(void)state;
	EXPECT_SILENT({
		void *stack = NULL;
		struct timespec ts;
		pthread_t t;

		posix_memalign(&stack, 4096, STACKLEN);
		thread_tid = 0;
		t = start_on(stack, STACKLEN, quick, false);
		wait_gone();
		assert_int_equal(pthread_tryjoin_np(t, NULL), 0);
		free(stack);

		posix_memalign(&stack, 4096, STACKLEN);
		t = start_on(stack, STACKLEN, quick, false);
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 10;
		assert_int_equal(pthread_timedjoin_np(t, NULL, &ts), 0);
		free(stack);

		posix_memalign(&stack, 4096, STACKLEN);
		t = start_on(stack, STACKLEN, quick, false);
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += 10;
		assert_int_equal(pthread_clockjoin_np(t, NULL, CLOCK_MONOTONIC, &ts), 0);
		free(stack);

		/* detached after its exit: glibc lets go of it at once */
		posix_memalign(&stack, 4096, STACKLEN);
		thread_tid = 0;
		t = start_on(stack, STACKLEN, quick, false);
		wait_gone();
		assert_int_equal(pthread_detach(t), 0);
		free(stack);

		/* detached at once (maybe before it began), then gone */
		posix_memalign(&stack, 4096, STACKLEN);
		thread_tid = 0;
		t = start_on(stack, STACKLEN, quick, false);
		assert_int_equal(pthread_detach(t), 0);
		wait_gone();
		free(stack);
	});
}


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
		wait_gone();
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
		cmocka_unit_test(every_join_and_detach_ends_it),
		cmocka_unit_test(exited_unjoined_stack_freed_is_reported),
		cmocka_unit_test(reused_stack_is_silent),
		cmocka_unit_test(fork_child_is_silent),
		cmocka_unit_test(running_threads_stack_freed_is_reported),	/* last */
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
