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
#include <string.h>
#include <unistd.h>

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

/*
 * libc's dlclose() and the executable segment that holds it: a report
 * made by the loader inside dlclose() (odebug --audit's la_objclose)
 * starts at dlclose()'s caller, past libc's frames between (_dlerror_run,
 * _dl_catch_error) and our dlclose() interposer.
 */
static uintptr_t dlclose_lo, dlclose_hi, libc_lo, libc_hi;

struct find_text {
	uintptr_t addr;
	uintptr_t *lo, *hi;
};

/* Find the executable segment that holds ctx->addr (without dladdr at report time). */
static int find_text(struct dl_phdr_info *info, size_t size, void *data)
{
	struct find_text *ft = data;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) &&
		    ft->addr >= lo && ft->addr < lo + ph->p_memsz) {
			*ft->lo = lo;
			*ft->hi = lo + ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

static void find_dlclose(void)
{
	const ElfW(Sym) *sym = NULL;
	void *fn = dlsym(RTLD_NEXT, "dlclose");
	struct find_text ft = { (uintptr_t)fn, &libc_lo, &libc_hi };
	Dl_info info;

	if (!fn || !dladdr1(fn, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym ||
	    !sym->st_size || !info.dli_saddr)
		return;
	dl_iterate_phdr(find_text, &ft);
	if (!libc_hi)
		return;
	dlclose_lo = (uintptr_t)info.dli_saddr;
	__atomic_store_n(&dlclose_hi, dlclose_lo + sym->st_size, __ATOMIC_RELEASE);
}

void odebug_backtrace_init(void)
{
	void *handle, *pcs[4];
	struct find_text ft = { (uintptr_t)odebug_backtrace_init, &self_lo, &self_hi };

	dl_iterate_phdr(find_text, &ft);
	find_dlclose();
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
	bool seen;		/* the module that holds addr was visited */
	bool found;
};

/* Mark the executable segments of a module (its load bias and program headers). */
static bool add_segments(uintptr_t bias, const ElfW(Phdr) *phdr, int phnum)
{
	bool found = false;
	int i, n;

	for (i = 0; i < phnum; i++) {
		const ElfW(Phdr) *ph = &phdr[i];

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		n = __atomic_load_n(&nskipped, __ATOMIC_ACQUIRE);
		if (n == MAX_SKIPPED)
			break;
		skipped[n].lo = bias + ph->p_vaddr;
		skipped[n].hi = skipped[n].lo + ph->p_memsz;
		__atomic_store_n(&nskipped, n + 1, __ATOMIC_RELEASE);
		found = true;
	}
	return found;
}

/* Every executable segment of the module that holds ctx->addr. */
static int add_module(struct dl_phdr_info *info, size_t size, void *data)
{
	struct find_module *fm = data;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && fm->addr >= lo && fm->addr < lo + ph->p_memsz)
			break;
	}
	fm->seen = i < info->dlpi_phnum;
	if (fm->index++ == 0 || !fm->seen)
		return fm->seen;	/* the executable is never skipped */
	fm->found = add_segments(info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum);
	return 1;
}

/*
 * A module of another link namespace (odebug --audit's rtld-audit module,
 * a dlmopen'ed shim): dl_iterate_phdr() lists only the caller's namespace,
 * dladdr() finds it in any.  Its program headers are mapped with its ELF
 * header, at the start of its first segment.
 */
static bool find_foreign(uintptr_t addr, uintptr_t *bias, const ElfW(Phdr) **phdr, int *phnum)
{
	const ElfW(Ehdr) *eh;
	const ElfW(Phdr) *ph;
	Dl_info info;
	int i;

	if (!dladdr((void *)addr, &info) || !info.dli_fbase)
		return false;
	eh = info.dli_fbase;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_type != ET_DYN ||
	    eh->e_phentsize != sizeof(*ph))
		return false;
	ph = (const ElfW(Phdr) *)((const char *)eh + eh->e_phoff);
	for (i = 0; i < eh->e_phnum && ph[i].p_type != PT_LOAD; i++)
		;
	if (i == eh->e_phnum)
		return false;
	/* The mapping starts at the first segment's page: the bias is the rest. */
	*bias = (uintptr_t)eh - (ph[i].p_vaddr & ~((uintptr_t)getpagesize() - 1));
	*phdr = ph;
	*phnum = eh->e_phnum;
	return true;
}

/*
 * Skip the leading frames of the module that holds @addr, unless it is the
 * executable (called with no lock held: dl_iterate_phdr, dladdr).
 */
bool odebug_backtrace_skip_module(const void *addr)
{
	static odebug_spinlock_t adding;
	struct find_module fm = { (uintptr_t)addr, 0, false, false };
	const ElfW(Phdr) *phdr;
	uintptr_t bias;
	int phnum;

	odebug_guard_enter();
	odebug_spin_lock(&adding);
	dl_iterate_phdr(add_module, &fm);
	odebug_spin_unlock(&adding);
	if (!fm.seen && find_foreign((uintptr_t)addr, &bias, &phdr, &phnum)) {
		odebug_spin_lock(&adding);
		fm.found = add_segments(bias, phdr, phnum);
		odebug_spin_unlock(&adding);
	}
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

static int skip_leading(void *const *pcs, int n, int i)
{
	while (i < n && is_skipped((uintptr_t)pcs[i]))
		i++;
	return i;
}

/*
 * How many leading frames are libodebug's own (the report path, free()),
 * or a skipped module's (odebug --audit marks the loader and itself); then
 * through libc's dlclose() when only libc's frames lead to it, and our
 * dlclose() after it.
 */
int odebug_backtrace_skip(void *const *pcs, int n)
{
	uintptr_t hi = __atomic_load_n(&dlclose_hi, __ATOMIC_ACQUIRE);
	int i, j;

	i = skip_leading(pcs, n, 0);
	for (j = i; hi && j < n && j < i + THROUGH_WINDOW; j++) {
		uintptr_t pc = (uintptr_t)pcs[j];

		if (pc > dlclose_lo && pc <= hi) {
			i = skip_leading(pcs, n, j + 1);
			break;
		}
		if (pc < libc_lo || pc >= libc_hi)
			break;
	}
	for (j = i; through_hi && j < n && j < i + THROUGH_WINDOW; j++)
		if ((uintptr_t)pcs[j] > through_lo && (uintptr_t)pcs[j] <= through_hi)
			return j + 1;
	return i;
}
