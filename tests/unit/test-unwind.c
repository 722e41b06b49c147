/* SPDX-License-Identifier: MIT */
/*
 * test-unwind.c - the frames lib/report/unwind.c reads from the call-frame
 * information are libunwind's, white-box: libunwind (dlopen'ed here, as
 * the reference) and odebug_unwind() capture the same stack, and from the
 * frame both know on, the addresses must be the same.
 *
 * Nested calls, libc calling back (qsort), a frame realigned for an
 * over-aligned local (its CFA an expression), a function with no
 * call-frame information (stepped by its frame pointer), a module
 * unloaded and another loaded in its place, and signals: another thread
 * interrupts a busy workload thousands of times, anywhere (prologues,
 * epilogues, libc), on the thread's stack, on an alternate signal stack
 * and in a thread whose stack libodebug never learned.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include <cmocka.h>

#include "core.h"
#include "test-main.h"

#define DEPTH 64

static int (*unw_bt)(void **, int);

struct pair {
	void *own[DEPTH], *ref[DEPTH];
	int n_own, n_ref;
};

static __attribute__((noinline)) void capture(struct pair *p)
{
	p->n_own = odebug_unwind(p->own, DEPTH);
	p->n_ref = unw_bt(p->ref, DEPTH);
	__asm__ volatile("" ::: "memory");
}

/*
 * Do both traces agree from @key on?  Both must hold it; from there each
 * address must be the same, down to the shorter one's end, which may be
 * one frame short of the other's (where the outermost frame ends).
 */
static bool agree(const struct pair *p, const void *key)
{
	int i = 0, j = 0, k;

	while (i < p->n_own && p->own[i] != key)
		i++;
	while (j < p->n_ref && p->ref[j] != key)
		j++;
	if (i == p->n_own || j == p->n_ref)
		return false;
	for (k = 0; i + k < p->n_own && j + k < p->n_ref; k++)
		if (p->own[i + k] != p->ref[j + k])
			return false;
	return abs((p->n_own - i) - (p->n_ref - j)) <= 1 && k >= 2;
}

static void print(const struct pair *p)
{
	for (int i = 0; i < p->n_own || i < p->n_ref; i++) {
		Dl_info a = { 0 }, b = { 0 };

		if (i < p->n_own)
			dladdr(p->own[i], &a);
		if (i < p->n_ref)
			dladdr(p->ref[i], &b);
		print_message("  %2d %14p %-24s %14p %s\n", i,
			      i < p->n_own ? p->own[i] : NULL, a.dli_sname ? a.dli_sname : "",
			      i < p->n_ref ? p->ref[i] : NULL, b.dli_sname ? b.dli_sname : "");
	}
}

/* --- a workload: nested calls, libc calls and callbacks ------------------- */

static volatile unsigned long sink;

