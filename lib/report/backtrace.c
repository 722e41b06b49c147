/* SPDX-License-Identifier: MIT */
/*
 * backtrace.c - capturing the culprit's frames.
 *
 * On x86-64 the frames are read from the call-frame information with
 * nothing loaded (unwind.c).  libunwind is loaded only where that walk is
 * not built (other architectures) and with origins=1, whose every
 * annotation captures a stack (unw_backtrace, about 11 ns a frame): by
 * the constructor, dlopen'ed RTLD_LOCAL, since linked normally it would
 * export its _Unwind_* symbols into the global scope and take over the
 * host program's C++ exception unwinding.  Naming frames is left to
 * symbolize.c, at report time only.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <string.h>
#include <unistd.h>

#include "dynsym.h"
#include "report.h"

/* Only for the names of the stepping calls priming uses (prime()). */
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#define UNW_NAME(f) UNW_NAME_(f)
#define UNW_NAME_(f) #f

#ifdef ODEBUG_HAVE_VALGRIND_H
#include <valgrind/valgrind.h>
static bool running_on_valgrind(void) { return RUNNING_ON_VALGRIND; }
#else
static bool running_on_valgrind(void) { return false; }
#endif

/*
 * Under ThreadSanitizer, libunwind's thread-exit destructor (its trace
 * cache) locks a mutex after TSan has torn the thread down, and crashes:
 * those builds use glibc's backtrace().
 */

static int (*unw_backtrace_fn)(void **buffer, int size);
/* The stepping calls: priming, and threads whose libunwind TLS is not set up. */
static int (*getcontext_fn)(unw_context_t *);
static int (*init_local_fn)(unw_cursor_t *, unw_context_t *);
static int (*step_fn)(unw_cursor_t *);
static int (*get_reg_fn)(unw_cursor_t *, unw_regnum_t, unw_word_t *);

/*
 * unw_backtrace() keeps a per-thread trace cache behind a __thread
 * pointer of libunwind's.  libunwind is dlopen'ed, so that variable lives
 * in a TLS block glibc allocates with malloc() on the thread's first use,
 * which inside a signal handler that interrupted malloc deadlocks on the
 * arena lock.  unw_backtrace() is used only in threads whose block was
 * allocated in a safe place (odebug_backtrace_thread_prepare()); the
 * others step frame by frame, which touches no TLS (about 2 us a frame
 * against 3 ns: reports only, and origins' first capture per call site).
 */
static size_t unw_tls_module;		/* libunwind's TLS module id; 0: none */
static ODEBUG_TLS bool unw_tls_ready;

typedef struct { unsigned long module, offset; } odebug_tls_index;
extern void *__tls_get_addr(odebug_tls_index *ti);
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

struct find_sym {
	uintptr_t addr;
	const char *name;
	size_t size;		/* the symbol's, 0 if not found at addr */
};

/* The object whose executable segment holds ctx->addr: that segment, and @name's size. */
static int find_sym(struct dl_phdr_info *info, size_t size, void *data)
{
	struct find_sym *fs = data;
	struct find_text ft = { fs->addr, &libc_lo, &libc_hi };
	struct odebug_dynsyms s;
	const ElfW(Sym) *sym;

	if (!find_text(info, size, &ft))
		return 0;
	if (odebug_dynsyms_of(info->dlpi_addr, odebug_dynamic_of(info), &s) &&
	    (sym = odebug_dynsym_lookup(&s, fs->name)) &&
	    info->dlpi_addr + sym->st_value == fs->addr)
		fs->size = sym->st_size;
	return 1;
}

/* libc's dlclose() and its text, from libc's own hash table (not dladdr()'s scan). */
static void find_dlclose(void)
{
	struct find_sym fs = { (uintptr_t)dlsym(RTLD_NEXT, "dlclose"), "dlclose", 0 };

	if (!fs.addr)
		return;
	dl_iterate_phdr(find_sym, &fs);
	if (!libc_hi || !fs.size)
		return;
	dlclose_lo = fs.addr;
	__atomic_store_n(&dlclose_hi, dlclose_lo + fs.size, __ATOMIC_RELEASE);
}

