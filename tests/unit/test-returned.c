/* SPDX-License-Identifier: MIT */
/*
 * Frames that return holding an active on-stack object: caught at the
 * thread's next call into libodebug from a shallower frame, reported once
 * without hint or fixup, the tracker dropped.  Never for a live frame: a
 * deeper call, a signal handler on the same or an alternate stack, a
 * coroutine's stack.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include "helpers.h"

#define NOINLINE __attribute__((noinline, noclone))

static int hints, frees;

static void *count_hint(void *addr)
{
	(void)addr;
	hints++;
	return NULL;
}

static bool count_fixup_free(void *addr, enum debug_obj_state state)
{
	(void)addr;
	(void)state;
	frees++;
	return false;
}

static const struct debug_obj_descr frame_descr = {
	.name = "frame_obj",
	.debug_hint = count_hint,
	.fixup_free = count_fixup_free,
};

static const char *argv0;
static uintptr_t left_at;	/* where the abandoned object was */

/* Returns with its object active: the bug. */
static NOINLINE void leave_active(void)
{
	char obj[32];

	debug_object_init_on_stack(obj, &frame_descr);
	debug_object_activate(obj, &frame_descr);
	left_at = (uintptr_t)obj;
	__asm__ volatile("" : : "r"(obj) : "memory");
}

static NOINLINE void leave_inactive(void)
{
	char obj[32];

	debug_object_init_on_stack(obj, &frame_descr);
	left_at = (uintptr_t)obj;
	__asm__ volatile("" : : "r"(obj) : "memory");
}

static void reset(void)
{
	hints = frees = 0;
	stats_mark();
}

static void returned_active_object_is_reported_once(void **state)
{
	char here[8], *out;

	(void)state;
	reset();
	capture_start();
	leave_active();
	debug_object_init_on_stack(here, &bare_descr);	/* a shallower call */
	debug_object_free(here, &bare_descr);
	debug_object_init_on_stack(here, &bare_descr);	/* and another */
	debug_object_free(here, &bare_descr);
	out = capture_stop();
	assert_int_equal(count_lines_with(out, "ODEBUG: free active (active state 0) object: 0x"), 1);
	assert_non_null(strstr(out, "object type: frame_obj\n"));	/* no hint: none */
	assert_int_equal(count_lines_with(out, "hint: 0x0"), 0);
	assert_int_equal(count_lines_with(out, "in a frame that has returned"), 1);
	assert_int_equal(stats_delta().warnings, 1);
	assert_int_equal(hints, 0);	/* the frame's memory may be reused */
	assert_int_equal(frees, 0);
	assert_int_equal(debug_object_get_state((void *)left_at), ODEBUG_STATE_NOTAVAILABLE);
	assert_int_equal(stats_delta().used, 0);
	free(out);
}

static void returned_inactive_object_goes_silently(void **state)
{
	char here[8], *out;

	(void)state;
	reset();
	capture_start();
	leave_inactive();
	debug_object_init_on_stack(here, &bare_descr);
	debug_object_free(here, &bare_descr);
	out = capture_stop();
	assert_string_equal(out, "");
	assert_int_equal(stats_delta().warnings, 0);
	assert_int_equal(debug_object_get_state((void *)left_at), ODEBUG_STATE_NOTAVAILABLE);
	free(out);
}

/* A live frame: the object's owner calls deeper, which calls libodebug. */
static NOINLINE void deeper(void)
{
	char obj[8];

	debug_object_init_on_stack(obj, &bare_descr);
	debug_object_activate(obj, &bare_descr);
	debug_object_deactivate(obj, &bare_descr);
	debug_object_free(obj, &bare_descr);
}

static void live_frame_calling_deeper_is_silent(void **state)
{
	char obj[32], *out;

	(void)state;
	reset();
	capture_start();
	debug_object_init_on_stack(obj, &frame_descr);
	debug_object_activate(obj, &frame_descr);
	deeper();
	debug_object_deactivate(obj, &frame_descr);
	debug_object_free(obj, &frame_descr);
	out = capture_stop();
	assert_string_equal(out, "");
	assert_int_equal(stats_delta().warnings, 0);
	free(out);
}

/* Signal handlers: libodebug called from a handler, on either stack. */
static void handler(int sig)
{
	char obj[8];

	(void)sig;
	debug_object_init_auto(obj, &bare_descr);	/* no notice on a heap alt stack */
	debug_object_free(obj, &bare_descr);
}

