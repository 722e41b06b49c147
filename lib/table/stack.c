/* SPDX-License-Identifier: MIT */
/*
 * stack.c - thread stacks: where they are, as learned (what is left on
 * them when a frame returns or a thread exits is returned.c's).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "table.h"


/*
 * This thread's stack mapping, looked up once (stack_hi == 1: unknown),
 * from odebug_tls.stack_lo; the stack proper within it (below the TLS)
 * is odebug_tls.stack_len long.
 */
static ODEBUG_TLS uintptr_t stack_hi;
static size_t static_tls_size;	/* glibc's, with the thread descriptor */
static size_t static_tls_align;

void odebug_stack_init(void)
{
	void (*info)(size_t *size, size_t *align);

	/* GLIBC_PRIVATE, as the sanitizers use it; without it, see below. */
	*(void **)&info = dlsym(RTLD_DEFAULT, "_dl_get_tls_static_info");
	if (info)
		info(&static_tls_size, &static_tls_align);
}

/*
 * glibc puts a thread's descriptor and static TLS (every __thread variable
 * of the modules loaded at start) at the top of its stack mapping, which
 * pthread_getattr_np() reports whole; the stack proper starts below them.
 * With TLS below the thread pointer (x86), glibc starts the stack at the
 * end of the descriptor minus the static TLS size (which counts the
 * descriptor), the descriptor ending less than the TLS alignment below the
 * mapping's top; without the size, below our own TLS, which excludes at
 * least the executable's.  With TLS above the pointer, the pointer itself.
 */
static uintptr_t stack_top(uintptr_t lo, uintptr_t hi)
{
	uintptr_t tp = (uintptr_t)pthread_self(), top = hi;

	if (tp < lo || tp >= hi)
		return hi;	/* the main thread: TLS lives elsewhere */
#if defined(__x86_64__) || defined(__i386__)
	if (static_tls_size && static_tls_size + static_tls_align < hi - lo)
		top = hi - static_tls_size - static_tls_align;
	else
		top = (uintptr_t)&stack_hi;
#else
	top = tp;
#endif
	return top > lo && top < hi ? top : hi;
}

/* The main thread, and its stack as learned from another thread. */
static pthread_t main_thread;
static bool main_known;
static uintptr_t main_lo, main_hi;

/* In the constructor (the main thread): remember which thread is main. */
void odebug_stack_note_main(void)
{
	main_thread = pthread_self();
}

/*
 * The stacks learned of the threads alive, for the rwlock seal (builtin.c):
 * an rwlock on a thread's stack keeps its owner's read holds in its tracker
 * (tracked mode), so no thread may seal one there, where the owner's read
 * paths would skip the tracker.  A slot is claimed by compare-and-swap of
 * its end (0: free, 1: claimed, its start not yet written), filled start
 * first, and freed when the thread's start routine ends (its stack may
 * then be reused, as another thread's: that thread claims a slot again).
 * A reader that meets a slot changing sees an empty or a larger range, and
 * refuses a seal it could have made: never the reverse.  A thread that
 * found no free slot counts in stacks_unrecorded, and while any such
 * thread lives nothing is sealed.  The main thread's stack lives as long
 * as the process.
 */
#define STACKS_MAX 1024
static ODEBUG_LARGE struct {
	uintptr_t lo, hi;
} stacks[STACKS_MAX];
static unsigned int stacks_used;	/* slots ever claimed: the readers' bound */
static unsigned int stacks_unrecorded;
static ODEBUG_TLS unsigned int stack_slot;	/* 1 + this thread's slot; 0: none */
static ODEBUG_TLS bool stack_unrecorded;

