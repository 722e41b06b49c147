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

/*
 * Other modules whose leading frames are skipped too: a sanitizer runtime
 * calling our free hook, a shim (debug_objects_skip_module).  Appended,
 * never removed; an entry is published by the count's release store.
 */
#define MAX_SKIPPED 16
static struct { uintptr_t lo, hi; } skipped[MAX_SKIPPED];
static int nskipped;

struct find_module {
	uintptr_t addr;
	int index;		/* modules visited: the first is the executable */
	bool found;
};

/* Every executable segment of the module that holds ctx->addr. */
static int add_module(struct dl_phdr_info *info, size_t size, void *data)
{
	struct find_module *fm = data;
	int i, n;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && fm->addr >= lo && fm->addr < lo + ph->p_memsz)
			break;
	}
	if (fm->index++ == 0 || i == info->dlpi_phnum)
		return i < info->dlpi_phnum;	/* the executable is never skipped */
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		n = __atomic_load_n(&nskipped, __ATOMIC_ACQUIRE);
		if (n == MAX_SKIPPED)
			break;
		skipped[n].lo = info->dlpi_addr + ph->p_vaddr;
		skipped[n].hi = skipped[n].lo + ph->p_memsz;
		__atomic_store_n(&nskipped, n + 1, __ATOMIC_RELEASE);
		fm->found = true;
	}
	return 1;
}

/*
 * Skip the leading frames of the module that holds @addr, unless it is the
 * executable (called with no lock held: dl_iterate_phdr).
 */
bool odebug_backtrace_skip_module(const void *addr)
{
	static odebug_spinlock_t adding;
	struct find_module fm = { (uintptr_t)addr, 0, false };

	odebug_guard_enter();
	odebug_spin_lock(&adding);
	dl_iterate_phdr(add_module, &fm);
	odebug_spin_unlock(&adding);
	odebug_guard_exit();
	return fm.found;
}

static bool is_skipped(uintptr_t pc)
{
	int i, n = __atomic_load_n(&nskipped, __ATOMIC_ACQUIRE);

	if (pc >= self_lo && pc < self_hi)
		return true;
	for (i = 0; i < n; i++)
		if (pc >= skipped[i].lo && pc < skipped[i].hi)
			return true;
	return false;
}

/*
 * A function whose frame, when it is among the first few after the skipped
 * ones, is skipped with everything above it: a sanitizer's free()
 * interceptor linked into the executable (clang), which calls our free
 * hook through its allocator's frames.
 */
static uintptr_t through_lo, through_hi;
#define THROUGH_WINDOW 8

void odebug_backtrace_skip_through(const void *fn)
{
	const ElfW(Sym) *sym = NULL;
	Dl_info info;

	if (dladdr1(fn, &info, (void **)&sym, RTLD_DL_SYMENT) && sym && sym->st_size &&
	    info.dli_saddr) {
		through_lo = (uintptr_t)info.dli_saddr;
		through_hi = through_lo + sym->st_size;
	}
}

/* How many leading frames are libodebug's own (the report path, free()), or a skipped module's. */
int odebug_backtrace_skip(void *const *pcs, int n)
{
	int i, j;

	for (i = 0; i < n; i++)
		if (!is_skipped((uintptr_t)pcs[i]))
			break;
	for (j = i; through_hi && j < n && j < i + THROUGH_WINDOW; j++)
		if ((uintptr_t)pcs[j] > through_lo && (uintptr_t)pcs[j] <= through_hi)
			return j + 1;
	return i;
}