static NOINLINE void raise_while_active(void)
{
	char obj[32];

	debug_object_init_on_stack(obj, &frame_descr);
	debug_object_activate(obj, &frame_descr);
	raise(SIGUSR1);
	assert_int_equal(debug_object_get_state(obj), ODEBUG_STATE_ACTIVE);
	debug_object_deactivate(obj, &frame_descr);
	debug_object_free(obj, &frame_descr);
}

static void signal_run(stack_t *alt)
{
	struct sigaction sa;
	char *out;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sa.sa_flags = alt ? SA_ONSTACK : 0;
	if (alt)
		assert_int_equal(sigaltstack(alt, NULL), 0);
	assert_int_equal(sigaction(SIGUSR1, &sa, NULL), 0);
	reset();
	capture_start();
	raise_while_active();
	out = capture_stop();
	assert_string_equal(out, "");
	assert_int_equal(stats_delta().warnings, 0);
	free(out);
	signal(SIGUSR1, SIG_DFL);
	if (alt) {
		stack_t off = { .ss_flags = SS_DISABLE };

		sigaltstack(&off, NULL);
	}
}

static void signal_handler_on_same_stack_is_silent(void **state)
{
	(void)state;
	signal_run(NULL);
}

static void signal_handler_on_alternate_stack_is_silent(void **state)
{
	stack_t alt = { .ss_size = 256 * 1024 };	/* room for ASan's frames */

	(void)state;
	alt.ss_sp = malloc(alt.ss_size);
	signal_run(&alt);
	free(alt.ss_sp);
}

/* An alternate stack inside this thread's own stack (a local array). */
static void signal_handler_on_alternate_stack_carved_from_the_stack(void **state)
{
	static char *keep;
	char area[64 * 1024];
	stack_t alt = { .ss_sp = area, .ss_size = sizeof(area) };

	(void)state;
	keep = area;
	signal_run(&alt);
	__asm__ volatile("" : : "r"(keep) : "memory");
}

/* Coroutines: makecontext/swapcontext on a heap stack. */
static ucontext_t main_ctx, co_ctx;

static void coroutine(void)
{
	char obj[8];

	/* The main stack's frames are suspended here, not gone. */
	debug_object_init(obj, &bare_descr);	/* a heap stack: not "on stack" */
	debug_object_activate(obj, &bare_descr);
	swapcontext(&co_ctx, &main_ctx);
	debug_object_deactivate(obj, &bare_descr);
	debug_object_free(obj, &bare_descr);
}

static NOINLINE void run_coroutine_while_active(void)
{
	char obj[32];

	debug_object_init_on_stack(obj, &frame_descr);
	debug_object_activate(obj, &frame_descr);
	assert_int_equal(swapcontext(&main_ctx, &co_ctx), 0);	/* to the coroutine */
	debug_object_assert_init(obj, &frame_descr);		/* back, shallower than it */
	assert_int_equal(swapcontext(&main_ctx, &co_ctx), 0);	/* it finishes */
	debug_object_deactivate(obj, &frame_descr);
	debug_object_free(obj, &frame_descr);
}

static void coroutine_stack_is_silent(void **state)
{
	size_t size = 256 * 1024;
	char *stack = malloc(size), *out;

	(void)state;
	assert_int_equal(getcontext(&co_ctx), 0);
	co_ctx.uc_stack.ss_sp = stack;
	co_ctx.uc_stack.ss_size = size;
	co_ctx.uc_link = &main_ctx;
	makecontext(&co_ctx, coroutine, 0);
	reset();
	capture_start();
	run_coroutine_while_active();
	out = capture_stop();
	assert_int_equal(count_lines_with(out, "ODEBUG: free active"), 0);
	assert_int_equal(stats_delta().warnings, 0);
	free(out);
	free(stack);
}

/* longjmp abandons the frame: caught the same way. */
static jmp_buf env;

static NOINLINE void jump_out(void)
{
	char obj[32];

	debug_object_init_on_stack(obj, &frame_descr);
	debug_object_activate(obj, &frame_descr);
	left_at = (uintptr_t)obj;
	longjmp(env, 1);
}

