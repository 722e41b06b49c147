/* SPDX-License-Identifier: MIT */
/*
 * The interposed release paths.  This program does not call libodebug: the
 * annotated widget lives in libfixture, and the test runs twice, once with
 * LD_PRELOAD=libodebug.so on a binary that does not link it, once on a
 * binary linked with -Wl,--no-as-needed -lodebug.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"
#include "test-main.h"

/* These tests touch pointers after a release and ask for absurd sizes on purpose. */
#pragma GCC diagnostic ignored "-Wuse-after-free"
#pragma GCC diagnostic ignored "-Walloc-size-larger-than="
#pragma GCC diagnostic ignored "-Wrestrict"

#define STATE_ACTIVE		3
#define STATE_NOTAVAILABLE	5
#define PAGE			4096

/* --- stderr capture -------------------------------------------------- */

static int saved_fd = -1, cap_fd = -1;

static void capture_start(void)
{
	char path[] = "/tmp/odebug-preload-XXXXXX";

	cap_fd = mkstemp(path);
	assert_true(cap_fd >= 0);
	unlink(path);
	saved_fd = dup(2);
	dup2(cap_fd, 2);
}

static char *capture_stop(void)
{
	off_t n;
	char *s;

	dup2(saved_fd, 2);
	close(saved_fd);
	n = lseek(cap_fd, 0, SEEK_END);
	s = calloc(1, (size_t)n + 1);
	assert_non_null(s);
	assert_int_equal(pread(cap_fd, s, (size_t)n, 0), n);
	close(cap_fd);
	return s;
}

static int count(const char *text, const char *needle)
{
	int n = 0;

	while ((text = strstr(text, needle))) {
		n++;
		text += strlen(needle);
	}
	return n;
}

/* --- counters -------------------------------------------------------- */

static unsigned long w0, f0, c0;

static void mark(void)
{
	w0 = fixture_warnings();
	f0 = fixture_fixup_free_calls();
	c0 = fixture_canary_ok();
}

#define assert_reports(n) do { \
	assert_int_equal(fixture_warnings() - w0, (n)); \
	assert_int_equal(fixture_fixup_free_calls() - f0, (n)); \
	assert_int_equal(fixture_canary_ok() - c0, (n)); \
} while (0)

static struct widget *armed_in(void *mem)
{
	struct widget *w = mem;

	widget_init(w);
	widget_arm(w);
	return w;
}

/* --- the seed's scenario --------------------------------------------- */

struct conn {
	int id;
	struct widget keepalive;
	char name[40];
};

__attribute__((noinline)) void culprit_release(struct conn *c);
__attribute__((noinline)) void culprit_release(struct conn *c)
{
	free(c);
	__asm__ volatile("" ::: "memory");
}

static void free_of_struct_with_active_object_is_caught_at_the_free(void **state)
{
	struct conn *c = calloc(1, sizeof(*c));
	char *out;

	(void)state;
	assert_true(fixture_enabled());
	armed_in(&c->keepalive);
	mark();
	capture_start();
	culprit_release(c);
	out = capture_stop();
	assert_reports(1);	/* and the fixup read valid memory */
	assert_int_equal(count(out, "ODEBUG: free active (active state 0) object: "), 1);
	assert_int_equal(count(out, "object type: widget"), 1);
	assert_int_equal(count(out, "    #0 "), 1);
	assert_non_null(strstr(out, "    #0 0x"));
	assert_true(strstr(out, " in culprit_release+") < strstr(out, "    #1 "));
	assert_int_equal(widget_state(&c->keepalive), STATE_NOTAVAILABLE);
	free(out);
}

static void free_from_a_shared_library_is_checked(void **state)
{
	struct widget *w = armed_in(malloc(sizeof(*w)));
	char *out;

	(void)state;
	mark();
	capture_start();
	fixture_free(w);
	out = capture_stop();
	assert_reports(1);
	assert_non_null(strstr(out, " in fixture_free+"));
	free(out);
}

static void free_of_inactive_objects_is_silent(void **state)
{
	struct widget *w = armed_in(malloc(2 * sizeof(*w)));
	unsigned long tracked;

	(void)state;
	widget_init(w + 1);
	widget_disarm(w);
	tracked = fixture_tracked();
	mark();
	free(w);
	assert_reports(0);
	assert_int_equal(fixture_tracked(), tracked - 2);
}

