/* SPDX-License-Identifier: MIT */
/* On-stack annotation: a notice (not a warning) when it is wrong. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <threads.h>

#include "helpers.h"

static void stack_object_annotated_on_stack_is_silent(void **state)
{
	char obj[16];
	char *out;

	(void)state;
	stats_mark();
	capture_start();
	debug_object_init_on_stack(obj, &bare_descr);
	debug_object_free(obj, &bare_descr);
	out = capture_stop();
	assert_string_equal(out, "");
	assert_int_equal(stats_delta().warnings, 0);
	free(out);
}

static void stack_object_not_annotated_gets_a_notice(void **state)
{
	char obj[16];
	char *out;

	(void)state;
	stats_mark();
	capture_start();
	debug_object_init(obj, &bare_descr);
	out = capture_stop();
	assert_int_equal(count_lines_with(out, "is on stack 0x"), 1);
	assert_int_equal(count_lines_with(out, ", but NOT annotated."), 1);
	/* Tracked anyway, and not a warning (as in the kernel). */
	assert_int_equal(debug_object_get_state(obj), ODEBUG_STATE_INIT);
	assert_int_equal(stats_delta().warnings, 0);
	debug_object_free(obj, &bare_descr);
	free(out);
}

static void heap_object_annotated_on_stack_gets_a_notice(void **state)
{
	char *obj = malloc(16);
	char *out;

	(void)state;
	capture_start();
	debug_object_init_on_stack(obj, &bare_descr);
	out = capture_stop();
	assert_int_equal(count_lines_with(out, "is NOT on stack 0x"), 1);
	assert_int_equal(count_lines_with(out, ", but annotated."), 1);
	debug_object_free(obj, &bare_descr);
	free(obj);
	free(out);
}

/* In another thread: its stack bounds are learned as it starts. */
static void *stack_object_in_thread(void *arg)
{
	char obj[16];

	(void)arg;
	debug_object_init(obj, &bare_descr);
	debug_object_free(obj, &bare_descr);
	return NULL;
}

static int stack_object_in_c11_thread(void *arg)
{
	return stack_object_in_thread(arg) ? 1 : 0;
}

static void thread_stack_objects_get_a_notice(void **state)
{
	pthread_t t;
	thrd_t c11;
	char *out;
	int rc = -1;

	(void)state;
	capture_start();
	assert_int_equal(pthread_create(&t, NULL, stack_object_in_thread, NULL), 0);
	pthread_join(t, NULL);
	assert_int_equal(thrd_create(&c11, stack_object_in_c11_thread, NULL), thrd_success);
	thrd_join(c11, &rc);
	out = capture_stop();
	assert_int_equal(rc, 0);
	/* C11 threads too: glibc starts them without calling pthread_create. */
	assert_int_equal(count_lines_with(out, ", but NOT annotated."), 2);
	free(out);
}

/*
 * A thread started where libodebug could not see it (glibc's own
 * pthread_create, as for threads older than libodebug): its stack is not
 * known, so nothing is said (lib/core/thread.c: learning it there could
 * allocate inside a signal handler that interrupted malloc).  Built
 * without interposers, libodebug sees no thread start and learns each
 * thread's stack on its first call.
 */
static void unseen_thread_knows_no_stack(void **state)
{
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	int (*create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *) = NULL;
	pthread_t t;
	char *out;

	(void)state;
	assert_non_null(libc);
	*(void **)&create = dlvsym(libc, "pthread_create", "GLIBC_2.34");
	assert_non_null(create);
	capture_start();
	assert_int_equal(create(&t, NULL, stack_object_in_thread, NULL), 0);
	pthread_join(t, NULL);
	out = capture_stop();
#ifdef ODEBUG_TEST_INTERPOSE
	assert_int_equal(count_lines_with(out, "NOT annotated"), 0);
#else	/* no thread is seen starting: each learns its stack on its first call */
	assert_int_equal(count_lines_with(out, "NOT annotated"), 1);
#endif
	free(out);
	dlclose(libc);
}

static void reinit_of_tracked_object_is_not_checked_again(void **state)
{
	char obj[16];
	char *out;

	(void)state;
	debug_object_init_on_stack(obj, &bare_descr);
	capture_start();
	debug_object_init(obj, &bare_descr);
	out = capture_stop();
	assert_string_equal(out, "");
	debug_object_free(obj, &bare_descr);
	free(out);
}

static void notices_stop_after_five(void **state)
{
	char objs[8][16];
	char *out;
	int i;

	(void)state;
	capture_start();
	for (i = 0; i < 8; i++)
		debug_object_init(objs[i], &bare_descr);
	out = capture_stop();
	/* Earlier tests printed four notices (five without interposers). */
#ifdef ODEBUG_TEST_INTERPOSE
	assert_int_equal(count_lines_with(out, "but NOT annotated"), 1);
#else
	assert_int_equal(count_lines_with(out, "but NOT annotated"), 0);
#endif
	for (i = 0; i < 8; i++)
		debug_object_free(objs[i], &bare_descr);
	free(out);
}

int test_main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(stack_object_annotated_on_stack_is_silent),
		cmocka_unit_test(stack_object_not_annotated_gets_a_notice),
		cmocka_unit_test(heap_object_annotated_on_stack_gets_a_notice),
		cmocka_unit_test(thread_stack_objects_get_a_notice),
		cmocka_unit_test(unseen_thread_knows_no_stack),
		cmocka_unit_test(reinit_of_tracked_object_is_not_checked_again),
		cmocka_unit_test(notices_stop_after_five),
	};

	(void)argc, (void)argv;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