static void longjmp_over_an_active_object_is_reported(void **state)
{
	char *out;

	(void)state;
	reset();
	capture_start();
	if (!setjmp(env))
		jump_out();
	debug_object_get_state((void *)left_at);	/* a query: not checked */
	assert_int_equal(stats_delta().warnings, 0);
	debug_check_no_obj_freed(&env, 0);		/* an entry point */
	debug_object_assert_init((void *)&left_at, &bare_descr);
	out = capture_stop();
	assert_int_equal(count_lines_with(out, "in a frame that has returned"), 1);
	assert_int_equal(stats_delta().warnings, 2);	/* + the assert_init */
	assert_int_equal(debug_object_get_state((void *)left_at), ODEBUG_STATE_NOTAVAILABLE);
	free(out);
}

#ifdef ODEBUG_TEST_INTERPOSE
static NOINLINE void call_leave_active(void)
{
	leave_active();
	__asm__ volatile("" : : : "memory");
}

/* free() of any block, while something is tracked, also looks. */
static void free_path_finds_it(void **state)
{
	static const struct debug_obj_descr keep = { .name = "keep" };
	char *held = malloc(32), *out;
	char *volatile other;

	(void)state;
	debug_object_init(held, &keep);	/* so that free() takes its slow path */
	reset();
	capture_start();
	call_leave_active();
	other = malloc(16);	/* volatile: the pair is not optimised away */
	free(other);
	out = capture_stop();
	assert_int_equal(count_lines_with(out, "in a frame that has returned"), 1);
	assert_int_equal(stats_delta().warnings, 1);
	free(out);
	debug_object_free(held, &keep);
	free(held);
}

/*
 * The interposed calls look too, from the very frame that called the
 * function that returned: their own frames lie where the dead frame was,
 * so only the caller's stack pointer, taken at the interposer's entry,
 * can see it.  free() with nothing tracked near the block included.
 */
static pthread_mutex_t cached = PTHREAD_MUTEX_INITIALIZER;

static void expect_one_returned(char *out, const char *type)
{
	if (count_lines_with(out, "in a frame that has returned") != 1 ||
	    !strstr(out, type) || strstr(out, "ODEBUG: held by"))
		fail_msg("want one returned-frame report of %s, no owner line:\n%s", type, out);
	free(out);
}

static void free_from_the_same_frame_finds_it(void **state)
{
	char *volatile block;

	(void)state;
	reset();
	capture_start();
	leave_active();
	block = malloc(16);	/* no tracker near it */
	free(block);
	expect_one_returned(capture_stop(), "frame_obj");
	assert_int_equal(stats_delta().warnings, 1);
}

static void lock_from_the_same_frame_finds_it(void **state)
{
	(void)state;
	pthread_mutex_lock(&cached);	/* known: its lock and unlock are cache hits */
	pthread_mutex_unlock(&cached);
	reset();
	capture_start();
	leave_active();
	pthread_mutex_lock(&cached);
	pthread_mutex_unlock(&cached);
	expect_one_returned(capture_stop(), "frame_obj");
	assert_int_equal(stats_delta().warnings, 1);
}

/*
 * A sealed rwlock's read lock and unlock make no returned-frames check
 * (their fast path reads the seal only, builtin.h): the next other call
 * from the same frame finds the object, once.
 */
static pthread_rwlock_t sealed = PTHREAD_RWLOCK_INITIALIZER;

static void sealed_read_pair_leaves_it_to_the_next_call(void **state)
{
	char *out, at[64];
	int line;

	(void)state;
	pthread_rwlock_rdlock(&sealed);	/* seals it */
	pthread_rwlock_unlock(&sealed);
	reset();
	capture_start();
	leave_active();
	pthread_rwlock_rdlock(&sealed);
	pthread_rwlock_unlock(&sealed);
	line = __LINE__ + 1;
	pthread_mutex_lock(&cached);
	pthread_mutex_unlock(&cached);
	out = capture_stop();
	snprintf(at, sizeof(at), "test-returned.c:%d\n", line);
	if (!strstr(out, at))
		fail_msg("want the report at the mutex lock (%s):\n%s", at, out);
	expect_one_returned(out, "frame_obj");
	assert_int_equal(stats_delta().warnings, 1);
}

static void init_from_the_same_frame_finds_it(void **state)
{
	pthread_mutex_t fresh;

	(void)state;
	reset();
	capture_start();
	leave_active();
	pthread_mutex_init(&fresh, NULL);
	pthread_mutex_destroy(&fresh);
	expect_one_returned(capture_stop(), "frame_obj");
	assert_int_equal(stats_delta().warnings, 1);
}