/* --- realloc and reallocarray ---------------------------------------- */

static void realloc_checks_the_old_block_before_it_goes(void **state)
{
	char *p = malloc(256);
	char *q;

	(void)state;
	memset(p, 'a', 256);
	armed_in(p + 64);
	mark();
	capture_start();
	q = realloc(p, 100000);	/* moves */
	free(capture_stop());
	assert_non_null(q);
	assert_reports(1);
	assert_int_equal(q[0], 'a');
	assert_int_equal(q[255], 'a');
	free(q);
}

static void realloc_in_place_still_checks(void **state)
{
	char *p = malloc(256);
	char *q;

	(void)state;
	armed_in(p);
	mark();
	capture_start();
	q = realloc(p, 200);	/* shrinks, typically in place */
	free(capture_stop());
	assert_non_null(q);
	assert_reports(1);
	assert_int_equal(widget_state((struct widget *)q), STATE_NOTAVAILABLE);
	free(q);
}

static void realloc_without_trackers_keeps_the_data(void **state)
{
	char *p = malloc(64);
	char *q;
	int i;

	(void)state;
	for (i = 0; i < 64; i++)
		p[i] = (char)i;
	mark();
	q = realloc(p, 4096);
	assert_non_null(q);
	for (i = 0; i < 64; i++)
		assert_int_equal(q[i], i);
	assert_reports(0);
	q = realloc(q, 0);	/* glibc: frees, returns NULL */
	assert_null(q);
	q = realloc(NULL, 32);
	assert_non_null(q);
	free(q);
}

static void realloc_to_zero_is_a_checked_free(void **state)
{
	struct widget *w = armed_in(malloc(sizeof(*w)));

	(void)state;
	mark();
	capture_start();
	assert_null(realloc(w, 0));
	free(capture_stop());
	assert_reports(1);
}

static void reallocarray_checks_each_block_once(void **state)
{
	struct widget *w = armed_in(malloc(sizeof(*w)));
	void *q;

	(void)state;
	mark();
	capture_start();
	q = reallocarray(w, 4, 1000);
	free(capture_stop());
	assert_non_null(q);
	assert_reports(1);
	errno = 0;
	assert_null(reallocarray(q, SIZE_MAX / 2, 3));
	assert_int_equal(errno, ENOMEM);
	free(q);
}

/* --- munmap and mremap ----------------------------------------------- */