/*
 * Prime libunwind outside any release path: its one-time set-up (the
 * address-space and DWARF caches, the signal mask it validates memory
 * under) runs on the first unwind.  By stepping, not by unw_backtrace():
 * that call also maps and fills a 256 KiB trace cache for the thread that
 * makes it, 64 page faults at start that a process which never reports
 * would pay for nothing.  A thread's trace cache is made on its first
 * report (mmap and pthread_setspecific; no allocator, no loader).
 */
static void prime(void)
{
	unw_context_t uc;
	unw_cursor_t cursor;
	int i;

	if (getcontext_fn(&uc) || init_local_fn(&cursor, &uc))
		return;
	for (i = 0; i < 4 && step_fn(&cursor) > 0; i++)
		;
}

/*
 * Allocate this thread's libunwind TLS block now, where malloc() is safe
 * (thread.c says where), so that unw_backtrace() may be used from here on.
 */
void odebug_backtrace_thread_prepare(void)
{
	odebug_tls_index ti;

	if (unw_tls_ready || !unw_tls_module)
		return;
	ti.module = unw_tls_module;
	ti.offset = 0;
	odebug_guard_enter();
	__tls_get_addr(&ti);
	odebug_guard_exit();
	unw_tls_ready = true;
}

void odebug_backtrace_init(void)
{
	void *handle;
	struct find_text ft = { (uintptr_t)odebug_backtrace_init, &self_lo, &self_hi };

	dl_iterate_phdr(find_text, &ft);
	find_dlclose();
	if (ODEBUG_OWN_UNWIND && !odebug_opt.origins)
		return;		/* nothing to load: unwind.c */
	handle = ODEBUG_TSAN ? NULL : dlopen(ODEBUG_LIBUNWIND_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (handle) {
		*(void **)&getcontext_fn = dlsym(handle, UNW_NAME(unw_tdep_getcontext));
		*(void **)&init_local_fn = dlsym(handle, UNW_NAME(unw_init_local));
		*(void **)&step_fn = dlsym(handle, UNW_NAME(unw_step));
		*(void **)&get_reg_fn = dlsym(handle, UNW_NAME(unw_get_reg));
		/* Without the stepping calls, no safe fallback: glibc's backtrace(). */
		if (getcontext_fn && init_local_fn && step_fn && get_reg_fn)
			*(void **)&unw_backtrace_fn = dlsym(handle, "unw_backtrace");
		if (dlinfo(handle, RTLD_DI_TLS_MODID, &unw_tls_module))
			unw_tls_module = 0;
	}
	/*
	 * Not under valgrind: there libunwind's first step falls back to
	 * checking addresses with write(2) from its uninitialised stack, which
	 * memcheck reports in every process, tracking or not.  valgrind runs
	 * the program on a simulated CPU anyway: set-up done later changes
	 * nothing it could see.  (glibc's backtrace(), the fallback, dlopens
	 * libgcc_s on its first call: made here for the same reason.)
	 */
	if (running_on_valgrind())
		return;
	if (unw_backtrace_fn) {
		prime();
	} else {
		void *pcs[4];

		odebug_backtrace(pcs, 4);
	}
}

/* unw_backtrace()'s answer without its trace cache: step, record each caller. */
static __attribute__((noinline)) int step_backtrace(void **pcs, int max)
{
	unw_context_t uc;
	unw_cursor_t cursor;
	unw_word_t ip;
	int n = 0;

	if (getcontext_fn(&uc) || init_local_fn(&cursor, &uc))
		return 0;
	/* The first step leaves this frame: the first entry is our caller's. */
	while (n < max && step_fn(&cursor) > 0 && get_reg_fn(&cursor, UNW_REG_IP, &ip) == 0)
		pcs[n++] = (void *)(uintptr_t)ip;
	return n;
}

/* Capture up to @max return addresses, innermost first. */
int odebug_backtrace(void **pcs, int max)
{
	int n;

	odebug_guard_enter();
	if (unw_backtrace_fn && (unw_tls_ready || !unw_tls_module))
		n = unw_backtrace_fn(pcs, max);
	else if (unw_backtrace_fn)
		n = step_backtrace(pcs, max);
	else if (ODEBUG_OWN_UNWIND)
		n = odebug_unwind(pcs, max);
	else
		n = backtrace(pcs, max);
	odebug_guard_exit();
	return n < 0 ? 0 : n;
}

/*
 * Other modules whose leading frames are skipped too: a sanitizer runtime
 * calling our free hook, a shim (debug_objects_skip_module), and
 * libodebug's own annotation modules, whose frames are ours anywhere in a
 * stack (@own: a wrapper that calls into its library, which calls the
 * program back).  Appended, never removed; an entry is published by the
 * count's release store.
 */
#define MAX_SKIPPED 16
static struct { uintptr_t lo, hi; bool own; } skipped[MAX_SKIPPED];
static int nskipped;

struct find_module {
	uintptr_t addr;
	int index;		/* modules visited: the first is the executable */
	bool seen;		/* the module that holds addr was visited */
	bool found;
	bool own;
};

/* Mark the executable segments of a module (its load bias and program headers). */
static bool add_segments(uintptr_t bias, const ElfW(Phdr) *phdr, int phnum, bool own)
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
		skipped[n].own = own;
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
	fm->found = add_segments(info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum, fm->own);
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
 * executable (called with no lock held: dl_iterate_phdr, dladdr); @own:
 * one of libodebug's modules, whose frames no report names.
 */
bool odebug_backtrace_skip_module(const void *addr, bool own)
{
	static odebug_spinlock_t adding;
	struct find_module fm = { (uintptr_t)addr, 0, false, false, own };
	const ElfW(Phdr) *phdr;
	uintptr_t bias;
	int phnum;

	odebug_guard_enter();
	odebug_spin_lock(&adding);
	dl_iterate_phdr(add_module, &fm);
	odebug_spin_unlock(&adding);
	if (!fm.seen && find_foreign((uintptr_t)addr, &bias, &phdr, &phnum)) {
		odebug_spin_lock(&adding);
		fm.found = add_segments(bias, phdr, phnum, own);
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

/*
 * The culprit line among @pcs[@first..@n), as report grouping keys it: the
 * first frame outside libc, so that a release libc makes for the program
 * (fclose()'s buffer, a realloc) is keyed by the program's call and not by
 * libc's one internal line every such call shares.  @first when all are
 * libc's, or libc's text is not known.
 */
int odebug_backtrace_culprit(void *const *pcs, int first, int n)
{
	int i;

	for (i = first; libc_hi && i < n; i++)
		if ((uintptr_t)pcs[i] < libc_lo || (uintptr_t)pcs[i] >= libc_hi)
			return i;
	return first;
}

/*
 * libodebug's own frames, and its modules', never appear in a report,
 * wherever they are in a stack: below the leading ones odebug_backtrace_skip() drops, a thread's
 * outermost frames run through preload/pthread-create.c's prepared_start,
 * and an origins=1 stack saved in such a thread keeps that frame too.
 * Copies @pcs[0..@n) to @out without them; returns how many are left.
 */
static bool is_own_module(uintptr_t pc)
{
	int i, n = __atomic_load_n(&nskipped, __ATOMIC_ACQUIRE);

	for (i = 0; i < n; i++)
		if (skipped[i].own && pc >= skipped[i].lo && pc < skipped[i].hi)
			return true;
	return false;
}

int odebug_backtrace_drop_own(const uintptr_t *pcs, int n, uintptr_t *out)
{
	int i, k = 0;

	for (i = 0; i < n; i++)
		if ((pcs[i] < self_lo || pcs[i] >= self_hi) && !is_own_module(pcs[i]))
			out[k++] = pcs[i];
	return k;
}