/* A mutex left held on the stack: its hold is in the tracker (tracked mode). */
static NOINLINE void leave_mutex_held(void)
{
	pthread_mutex_t m;

	pthread_mutex_init(&m, NULL);
	pthread_mutex_lock(&m);
	left_at = (uintptr_t)&m;
	__asm__ volatile("" : : "r"(&m) : "memory");
}

/* Reported from the tracker alone: no owner read from the dead frame. */
static void returned_held_mutex_has_no_owner_line(void **state)
{
	(void)state;
	reset();
	capture_start();
	leave_mutex_held();
	pthread_mutex_lock(&cached);
	pthread_mutex_unlock(&cached);
	expect_one_returned(capture_stop(), "object type: pthread_mutex");
	assert_int_equal(stats_delta().warnings, 1);
	assert_int_equal(debug_object_get_state((void *)left_at), ODEBUG_STATE_NOTAVAILABLE);
}
#endif

/* origins=1: the report names where the object was initialised. */
static void child(const char *name)
{
	char here[8];

#ifdef ODEBUG_TEST_INTERPOSE
	if (!strcmp(name, "exit")) {
		leave_mutex_held();	/* and nothing else: the process ends */
		return;
	}
#endif
	leave_active();
	debug_object_init_on_stack(here, &bare_descr);
	debug_object_free(here, &bare_descr);
}

static void origins_name_the_returned_function(void **state)
{
	int status;
	char *out = run_child(argv0, "origins", &status, "ODEBUG=1",
			      "ODEBUG_OPTIONS=origins=1", (char *)NULL);

	(void)state;
	assert_int_equal(status, 0);
	assert_int_equal(count_lines_with(out, "in a frame that has returned"), 1);
	assert_non_null(strstr(out, "ODEBUG: object initialised at:\n    #0 0x"));
	assert_non_null(strstr(out, "ODEBUG: object activated at:\n    #0 0x"));
	assert_true(count_lines_with(out, " in leave_active+") >= 2);
	free(out);
}

#ifdef ODEBUG_TEST_INTERPOSE
/*
 * report_active_at_exit=1: a held mutex whose frame returned is still
 * held (its hold is in the tracker, not in the dead frame's words), with
 * no owner read from those words.
 */
static void exit_reports_a_returned_held_mutex(void **state)
{
	int status;
	char *out = run_child(argv0, "exit", &status, "ODEBUG=1",
			      "ODEBUG_OPTIONS=report_active_at_exit=1", (char *)NULL);

	(void)state;
	assert_int_equal(status, 0);
	if (count_lines_with(out, "ODEBUG: exit active (held)") != 1 ||
	    !strstr(out, "object type: pthread_mutex") || strstr(out, "ODEBUG: held by"))
		fail_msg("want one exit report of the mutex, no owner line:\n%s", out);
	free(out);
}
#endif

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(returned_active_object_is_reported_once),
		cmocka_unit_test(returned_inactive_object_goes_silently),
		cmocka_unit_test(live_frame_calling_deeper_is_silent),
		cmocka_unit_test(signal_handler_on_same_stack_is_silent),
		cmocka_unit_test(signal_handler_on_alternate_stack_is_silent),
		cmocka_unit_test(signal_handler_on_alternate_stack_carved_from_the_stack),
		cmocka_unit_test(coroutine_stack_is_silent),
		cmocka_unit_test(longjmp_over_an_active_object_is_reported),
#ifdef ODEBUG_TEST_INTERPOSE
		cmocka_unit_test(free_path_finds_it),
		cmocka_unit_test(free_from_the_same_frame_finds_it),
		unit_test_with(BUILTIN, lock_from_the_same_frame_finds_it),
		unit_test_with(BUILTIN, sealed_read_pair_leaves_it_to_the_next_call),
		unit_test_with(BUILTIN, init_from_the_same_frame_finds_it),
		unit_test_with(BUILTIN, returned_held_mutex_has_no_owner_line),
		unit_test_with(BUILTIN, exit_reports_a_returned_held_mutex),
#endif
		cmocka_unit_test(origins_name_the_returned_function),
	};

	argv0 = argv[0];
	child_dispatch(argc, argv, child);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