static unsigned int stacks_record(uintptr_t lo, uintptr_t hi)
{
	for (unsigned int i = 0; i < STACKS_MAX; i++) {
		uintptr_t free = 0;

		if (!__atomic_compare_exchange_n(&stacks[i].hi, &free, 1, false,
						 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			continue;
		__atomic_store_n(&stacks[i].lo, lo, __ATOMIC_RELAXED);
		__atomic_store_n(&stacks[i].hi, hi, __ATOMIC_RELEASE);
		for (unsigned int n = odebug_load(&stacks_used); n < i + 1 &&
		     !__atomic_compare_exchange_n(&stacks_used, &n, i + 1, true,
						  __ATOMIC_RELEASE, __ATOMIC_RELAXED);)
			;
		return i + 1;
	}
	return 0;
}

/* This thread's stack, as learned, for odebug_on_any_stack(). */
static void stack_record(uintptr_t lo, uintptr_t hi)
{
	if (stack_slot || stack_unrecorded)
		return;
	stack_slot = stacks_record(lo, hi);
	if (!stack_slot) {
		stack_unrecorded = true;
		__atomic_fetch_add(&stacks_unrecorded, 1, __ATOMIC_SEQ_CST);
	}
}

/* The calling thread's start routine ended: its stack is no longer its own. */
void odebug_stack_forget(void)
{
	if (stack_slot)
		__atomic_store_n(&stacks[stack_slot - 1].hi, 0, __ATOMIC_RELEASE);
	else if (stack_unrecorded)
		__atomic_fetch_sub(&stacks_unrecorded, 1, __ATOMIC_SEQ_CST);
	stack_slot = 0;
	stack_unrecorded = false;
}

/*
 * May @addr lie on the stack of a thread alive, as learned?  No lock: a
 * thread whose stack holds @addr recorded it before anything could be
 * made there, so a caller that knows of an object at @addr sees the
 * record.  True also while a thread's stack went unrecorded.
 */
bool odebug_on_any_stack(uintptr_t addr)
{
	unsigned int n = __atomic_load_n(&stacks_used, __ATOMIC_ACQUIRE);

	if (__atomic_load_n(&stacks_unrecorded, __ATOMIC_SEQ_CST))
		return true;
	for (unsigned int i = 0; i < n; i++) {
		uintptr_t hi = __atomic_load_n(&stacks[i].hi, __ATOMIC_ACQUIRE);

		if (addr < hi && addr >= __atomic_load_n(&stacks[i].lo, __ATOMIC_RELAXED))
			return true;
	}
	return false;
}

/* @thread's stack mapping by pthread_getattr_np(), which may allocate. */
static bool stack_of(pthread_t thread, uintptr_t *lo, uintptr_t *hi)
{
	pthread_attr_t attr;
	void *addr;
	size_t size;
	bool ok = false;

	odebug_guard_enter();
	if (!pthread_getattr_np(thread, &attr)) {
		if (!pthread_attr_getstack(&attr, &addr, &size)) {
			*lo = (uintptr_t)addr;
			*hi = (uintptr_t)addr + size;
			ok = true;
		}
		pthread_attr_destroy(&attr);
	}
	odebug_guard_exit();
	return ok;
}

/*
 * Learn this thread's stack bounds where it is safe to allocate: in a
 * thread's first instructions (our pthread_create()'s trampoline), and in
 * the constructor when it runs on another thread than the main one.  Not
 * the main thread's: for it pthread_getattr_np() reads /proc/self/maps
 * with stdio, the dearest step of a process's start, and the start learns
 * it without allocating instead (odebug_stack_learn_main()).
 */
void odebug_stack_learn(void)
{
	uintptr_t lo, hi;

	if (stack_hi > 1 || (main_thread && pthread_equal(pthread_self(), main_thread)))
		return;
	if (stack_of(pthread_self(), &lo, &hi)) {
		odebug_tls.stack_lo = lo;
		odebug_tls.stack_len = stack_top(lo, hi) - lo;
		stack_hi = hi;
		stack_record(lo, hi);
	}
}

extern void *__libc_stack_end;

/* Maps' lines read at a time by main_mapping(): the start lock serialises. */
static ODEBUG_LARGE char maps_buf[4096];

/*
 * The mapping of /proc/self/maps that holds @addr, [*@from, *@to), and the
 * end of the one before it, *@last_to; raw calls, no allocation.  Each
 * line is read as it comes, whatever its length: two hex numbers, then
 * the rest skipped.
 */
static bool main_mapping(uintptr_t addr, uintptr_t *from, uintptr_t *to, uintptr_t *last_to)
{
	int fd = odebug_open_proc("maps");
	uintptr_t v[2] = { 0, 0 };
	int field = 0;
	bool found = false;
	long n;

	if (fd < 0)
		return false;
	*last_to = 0;
	while (!found && (n = syscall(SYS_read, fd, maps_buf, sizeof(maps_buf))) > 0) {
		for (long i = 0; i < n && !found; i++) {
			char c = maps_buf[i];
			int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;

			if (c == '\n') {
				if (field >= 1 && v[0] <= addr && addr < v[1]) {
					*from = v[0];
					*to = v[1];
					found = true;
				} else {
					*last_to = v[1];
				}
				v[0] = v[1] = 0;
				field = 0;
			} else if (field < 2 && d >= 0) {
				v[field] = v[field] << 4 | (uintptr_t)d;
			} else if (field < 2) {
				field++;
			}
		}
	}
	syscall(SYS_close, fd);
	return found;
}

/*
 * The main thread's stack, as pthread_getattr_np() computes it (its top
 * the page after __libc_stack_end's, as deep as RLIMIT_STACK allows down
 * to the mapping below), learned by the start: raw calls and a static
 * buffer, safe in a signal handler.  Without /proc, from the limit alone;
 * with no limit either, unknown: no on-stack checks on the main thread.
 */
void odebug_stack_learn_main(void)
{
	uintptr_t page = (uintptr_t)getpagesize(), end = (uintptr_t)__libc_stack_end;
	uintptr_t top = (end & -page) + page, from, to, last_to, size;
	struct rlimit rl;

	if (main_known || !main_thread || !end || getrlimit(RLIMIT_STACK, &rl))
		return;
	if (main_mapping(end, &from, &to, &last_to)) {
		size = ((uintptr_t)rl.rlim_cur - (to - top)) & -page;
		if (size > top - last_to)
			size = top - last_to;
	} else if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < top) {
		size = (uintptr_t)rl.rlim_cur & -page;
	} else {
		return;
	}
	main_lo = top - size;
	main_hi = top;
	stacks_record(main_lo, main_hi);	/* for the process's life */
	__atomic_store_n(&main_known, true, __ATOMIC_RELEASE);
}

/*
 * Before any bucket lock is taken, on the API path: this thread's bounds
 * as learned, else the main thread's from the start, else unknown (no
 * on-stack checks in this thread).  Never pthread_getattr_np() here: the
 * call may come from a signal handler that interrupted malloc (a thread
 * libodebug did not see start: lib/core/thread.c).  Unless libodebug was built
 * without its interposers (-Dinterpose=false, for sanitizer builds), when
 * no thread is seen starting: then here, as the first call's context allows.
 */
void odebug_stack_prepare(void)
{
	if (likely(stack_hi))
		return;
	odebug_tls.stack_lo = 0;
	odebug_tls.stack_len = 1;
	stack_hi = 1;
	if (!odebug_thread_hook) {
		/*
		 * Built without the interposers: no thread is seen starting.
		 * Its bounds are learned here; libunwind's TLS is not
		 * prepared, so its unwinds take the slower step-by-step way.
		 */
		odebug_stack_learn();
		if (stack_hi > 1)
			return;
	}
	if (__atomic_load_n(&main_known, __ATOMIC_ACQUIRE) &&
	    pthread_equal(pthread_self(), main_thread)) {
		odebug_tls.stack_lo = main_lo;
		odebug_tls.stack_len = main_hi - main_lo;
		stack_hi = main_hi;
	}
}

/* The top of this thread's stack, 0 or 1 until odebug_stack_prepare(). */
uintptr_t odebug_stack_top(void)
{
	return stack_hi;
}

/* Is @addr on the calling thread's stack?  *@base gets the stack's base. */
bool odebug_on_stack(uintptr_t addr, uintptr_t *base)
{
	*base = odebug_tls.stack_lo;
	return odebug_on_own_stack(addr);
}

/* debug_object_init_on_stack: an object at @addr, if on this stack. */
void odebug_stack_mark(uintptr_t addr)
{
	if (addr >= odebug_tls.stack_lo && addr < stack_hi && addr < odebug_tls.onstack_low)
		odebug_onstack_set(addr);
}
