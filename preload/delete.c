/* SPDX-License-Identifier: MIT */
/*
 * delete.c - C++ operator delete, every form, for allocators that bring
 * their own (jemalloc, tcmalloc preloaded after libodebug): their delete
 * never reaches free(), so the memory it releases was never checked, and
 * the trackers left there made the next object at the same address look
 * like a destroyed one.  libstdc++'s delete calls free(), which checks:
 * a form whose next definition reaches our free() is only forwarded.
 *
 * Written in C under the mangled names, in libstdc++'s version nodes (a
 * program asks for _ZdlPv@GLIBCXX_3.4); no libstdc++ dependency.  With no
 * next definition (the program is not C++ yet), free() releases the block,
 * as libstdc++'s delete does.  Disabled, each is one branch and a jump.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>

#include "core.h"
#include "next.h"

enum form {
	DL, DL_SIZED, DL_ALIGNED, DL_SIZED_ALIGNED, DL_NOTHROW, DL_ALIGNED_NOTHROW,
	DA, DA_SIZED, DA_ALIGNED, DA_SIZED_ALIGNED, DA_NOTHROW, DA_ALIGNED_NOTHROW,
	FORMS
};

static const struct {
	const char *name, *version;
} forms[FORMS] = {
	[DL] = { "_ZdlPv", "GLIBCXX_3.4" },
	[DL_SIZED] = { "_ZdlPvm", "CXXABI_1.3.9" },
	[DL_ALIGNED] = { "_ZdlPvSt11align_val_t", "CXXABI_1.3.11" },
	[DL_SIZED_ALIGNED] = { "_ZdlPvmSt11align_val_t", "CXXABI_1.3.11" },
	[DL_NOTHROW] = { "_ZdlPvRKSt9nothrow_t", "GLIBCXX_3.4" },
	[DL_ALIGNED_NOTHROW] = { "_ZdlPvSt11align_val_tRKSt9nothrow_t", "CXXABI_1.3.11" },
	[DA] = { "_ZdaPv", "GLIBCXX_3.4" },
	[DA_SIZED] = { "_ZdaPvm", "CXXABI_1.3.9" },
	[DA_ALIGNED] = { "_ZdaPvSt11align_val_t", "CXXABI_1.3.11" },
	[DA_SIZED_ALIGNED] = { "_ZdaPvmSt11align_val_t", "CXXABI_1.3.11" },
	[DA_NOTHROW] = { "_ZdaPvRKSt9nothrow_t", "GLIBCXX_3.4" },
	[DA_ALIGNED_NOTHROW] = { "_ZdaPvSt11align_val_tRKSt9nothrow_t", "CXXABI_1.3.11" },
};

/* A bit per form whose next definition does not reach our free(): set once, enabled. */
static unsigned int checked;

/* A usable size beyond this is not from a heap block (as free.c). */
#define SANE_BLOCK_SIZE	((size_t)1 << 40)

/*
 * free()'s check of the block at @p: @size bytes (a sized form's), or the
 * allocator's usable size.  @sp: the caller's stack pointer, for the
 * returned-frames check.
 */
static __attribute__((noinline)) void check_deleted(void *p, size_t size, uintptr_t sp)
{
	uintptr_t m = (uintptr_t)p;

	if (!p || odebug_load(&odebug_mode) != ODEBUG_MODE_ON || !odebug_tracking_any() ||
	    odebug_tls.guard || !odebug_opt.check_free)
		return;
	if (unlikely(sp > odebug_tls.onstack_low))
		odebug_stack_check_returned(sp);
	if (!size) {
		if ((m & (__alignof__(void *) - 1)) || !odebug_next_usable_size)
			return;
		size = odebug_next_usable_size(p);
	}
	if (size && size < SANE_BLOCK_SIZE && odebug_range_may_hold(m, m + size))
		odebug_check_range_slow(m, m + size);	/* errno: kept there */
}

/*
 * One form: @params, the next definition's call with @args, the block's
 * size (0: ask the allocator).  Until found, or with no next definition,
 * free() releases the block (and checks it).
 */