static __attribute__((noinline)) unsigned long leaf(unsigned long x)
{
	for (int i = 0; i < 20; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	return x;
}

static __attribute__((noinline)) int compare(const void *a, const void *b)
{
	sink += leaf(*(const unsigned char *)a);
	return *(const unsigned char *)a - *(const unsigned char *)b;
}

/* An over-aligned local: the frame is realigned, its CFA an expression. */
static __attribute__((noinline)) unsigned long realigned(unsigned long x, void (*cb)(void *), void *arg)
{
	__attribute__((aligned(64))) volatile unsigned char block[96];

	block[x % 96] = (unsigned char)x;
	if (cb)
		cb(arg);
	return leaf(x + block[3]);
}

static __attribute__((noinline)) unsigned long nested(int depth, unsigned long x,
						      void (*cb)(void *), void *arg)
{
	char buf[80];

	if (depth)
		return nested(depth - 1, x * 3 + 1, cb, arg) + 1;
	memset(buf, 'a' + (int)(x % 26), sizeof(buf) - 1);
	buf[sizeof(buf) - 1] = '\0';
	qsort(buf, 16, 1, compare);
	return realigned(x + strlen(buf), cb, arg);
}

/* --- direct captures ------------------------------------------------------- */

struct at {
	struct pair p;
	void *key;
};

static __attribute__((noinline)) void capture_here(void *arg)
{
	struct at *a = arg;

	a->key = __builtin_return_address(0);
	capture(&a->p);
}

static int ref_unwinder(void **state)
{
	void *h = dlopen(ODEBUG_LIBUNWIND_SONAME, RTLD_NOW | RTLD_LOCAL);
	void *warm[4];

	(void)state;
	if (!h || !(*(void **)&unw_bt = dlsym(h, "unw_backtrace")))
		return -1;
	unw_bt(warm, 4);		/* its thread-local block, outside any handler */
	odebug_stack_note_main();
	odebug_stack_learn_main();
	odebug_stack_prepare();
	return 0;
}

static void nested_calls_match_libunwind(void **state)
{
	struct at a;

	(void)state;
	if (!unw_bt)
		skip();
	sink += nested(5, 7, capture_here, &a);
	if (!agree(&a.p, a.key))
		print(&a.p);
	assert_true(agree(&a.p, a.key));
	assert_true(a.p.n_own >= 9);	/* the six nested, realigned, the test's */
}

static __attribute__((noinline)) int compare_capture(const void *x, const void *y)
{
	static struct at a;
	static int done;

	if (!done++) {
		capture_here(&a);
		if (!agree(&a.p, a.key))
			print(&a.p);
		assert_true(agree(&a.p, a.key));
	}
	return *(const char *)x - *(const char *)y;
}

static void libc_callbacks_match_libunwind(void **state)
{
	char v[] = "qwertyuiop";

	(void)state;
	if (!unw_bt)
		skip();
	qsort(v, sizeof(v) - 1, 1, compare_capture);
}

/* A function with no call-frame information, which keeps a frame pointer. */
void odebug_test_no_cfi(void (*cb)(void *), void *arg);
__asm__(".text\n"
	".globl odebug_test_no_cfi\n"
	".type odebug_test_no_cfi, @function\n"
	"odebug_test_no_cfi:\n"
	"	pushq %rbp\n"
	"	movq %rsp, %rbp\n"
	"	movq %rdi, %rax\n"
	"	movq %rsi, %rdi\n"
	"	call *%rax\n"
	"	popq %rbp\n"
	"	ret\n"
	".size odebug_test_no_cfi, .-odebug_test_no_cfi\n");

static __attribute__((noinline)) void *through_no_cfi(struct at *a)
{
	odebug_test_no_cfi(capture_here, a);
	__asm__ volatile("" ::: "memory");
	return __builtin_return_address(0);
}

static void frame_without_cfi_is_stepped_by_its_frame_pointer(void **state)
{
	struct at a;
	void *outer;
	int i;

	(void)state;
	if (!unw_bt)
		skip();
	outer = through_no_cfi(&a);
	for (i = 0; i < a.p.n_own && a.p.own[i] != outer; i++)
		;
	if (i == a.p.n_own || !agree(&a.p, a.key))
		print(&a.p);
	assert_true(i < a.p.n_own);	/* past the frame, to the test's own */
	assert_true(agree(&a.p, a.key));
}

/*
 * Two builds of one module, whose function's return address lies at the
 * same offset and whose frames differ in size: loaded in turn at the same
 * address, a rule kept from the first must not be used for the second.
 */
static __attribute__((noinline)) void *through_module(int (*call)(void (*)(void *), void *),
						       struct at *a)
{
	sink += (unsigned long)call(capture_here, a);
	return __builtin_return_address(0);
}

/* Does @p's own trace go from @key through @outer (the frames between unwound right)? */
static bool reaches(const struct pair *p, const void *key, const void *outer)
{
	int i = 0;

	while (i < p->n_own && p->own[i] != key)
		i++;
	while (i < p->n_own && p->own[i] != outer)
		i++;
	return i < p->n_own;
}

/*
 * Two builds of one module whose return addresses into its function lie
 * at the same offset, its frames of different sizes: loaded in turn at
 * the same address, a rule kept from the first must not serve the second
 * (libunwind's own cache does: it is no reference here).
 */
static void unloaded_modules_rules_are_forgotten(void **state)
{
	const char *dir = getenv("ODEBUG_TEST_UNWIND_MODS");
	void *base[2] = { NULL, NULL }, *outer;
	struct at a[2];

	(void)state;
	if (!dir)
		skip();
	for (int m = 0; m < 2; m++) {
		int (*call)(void (*)(void *), void *);
		char path[512];
		Dl_info di;
		void *h;

		snprintf(path, sizeof(path), "%s/libunwind-mod-%s.so", dir, m ? "big" : "small");
		h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		assert_non_null(h);
		*(void **)&call = dlsym(h, "unwind_mod_call");
		assert_non_null(call);
		through_module(call, &a[m]);
		outer = through_module(call, &a[m]);	/* the second: by the rule kept */
		if (dladdr(a[m].key, &di))
			base[m] = di.dli_fbase;
		if (!reaches(&a[m].p, a[m].key, outer)) {
			print_message("# build %d\n", m);
			print(&a[m].p);
		}
		assert_true(reaches(&a[m].p, a[m].key, outer));
		dlclose(h);
		odebug_unwind_forget();	/* as preload/dlclose.c does once a module left */
	}
	/* The case the forgetting is for: same place, same return address. */
	if (base[0] != base[1] || a[0].key != a[1].key)
		print_message("# the second build was not loaded where the first was\n");
}

/* --- signals, anywhere ---------------------------------------------------- */

static volatile int samples, mismatches;
static struct pair first_bad;

static void on_signal(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	struct pair p;

	(void)sig;
	(void)si;
	capture(&p);
	samples++;
	if (!agree(&p, (void *)uc->uc_mcontext.gregs[REG_RIP]) && !mismatches++)
		first_bad = p;
}

struct target {
	pid_t tid;
	volatile int stop;
};

static void *interrupter(void *arg)
{
	struct target *t = arg;
	struct timespec ts = { 0, 20000 };

	while (!t->stop) {
		syscall(SYS_tgkill, getpid(), t->tid, SIGUSR1);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static void busy_under_signals(bool altstack)
{
	struct target t = { (pid_t)syscall(SYS_gettid), 0 };
	struct sigaction sa;
	struct timespec start, now;
	stack_t ss = { .ss_size = 65536 };
	pthread_t th;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART | (altstack ? SA_ONSTACK : 0);
	if (altstack) {
		ss.ss_sp = malloc(ss.ss_size);
		assert_non_null(ss.ss_sp);
		assert_int_equal(sigaltstack(&ss, NULL), 0);
	}
	assert_int_equal(sigaction(SIGUSR1, &sa, NULL), 0);
	assert_int_equal(pthread_create(&th, NULL, interrupter, &t), 0);
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		sink += nested(3, (unsigned long)samples, NULL, NULL);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (samples < 3000 && now.tv_sec - start.tv_sec < 5);
	t.stop = 1;
	pthread_join(th, NULL);
	signal(SIGUSR1, SIG_IGN);
	if (altstack) {
		ss.ss_flags = SS_DISABLE;
		sigaltstack(&ss, NULL);
		free(ss.ss_sp);
	}
}

static void check_samples(void)
{
	print_message("# %d samples, %d differ\n", samples, mismatches);
	if (mismatches)
		print(&first_bad);
	assert_true(samples > 100);
	assert_int_equal(mismatches, 0);
	samples = mismatches = 0;
}

static void interrupted_anywhere_matches_libunwind(void **state)
{
	(void)state;
	if (!unw_bt)
		skip();
	busy_under_signals(false);
	check_samples();
}

static void interrupted_on_an_alternate_stack_matches_libunwind(void **state)
{
	(void)state;
	if (!unw_bt)
		skip();
	busy_under_signals(true);
	check_samples();
}

static void *unseen_thread(void *arg)
{
	void *warm[4];

	(void)arg;
	unw_bt(warm, 4);
	busy_under_signals(false);
	return NULL;
}

static void interrupted_in_an_unseen_thread_matches_libunwind(void **state)
{
	pthread_t th;

	(void)state;
	if (!unw_bt)
		skip();
	assert_int_equal(pthread_create(&th, NULL, unseen_thread, NULL), 0);
	pthread_join(th, NULL);
	check_samples();
}

int test_main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(nested_calls_match_libunwind),
		cmocka_unit_test(libc_callbacks_match_libunwind),
		cmocka_unit_test(frame_without_cfi_is_stepped_by_its_frame_pointer),
		cmocka_unit_test(unloaded_modules_rules_are_forgotten),
		cmocka_unit_test(interrupted_anywhere_matches_libunwind),
		cmocka_unit_test(interrupted_on_an_alternate_stack_matches_libunwind),
		cmocka_unit_test(interrupted_in_an_unseen_thread_matches_libunwind),
	};

	(void)argc;
	(void)argv;
	if (ref_unwinder(NULL))
		print_message("# libunwind not found: nothing to compare with\n");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
