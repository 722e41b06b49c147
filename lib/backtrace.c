/* SPDX-License-Identifier: MIT */
/*
 * backtrace.c - capturing the culprit's frames.
 *
 * libunwind is dlopen'ed RTLD_LOCAL, and only when libodebug is enabled:
 * linked normally it would export its _Unwind_* symbols into the global
 * scope and take over the host program's C++ exception unwinding.  Capture
 * uses unw_backtrace (about 11 ns a frame); naming frames is left to
 * symbolize.c, at report time only.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>

#include "internal.h"

#ifdef ODEBUG_HAVE_VALGRIND_H
#include <valgrind/valgrind.h>
static bool running_on_valgrind(void) { return RUNNING_ON_VALGRIND; }
#else
static bool running_on_valgrind(void) { return false; }
#endif

#ifndef ODEBUG_LIBUNWIND_SONAME
#define ODEBUG_LIBUNWIND_SONAME "libunwind.so.8"
#endif

/*
 * Under ThreadSanitizer, libunwind's thread-exit destructor (its trace
 * cache) locks a mutex after TSan has torn the thread down, and crashes:
 * those builds use glibc's backtrace().
 */
#if defined(__SANITIZE_THREAD__)
#define ODEBUG_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ODEBUG_TSAN 1
#endif
#endif
#ifndef ODEBUG_TSAN
#define ODEBUG_TSAN 0
#endif

static int (*unw_backtrace_fn)(void **buffer, int size);
static uintptr_t self_lo, self_hi;	/* our executable segments */

/* Find our own code's address range, to skip our frames without dladdr. */
static int find_self(struct dl_phdr_info *info, size_t size, void *data)
{
	uintptr_t here = (uintptr_t)data;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) &&
		    here >= lo && here < lo + ph->p_memsz) {
			self_lo = lo;
			self_hi = lo + ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

void odebug_backtrace_init(void)
{
	void *handle, *pcs[4];

	dl_iterate_phdr(find_self, (void *)(uintptr_t)odebug_backtrace_init);
	handle = ODEBUG_TSAN ? NULL : dlopen(ODEBUG_LIBUNWIND_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (handle)
		*(void **)&unw_backtrace_fn = dlsym(handle, "unw_backtrace");
	/*
	 * Prime it here, outside any release path: the first call maps
	 * libunwind's caches (and glibc's backtrace() dlopens libgcc_s).  Not
	 * under valgrind: there libunwind's first step falls back to checking
	 * addresses with write(2) from its uninitialised stack, which memcheck
	 * reports in every process, tracking or not.  valgrind runs the
	 * program on a simulated CPU anyway: a first backtrace that maps the
	 * caches later changes nothing it could see.
	 */
	if (!running_on_valgrind())
		odebug_backtrace(pcs, 4);
}

/* Capture up to @max return addresses, innermost first. */
int odebug_backtrace(void **pcs, int max)
{
	int n;

	odebug_guard_enter();
	if (unw_backtrace_fn)
		n = unw_backtrace_fn(pcs, max);
	else
		n = backtrace(pcs, max);
	odebug_guard_exit();
	return n < 0 ? 0 : n;
}

/* How many leading frames are libodebug's own (the report path, free()). */
int odebug_backtrace_skip(void *const *pcs, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if ((uintptr_t)pcs[i] < self_lo || (uintptr_t)pcs[i] >= self_hi)
			break;
	return i;
}

/* origins=1: the caller's stack, stored in the depot. */
uint32_t odebug_origin_here(void)
{
	void *pcs[ODEBUG_MAX_FRAMES + ODEBUG_FRAME_SLACK];
	int n = odebug_backtrace(pcs, (int)odebug_opt.stack_depth + ODEBUG_FRAME_SLACK);
	int skip = odebug_backtrace_skip(pcs, n);
	int keep = n - skip;

	if (keep > (int)odebug_opt.stack_depth)
		keep = (int)odebug_opt.stack_depth;
	return odebug_depot_save(pcs + skip, keep);
}
