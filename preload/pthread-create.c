/* SPDX-License-Identifier: MIT */
/*
 * pthread-create.c - a new thread is set up for reporting before its start
 * routine runs (lib/core/thread.c says why: what a thread sets up lazily may
 * allocate, and its first report may come from a signal handler that
 * interrupted malloc).
 *
 * pthread_create at glibc's two versions (@@GLIBC_2.34 and the baseline
 * node programs linked before glibc 2.34 are bound to), and C11's
 * thrd_create (@@GLIBC_2.34, @GLIBC_2.28), which glibc implements with an
 * internal call our pthread_create never sees.  Disabled, each is one
 * branch and a jump to the real one.  Enabled, the start routine and its
 * argument travel in a small block the new thread frees; if it cannot be
 * allocated, the thread starts as it would have, unprepared.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <threads.h>

#include "held-ext.h"
#include "core.h"
#include "next.h"

/*
 * A ThreadSanitizer runtime starts each thread through its own start
 * routine, which is what reaches ours: our routine runs before TSan has set
 * the thread up, and the allocation in odebug_thread_begin() then crashes
 * in TSan's allocator.  Under TSan threads are left unprepared and set up
 * on their first API call instead (lib/table/stack.c), which is safe there: TSan
 * delivers signals only at its own safe points, never inside malloc().
 */
static bool threads_prepared;

/* Before any thread of the program's: lib/table/stack.c relies on this hook. */
__attribute__((constructor(101))) static void thread_hook_here(void)
{
	threads_prepared = !odebug_defined_elsewhere("__tsan_init");	/* no failed dlsym()'s malloc */
	odebug_thread_hook = threads_prepared;
}