static char *map_pages(size_t n)
{
	char *p = mmap(NULL, n * PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_true(p != MAP_FAILED);
	return p;
}

static void partial_munmap_checks_only_the_released_pages(void **state)
{
	char *p = map_pages(4);

	(void)state;
	armed_in(p + 1 * PAGE + 128);
	armed_in(p + 3 * PAGE);
	mark();
	capture_start();
	assert_int_equal(munmap(p + PAGE, PAGE), 0);
	free(capture_stop());
	assert_reports(1);
	assert_int_equal(widget_state((struct widget *)(p + 3 * PAGE)), STATE_ACTIVE);
	widget_disarm((struct widget *)(p + 3 * PAGE));
	assert_int_equal(munmap(p, 4 * PAGE), 0);
	assert_int_equal(widget_state((struct widget *)(p + 3 * PAGE)), STATE_NOTAVAILABLE);
}

static void munmap_length_is_rounded_up_to_pages(void **state)
{
	char *p = map_pages(1);

	(void)state;
	armed_in(p + 2048);
	mark();
	capture_start();
	assert_int_equal(munmap(p, 100), 0);
	free(capture_stop());
	assert_reports(1);
}

static void mremap_shrink_checks_the_tail(void **state)
{
	char *p = map_pages(4);

	(void)state;
	armed_in(p + 64);
	armed_in(p + 2 * PAGE + 64);
	mark();
	capture_start();
	assert_true(mremap(p, 4 * PAGE, 2 * PAGE, 0) == p);
	free(capture_stop());
	assert_reports(1);
	assert_int_equal(widget_state((struct widget *)(p + 64)), STATE_ACTIVE);
	widget_disarm((struct widget *)(p + 64));
	munmap(p, 2 * PAGE);
}

static void mremap_move_checks_the_whole_old_range(void **state)
{
	char *p = map_pages(2);
	char *target = map_pages(4);
	char *q;

	(void)state;
	armed_in(p + 64);
	mark();
	capture_start();
	q = mremap(p, 2 * PAGE, 4 * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, target);
	free(capture_stop());
	assert_true(q == target);
	assert_reports(1);
	munmap(q, 4 * PAGE);
}

static void mremap_growing_in_place_keeps_its_objects(void **state)
{
	char *p = map_pages(8);
	char *q;

	(void)state;
	assert_int_equal(munmap(p + 4 * PAGE, 4 * PAGE), 0);
	armed_in(p + 64);
	mark();
	q = mremap(p, 4 * PAGE, 8 * PAGE, MREMAP_MAYMOVE);
	assert_true(q == p);
	assert_reports(0);
	assert_int_equal(widget_state((struct widget *)(p + 64)), STATE_ACTIVE);
	widget_disarm((struct widget *)(p + 64));
	munmap(q, 8 * PAGE);
}

/*
 * A terabyte (smaller where the address space is limited, as under
 * valgrind): far more pages than buckets, visited bucket by bucket.
 */
static void huge_munmap_is_checked_in_bounded_time(void **state)
{
	size_t size = (size_t)1 << 40;
	char *p = MAP_FAILED;

	(void)state;
	for (; size >= ((size_t)1 << 30) && p == MAP_FAILED; size >>= 2)
		p = mmap(NULL, size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	size <<= 2;
	assert_true(p != MAP_FAILED);
	armed_in(p + size / 2 + 512);
	armed_in(p + size - PAGE);
	mark();
	capture_start();
	assert_int_equal(munmap(p, size), 0);
	free(capture_stop());
	assert_reports(2);
}

/* --- the rwlock's seal ---------------------------------------------- */

/*
 * A read lock that finds a settled rwlock seals it: glibc's unused __pad2
 * then holds a word of ours, which later read locks compare instead of
 * asking the table (pt-rwlock checks what a seal must stand for); a
 * destroy takes it back, and an init's memset does.
 */
static void read_lock_seals_the_rwlock_and_destroy_unseals_it(void **state)
{
	pthread_rwlock_t *rw = calloc(1, sizeof(*rw));

	(void)state;
	pthread_rwlock_init(rw, NULL);
	for (int i = 0; i < 2; i++) {
		pthread_rwlock_rdlock(rw);
		pthread_rwlock_unlock(rw);
	}
	assert_int_not_equal(rw->__data.__pad2, 0);
	pthread_rwlock_destroy(rw);
	assert_int_equal(rw->__data.__pad2, 0);
	pthread_rwlock_init(rw, NULL);
	pthread_rwlock_rdlock(rw);
	pthread_rwlock_unlock(rw);
	pthread_rwlock_rdlock(rw);
	pthread_rwlock_unlock(rw);
	assert_int_not_equal(rw->__data.__pad2, 0);
	pthread_rwlock_init(rw, NULL);
	assert_int_equal(rw->__data.__pad2, 0);
	pthread_rwlock_destroy(rw);
	free(rw);
}

/*
 * No seal is made on a live thread's stack (the threads' stacks are
 * recorded for that); a thread's record goes when its start routine ends,
 * so a program that makes many threads in turn still seals.
 */
static void *nothing(void *arg)
{
	return arg;
}

static void threads_that_ended_leave_the_seal_working(void **state)
{
	pthread_rwlock_t *rw = calloc(1, sizeof(*rw));

	(void)state;
	for (int i = 0; i < 1100; i++) {
		pthread_t t;

		assert_int_equal(pthread_create(&t, NULL, nothing, NULL), 0);
		pthread_join(t, NULL);
	}
	pthread_rwlock_init(rw, NULL);
	for (int i = 0; i < 2; i++) {
		pthread_rwlock_rdlock(rw);
		pthread_rwlock_unlock(rw);
	}
	assert_int_not_equal(rw->__data.__pad2, 0);
	pthread_rwlock_destroy(rw);
	free(rw);
}

/* --- threads --------------------------------------------------------- */

static void *leave_armed_stack_widget(void *arg)
{
	struct widget w;

	widget_init_on_stack(&w);
	widget_arm(&w);
	if (arg)	/* the correct exit: disarm and forget */
		widget_disarm(&w), widget_forget(&w);
	return NULL;
}

static void thread_exit_with_active_stack_object_is_caught(void **state)
{
	pthread_t t;

	(void)state;
	mark();
	capture_start();
	assert_int_equal(pthread_create(&t, NULL, leave_armed_stack_widget, NULL), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	free(capture_stop());
	/* Reported, but no fixup: the stack bytes are dead. */
	assert_int_equal(fixture_warnings() - w0, 1);
	assert_int_equal(fixture_fixup_free_calls() - f0, 0);

	mark();
	assert_int_equal(pthread_create(&t, NULL, leave_armed_stack_widget, &t), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_reports(0);
}

/* --- errno ----------------------------------------------------------- */

static void errno_survives_every_interposed_call(void **state)
{
	char *p = map_pages(2);
	void *q;

	(void)state;
	capture_start();
	errno = 1234;
	free(armed_in(malloc(sizeof(struct widget))));
	assert_int_equal(errno, 1234);
	q = realloc(armed_in(malloc(sizeof(struct widget))), 64000);
	assert_int_equal(errno, 1234);
	free(q);
	assert_int_equal(errno, 1234);
	armed_in(p);
	assert_true(mremap(p, 2 * PAGE, PAGE, 0) == p);
	assert_int_equal(errno, 1234);
	armed_in(p + 64);
	assert_int_equal(munmap(p, PAGE), 0);
	assert_int_equal(errno, 1234);
	free(capture_stop());
}

/* --- fork ------------------------------------------------------------ */

static volatile int stop_hammer;

static void *hammer(void *arg)
{
	(void)arg;
	while (!stop_hammer) {
		struct widget *w = malloc(sizeof(*w) * 4);
		int i;

		for (i = 0; i < 4; i++)
			widget_init(&w[i]);
		widget_arm(&w[1]);
		widget_disarm(&w[1]);
		free(w);
	}
	return NULL;
}

static void fork_with_busy_threads_never_deadlocks(void **state)
{
	pthread_t t[2];
	int i, status;

	(void)state;
	fixture_fork_free_enabled = 1;
	stop_hammer = 0;
	for (i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&t[i], NULL, hammer, NULL), 0);
	capture_start();
	for (i = 0; i < 100; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			struct widget *w = malloc(sizeof(*w));

			widget_init(w);
			widget_arm(w);
			widget_disarm(w);
			free(w);
			free(malloc(100));
			_exit(widget_state(w) == STATE_NOTAVAILABLE ? 0 : 3);
		}
		assert_true(pid > 0);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
	free(capture_stop());
	stop_hammer = 1;
	for (i = 0; i < 2; i++)
		assert_int_equal(pthread_join(t[i], NULL), 0);
	fixture_fork_free_enabled = 0;
	assert_int_equal(fixture_fork_frees(), 100);
}

int test_main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(free_of_struct_with_active_object_is_caught_at_the_free),
		cmocka_unit_test(free_from_a_shared_library_is_checked),
		cmocka_unit_test(free_of_inactive_objects_is_silent),
		cmocka_unit_test(realloc_checks_the_old_block_before_it_goes),
		cmocka_unit_test(realloc_in_place_still_checks),
		cmocka_unit_test(realloc_without_trackers_keeps_the_data),
		cmocka_unit_test(realloc_to_zero_is_a_checked_free),
		cmocka_unit_test(reallocarray_checks_each_block_once),
		cmocka_unit_test(partial_munmap_checks_only_the_released_pages),
		cmocka_unit_test(munmap_length_is_rounded_up_to_pages),
		cmocka_unit_test(mremap_shrink_checks_the_tail),
		cmocka_unit_test(mremap_move_checks_the_whole_old_range),
		cmocka_unit_test(mremap_growing_in_place_keeps_its_objects),
		cmocka_unit_test(huge_munmap_is_checked_in_bounded_time),
		unit_test_with(BUILTIN, read_lock_seals_the_rwlock_and_destroy_unseals_it),
		unit_test_with(BUILTIN, threads_that_ended_leave_the_seal_working),
		cmocka_unit_test(thread_exit_with_active_stack_object_is_caught),
		cmocka_unit_test(errno_survives_every_interposed_call),
		cmocka_unit_test(fork_with_busy_threads_never_deadlocks),
	};

	(void)argc, (void)argv;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
