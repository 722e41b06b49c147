/* SPDX-License-Identifier: MIT */
/*
 * test-start.c - the start's steps, white-box (links the core and runs
 * them itself).
 *
 * A start that fails part-way leaves nothing mapped: the table and the
 * pool are set up, then an address-space limit makes the depot's
 * reservation fail, as it would in a small container; what setup() does
 * then (pool and table undone) must bring the process's mapped bytes back
 * to where they were.
 *
 * The main thread's stack, which the start learns without allocating
 * (raw reads of /proc/self/maps), is the one pthread_getattr_np() gives,
 * under the usual stack limit and with none.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "core.h"
#include "test-main.h"

/* Bytes mapped, from /proc/self/maps; no allocation. */
static unsigned long mapped_bytes(void)
{
	static char buf[1 << 16];
	unsigned long total = 0, lo = 0, hi = 0;
	int fd = open("/proc/self/maps", O_RDONLY), field = 0;
	ssize_t n;

	assert_true(fd >= 0);
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < n; i++) {
			char c = buf[i];

			if (c == '\n') {
				total += hi - lo;
				lo = hi = 0;
				field = 0;
			} else if (field == 0 && c == '-') {
				field = 1;
			} else if (field < 2 && c == ' ') {
				field = 2;
			} else if (field < 2) {
				unsigned long *v = field ? &hi : &lo;

				*v = *v * 16 + (unsigned long)(c <= '9' ? c - '0' : c - 'a' + 10);
			}
		}
	}
	close(fd);
	return total;
}

static void failed_depot_leaves_nothing_mapped(void **state)
{
	struct rlimit old, lim;
	unsigned long before, after;

	(void)state;
	odebug_options_parse("origins=1");
	before = mapped_bytes();
	assert_true(odebug_table_init());
	assert_true(odebug_pool_init());
	assert_true(mapped_bytes() > before);

	/* Room for nothing near the depot's 256 MiB. */
	assert_int_equal(getrlimit(RLIMIT_AS, &old), 0);
	lim = old;
	lim.rlim_cur = mapped_bytes() + (64ul << 20);
	assert_int_equal(setrlimit(RLIMIT_AS, &lim), 0);
	assert_false(odebug_depot_init());
	assert_int_equal(setrlimit(RLIMIT_AS, &old), 0);

	odebug_pool_fini();
	odebug_table_fini();
	after = mapped_bytes();
	assert_int_equal(after, before);
}

/* In a child (the learning is once a process): 0 when the bounds are glibc's. */
static int main_stack_matches(rlim_t limit)
{
	struct rlimit rl;
	pthread_attr_t attr;
	void *addr;
	size_t size;

	if (limit) {
		getrlimit(RLIMIT_STACK, &rl);
		rl.rlim_cur = limit;
		if (setrlimit(RLIMIT_STACK, &rl))
			return 2;
	}
	odebug_stack_note_main();
	odebug_stack_learn_main();
	odebug_stack_prepare();
	if (pthread_getattr_np(pthread_self(), &attr) ||
	    pthread_attr_getstack(&attr, &addr, &size))
		return 3;
	if (odebug_tls.stack_lo != (uintptr_t)addr || odebug_stack_top() != (uintptr_t)addr + size)
		return 1;
	return 0;
}

static int in_child(rlim_t limit)
{
	int status;
	pid_t pid = fork();

	if (pid == 0)
		_exit(main_stack_matches(limit));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static void main_stack_learned_by_the_start_is_glibcs(void **state)
{
	(void)state;
	assert_int_equal(in_child(0), 0);
}

static void main_stack_without_a_limit_is_glibcs(void **state)
{
	(void)state;
	assert_int_equal(in_child(RLIM_INFINITY), 0);
}

int test_main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(failed_depot_leaves_nothing_mapped),
		cmocka_unit_test(main_stack_learned_by_the_start_is_glibcs),
		cmocka_unit_test(main_stack_without_a_limit_is_glibcs),
	};

	(void)argc, (void)argv;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
