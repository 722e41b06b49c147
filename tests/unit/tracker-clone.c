/* SPDX-License-Identifier: MIT */
/*
 * The tracker's compare-and-swap (lib/table/tracker.h) from threads glibc does
 * not know about: two made with a raw clone(CLONE_THREAD), which leaves
 * __libc_single_threaded true, and the main thread, all incrementing one
 * tracker word by compare-and-swap.  Built with preload/clone.c, as
 * libodebug.so is, so that the program's clone() and syscall() reach its
 * interposers.
 *
 * While the process has one thread the swap is the unlocked cmpxchg
 * (odebug_one_thread, set at the start), which loses increments between
 * cores.  Each trial sets the flag again, as at a start, then makes its two
 * threads, by clone() or by syscall(SYS_clone): each thread must see the
 * flag already clear when it first runs (the locked swap from its first
 * instruction on), and every successful swap must count.  The threads
 * touch no TLS and call nothing but the swap (they share the main
 * thread's thread pointer).  Last, a syscall(SYS_clone3) (one the kernel
 * refuses) must clear the flag too.  Exit status 0 when every check held.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/single_threaded.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core.h"

#define ROUNDS	2000000ul
#define STACK	(64 * 1024)
#define TRIALS	12

static struct odebug_tracker tracker;
static int finished, saw_one_thread;

static void bump(void)
{
	for (unsigned long i = 0; i < ROUNDS; i++) {
		uint64_t old;

		do
			old = __atomic_load_n(&tracker.word, __ATOMIC_RELAXED);
		while (!odebug_tracker_cas(&tracker, old, old + 1));
	}
}

static void thread_body(void)
{
	if (__atomic_load_n(&odebug_one_thread, __ATOMIC_SEQ_CST))
		__atomic_add_fetch(&saw_one_thread, 1, __ATOMIC_RELAXED);
	bump();
	__atomic_add_fetch(&finished, 1, __ATOMIC_RELEASE);
}

static int clone_entry(void *arg)
{
	(void)arg;
	thread_body();
	return 0;
}

/*
 * syscall(SYS_clone)'s child returns from glibc's syscall() on its new
 * stack, popping the address put there: it enters here with no caller.
 */
static __attribute__((noreturn, used)) void syscall_entry(void)
{
	thread_body();
	for (;;)
		__asm__ volatile("syscall" : : "a"((long)SYS_exit), "D"(0L) : "rcx", "r11", "memory");
}

static char *new_stack(void)
{
	char *stack = mmap(NULL, STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return stack == MAP_FAILED ? NULL : stack;
}

/* One trial: 0 when every check held.  (Their stacks are left mapped.) */
static int trial(bool by_syscall)
{
	int flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
		    CLONE_SYSVSEM;
	const char *how = by_syscall ? "syscall(SYS_clone)" : "clone()";
	bool ok;
	uint64_t got;

	tracker.word = 0;
	finished = saw_one_thread = 0;
	odebug_one_thread = true;	/* as at a start */
	for (int i = 0; i < 2; i++) {
		char *stack = new_stack();
		long r = -1;

		if (stack && by_syscall) {
			void **top = (void **)(stack + STACK - 16);

			*top = (void *)syscall_entry;
			r = syscall(SYS_clone, (long)flags, top, NULL, NULL, 0L);
		} else if (stack) {
			r = clone(clone_entry, stack + STACK, flags, NULL);
		}
		if (r < 0) {
			perror(how);
			return 2;
		}
		if (odebug_one_thread) {
			printf("FAIL - %s left the one-thread flag set\n", how);
			return 1;
		}
	}
	bump();
	while (__atomic_load_n(&finished, __ATOMIC_ACQUIRE) < 2)
		sched_yield();
	usleep(10000);	/* until they are out of their stacks' last frames */
	got = __atomic_load_n(&tracker.word, __ATOMIC_RELAXED);
	ok = got == 3 * ROUNDS && !saw_one_thread;
	printf("%s - %s: %lu increments by compare-and-swap from 3 threads (glibc's single-threaded flag %d), %lu counted; %d threads saw one thread\n",
	       ok ? "ok" : "FAIL", how, 3 * ROUNDS, (int)__libc_single_threaded,
	       (unsigned long)got, saw_one_thread);
	return ok ? 0 : 1;
}

static void *namespace_entry(void *arg)
{
	(void)arg;
	thread_body();
	return NULL;
}

/*
 * Two threads made by another namespace's libc, running functions of
 * ours: 0 when every check held, 77 when no such libc could be loaded.
 */
static int trial_namespace(void)
{
	int (*create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
	int (*join)(pthread_t, void **);
	pthread_t threads[2];
	void *libc;
	uint64_t got;
	bool ok;

	tracker.word = 0;
	finished = saw_one_thread = 0;
	odebug_one_thread = true;	/* as at a start */
	libc = dlmopen(LM_ID_NEWLM, "libc.so.6", RTLD_NOW | RTLD_LOCAL);
	if (odebug_one_thread) {
		printf("FAIL - dlmopen(LM_ID_NEWLM) left the one-thread flag set\n");
		return 1;
	}
	if (!libc)
		return 77;
	*(void **)&create = dlsym(libc, "pthread_create");
	*(void **)&join = dlsym(libc, "pthread_join");
	if (!create || !join)
		return 77;
	for (int i = 0; i < 2; i++)
		if (create(&threads[i], NULL, namespace_entry, NULL))
			return 77;
	bump();
	for (int i = 0; i < 2; i++)
		join(threads[i], NULL);
	got = __atomic_load_n(&tracker.word, __ATOMIC_RELAXED);
	ok = got == 3 * ROUNDS && !saw_one_thread;
	printf("%s - another namespace's pthread_create(): %lu increments by compare-and-swap from 3 threads (glibc's single-threaded flag %d), %lu counted; %d threads saw one thread\n",
	       ok ? "ok" : "FAIL", 3 * ROUNDS, (int)__libc_single_threaded,
	       (unsigned long)got, saw_one_thread);
	return ok ? 0 : 1;
}

/* Several trials: on a loaded machine the threads may not overlap in one. */
int main(void)
{
	/* Nothing in the way of the interposers: the unlocked swap is on. */
	if (!odebug_one_thread || !__libc_single_threaded) {
		printf("FAIL - one thread, but the one-thread flag is clear\n");
		return 1;
	}
	for (int i = 0; i < TRIALS; i++)
		if (trial(i & 1))
			return 1;
#ifdef SYS_clone3
	/* clone3's flags are behind a pointer it does not read: any clone3 counts. */
	odebug_one_thread = true;
	syscall(SYS_clone3, NULL, 0L);
	if (odebug_one_thread) {
		printf("FAIL - syscall(SYS_clone3) left the one-thread flag set\n");
		return 1;
	}
	printf("ok - syscall(SYS_clone3) cleared the one-thread flag\n");
#endif
	switch (trial_namespace()) {
	case 0:
		break;
	case 77:
		printf("ok - no libc could be loaded in a namespace of its own (skipped)\n");
		break;
	default:
		return 1;
	}
	return 0;
}