/* The fallbacks ignore the size, alignment and nothrow arguments, as free() does. */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define DELETE(sym, form, params, args, size)					\
	static void fallback_##sym params { free(p); }				\
	static void (*next_##sym) params = fallback_##sym;			\
	ODEBUG_EXPORT void sym params;						\
	void sym params								\
	{									\
		if (unlikely(odebug_load(&checked) & (1u << form)))		\
			check_deleted(p, size, odebug_caller_sp());		\
		next_##sym args;						\
	}

DELETE(_ZdlPv, DL, (void *p), (p), 0)
DELETE(_ZdlPvm, DL_SIZED, (void *p, size_t n), (p, n), n)
DELETE(_ZdlPvSt11align_val_t, DL_ALIGNED, (void *p, size_t a), (p, a), 0)
DELETE(_ZdlPvmSt11align_val_t, DL_SIZED_ALIGNED, (void *p, size_t n, size_t a), (p, n, a), n)
DELETE(_ZdlPvRKSt9nothrow_t, DL_NOTHROW, (void *p, const void *nt), (p, nt), 0)
DELETE(_ZdlPvSt11align_val_tRKSt9nothrow_t, DL_ALIGNED_NOTHROW,
       (void *p, size_t a, const void *nt), (p, a, nt), 0)
DELETE(_ZdaPv, DA, (void *p), (p), 0)
DELETE(_ZdaPvm, DA_SIZED, (void *p, size_t n), (p, n), n)
DELETE(_ZdaPvSt11align_val_t, DA_ALIGNED, (void *p, size_t a), (p, a), 0)
DELETE(_ZdaPvmSt11align_val_t, DA_SIZED_ALIGNED, (void *p, size_t n, size_t a), (p, n, a), n)
DELETE(_ZdaPvRKSt9nothrow_t, DA_NOTHROW, (void *p, const void *nt), (p, nt), 0)
DELETE(_ZdaPvSt11align_val_tRKSt9nothrow_t, DA_ALIGNED_NOTHROW,
       (void *p, size_t a, const void *nt), (p, a, nt), 0)

/* Where each form's next definition goes, in enum form's order. */
static void **const slots[FORMS] = {
	(void **)&next__ZdlPv, (void **)&next__ZdlPvm, (void **)&next__ZdlPvSt11align_val_t,
	(void **)&next__ZdlPvmSt11align_val_t, (void **)&next__ZdlPvRKSt9nothrow_t,
	(void **)&next__ZdlPvSt11align_val_tRKSt9nothrow_t,
	(void **)&next__ZdaPv, (void **)&next__ZdaPvm, (void **)&next__ZdaPvSt11align_val_t,
	(void **)&next__ZdaPvmSt11align_val_t, (void **)&next__ZdaPvRKSt9nothrow_t,
	(void **)&next__ZdaPvSt11align_val_tRKSt9nothrow_t,
};

/* Does deleting NULL through form @f reach our free()?  (Every delete accepts NULL.) */
static bool reaches_free(enum form f)
{
	static const char nothrow;	/* std::nothrow_t: empty, only its address is passed */
	void *fn = *slots[f];

	odebug_free_reached = 0;
	switch (f) {
	case DL: case DA:
		((void (*)(void *))fn)(NULL);
		break;
	case DL_SIZED: case DA_SIZED: case DL_ALIGNED: case DA_ALIGNED:
		((void (*)(void *, size_t))fn)(NULL, f == DL_SIZED || f == DA_SIZED ? 0 : 16);
		break;
	case DL_SIZED_ALIGNED: case DA_SIZED_ALIGNED:
		((void (*)(void *, size_t, size_t))fn)(NULL, 0, 16);
		break;
	case DL_NOTHROW: case DA_NOTHROW:
		((void (*)(void *, const void *))fn)(NULL, &nothrow);
		break;
	default:
		((void (*)(void *, size_t, const void *))fn)(NULL, 16, &nothrow);
		break;
	}
	return odebug_free_reached;
}

/*
 * After next.c's constructor (the mode is decided): find the next
 * definitions, and when enabled and free() reaches ours (else released
 * memory is not checked at all, as next.c says), mark the forms whose
 * next definition bypasses it.
 */
static void delete_resolve(void)
{
	void (*program_free)(void *);
	unsigned int mask = 0;
	int f;

	bool found[FORMS];

	for (f = 0; f < FORMS; f++) {
		/* A C program has none: no failed lookup's malloc then. */
		void *fn = NULL;

		if (odebug_defined_elsewhere(forms[f].name) &&
		    !(fn = dlvsym(RTLD_NEXT, forms[f].name, forms[f].version)))
			fn = dlsym(RTLD_NEXT, forms[f].name);
		found[f] = fn != NULL;
		if (fn)
			*slots[f] = fn;
	}
	if (odebug_load(&odebug_mode) < ODEBUG_MODE_ON)
		return;
	*(void **)&program_free = dlsym(RTLD_DEFAULT, "free");
	odebug_free_reached = 0;
	if (!program_free || (program_free(NULL), !odebug_free_reached))
		return;
	for (f = 0; f < FORMS; f++)
		if (found[f] && !reaches_free((enum form)f))
			mask |= 1u << f;
	odebug_store(&checked, mask);
}

__attribute__((constructor(102))) static void delete_constructor(void)
{
	delete_resolve();
	odebug_start_step("delete.c");
}