typedef int create_fn(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

struct start {
	void *(*routine)(void *);
	int (*c11_routine)(void *);
	void *arg;
	void *stack;		/* the attribute's stack (lib/checks/held/held-tstack.c), or NULL */
	size_t stack_size;
	bool detached;		/* created detached */
};

/*
 * The start routine ended: it returned, or the thread left it by
 * pthread_exit() or a cancellation (a cleanup handler, so those end the
 * thread's records too).
 */
static void routine_ended(void *unused)
{
	(void)unused;
	odebug_stack_forget();
	if (odebug_load(&odebug_held_on)) {
		odebug_held_thread_end();
		odebug_held_sigstack_thread_end();
	}
}

static void *prepared_start(void *p)
{
	struct start s = *(struct start *)p;
	void *ret;

	free(p);
	odebug_thread_begin();
	if (odebug_load(&odebug_held_on))
		odebug_held_thread_begin((uintptr_t)s.routine, s.stack, s.stack_size,
					 s.detached);
	pthread_cleanup_push(routine_ended, NULL);
	ret = s.routine(s.arg);
	pthread_cleanup_pop(1);
	/* Not a tail call: the routine's frames keep a caller to unwind to. */
	__asm__ volatile("" ::: "memory");
	return ret;
}

static int prepared_c11_start(void *p)
{
	struct start s = *(struct start *)p;
	int ret;

	free(p);
	odebug_thread_begin();
	pthread_cleanup_push(routine_ended, NULL);
	ret = s.c11_routine(s.arg);
	pthread_cleanup_pop(1);
	__asm__ volatile("" ::: "memory");
	return ret;
}

/* The block a new thread gets, or NULL to start it unprepared. */
static struct start *start_block(void)
{
	if (likely(odebug_load(&odebug_mode) == ODEBUG_MODE_OFF) || odebug_tls.guard ||
	    !threads_prepared)
		return NULL;
	odebug_thread_begin();	/* the creator, if it was made unseen */
	odebug_trim_after(ODEBUG_TRIM_THREADED);
	return malloc(sizeof(struct start));
}

static int create(create_fn *next, pthread_t *thread, const pthread_attr_t *attr,
		  void *(*routine)(void *), void *arg)
{
	struct start *s = start_block();
	void *stack = NULL;
	size_t size = 0;
	int r, state = PTHREAD_CREATE_JOINABLE;

	if (!s)
		return next(thread, attr, routine, arg);
	if (attr && odebug_load(&odebug_held_on)) {
		pthread_attr_getstack(attr, &stack, &size);
		pthread_attr_getdetachstate(attr, &state);
	}
	*s = (struct start){ .routine = routine, .arg = arg, .stack = stack,
			     .stack_size = size, .detached = state == PTHREAD_CREATE_DETACHED };
	r = next(thread, attr, prepared_start, s);
	if (r) {
		free(s);
		return r;
	}
	if (stack) {	/* the new thread may be gone with s already */
		int saved = errno;

		odebug_held_tstack_created((uintptr_t)*thread, stack, size,
					   state == PTHREAD_CREATE_DETACHED);
		errno = saved;
	}
	return r;
}

/* The next definition of @name at @version (else its default), found once. */
static void *next_of(void **slot, const char *name, const char *version)
{
	void *fn = __atomic_load_n(slot, __ATOMIC_ACQUIRE);

	if (unlikely(!fn)) {
		fn = odebug_next_at(name, version);
		__atomic_store_n(slot, fn, __ATOMIC_RELEASE);
	}
	return fn;
}

/* pthread_create at glibc's @version, exported as pthread_create@@at. */
#define PTHREAD_CREATE(tag, version, at)					\
	static create_fn *next_##tag;						\
	int odebug_pthread_create_##tag(pthread_t *thread, const pthread_attr_t *attr, \
					void *(*routine)(void *), void *arg) ODEBUG_EXPORT; \
	int odebug_pthread_create_##tag(pthread_t *thread, const pthread_attr_t *attr, \
					void *(*routine)(void *), void *arg)	\
	{									\
		create_fn *next = next_of((void **)&next_##tag, "pthread_create", version); \
										\
		if (likely(odebug_load(&odebug_mode) == ODEBUG_MODE_OFF))	\
			return next(thread, attr, routine, arg);		\
		return create(next, thread, attr, routine, arg);		\
	}									\
	__asm__(".symver odebug_pthread_create_" #tag ",pthread_create" at)

PTHREAD_CREATE(234, "GLIBC_2.34", "@@GLIBC_2.34");
PTHREAD_CREATE(base, ODEBUG_V_BASE, "@" ODEBUG_V_BASE);

typedef int thrd_create_fn(thrd_t *, thrd_start_t, void *);

static int c11_create(thrd_create_fn *next, thrd_t *thread, thrd_start_t routine, void *arg)
{
	struct start *s = start_block();
	int r;

	if (!s)
		return next(thread, routine, arg);
	s->c11_routine = routine;
	s->arg = arg;
	r = next(thread, prepared_c11_start, s);
	if (r != thrd_success)
		free(s);
	return r;
}

/* thrd_create at glibc's @version, exported as thrd_create@@at. */
#define THRD_CREATE(tag, version, at)						\
	static thrd_create_fn *next_c11_##tag;					\
	int odebug_thrd_create_##tag(thrd_t *thread, thrd_start_t routine, void *arg) \
		ODEBUG_EXPORT;							\
	int odebug_thrd_create_##tag(thrd_t *thread, thrd_start_t routine, void *arg) \
	{									\
		thrd_create_fn *next = next_of((void **)&next_c11_##tag, "thrd_create", version); \
										\
		if (likely(odebug_load(&odebug_mode) == ODEBUG_MODE_OFF))	\
			return next(thread, routine, arg);			\
		return c11_create(next, thread, routine, arg);			\
	}									\
	__asm__(".symver odebug_thrd_create_" #tag ",thrd_create" at)

THRD_CREATE(234, "GLIBC_2.34", "@@GLIBC_2.34");
THRD_CREATE(228, "GLIBC_2.28", "@GLIBC_2.28");
