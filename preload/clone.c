/* SPDX-License-Identifier: MIT */
/*
 * clone.c - knowing that the process has one thread, for the tracker's
 * compare-and-swap without the lock prefix (lib/table/tracker.h).
 *
 * glibc's __libc_single_threaded is cleared by pthread_create() (and
 * everything glibc builds on it: C11 threads, timer and AIO helpers), but
 * not by a thread made with clone() or syscall(SYS_clone), which two cores
 * then run over the same words.  So libodebug keeps a flag of its own,
 * odebug_one_thread, cleared here before any such call that shares our
 * memory (CLONE_VM) reaches the kernel: clone(), __clone() and syscall()
 * with SYS_clone or SYS_clone3 (glibc exports no clone3()).  glibc makes
 * no CLONE_VM child through these symbols itself: its pthread_create()
 * and posix_spawn() call a hidden clone, the first clearing
 * __libc_single_threaded before, and posix_spawn()'s parent waits until
 * its child has exec'd or exited.  A dlmopen() into another namespace
 * clears the flag too: that namespace's libc has a single-thread flag and
 * a clone of its own, so its pthread_create() makes a thread that neither
 * of ours sees, and the thread may run the program's code (a start
 * routine, a callback), which reaches libodebug.
 *
 * The flag is set once, by the constructor, only if the process has one
 * thread by glibc's count and these very functions are the ones the
 * program reaches: not when the executable or a library before us defines
 * clone, syscall or dlmopen (a sanitizer runtime, say), nor when
 * libodebug was dlopen()ed after libc (a thread may exist that we never
 * saw).  A clone issued by the program's own syscall instruction is not
 * seen at all (odebug-pthread(7), RELIABILITY.md).
 *
 * syscall() is also how libodebug itself makes its system calls: the
 * interposer is safe wherever they are made (a signal handler, the
 * helper's vfork child, before any constructor): it makes the call itself
 * until glibc's syscall() is found, and looks nothing up for it but a
 * clone.  A clone is always forwarded to glibc's syscall(), whose child
 * returns by popping its new stack (a C frame of ours would be gone).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <sys/single_threaded.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core.h"
#include "interpose.h"

typedef int clone_fn(int (*fn)(void *), void *stack, int flags, void *arg, ...);
typedef long syscall_fn(long nr, ...);
typedef void *dlmopen_fn(Lmid_t ns, const char *file, int mode);

static clone_fn *next_clone, *next___clone;
static syscall_fn *next_syscall;
static dlmopen_fn *next_dlmopen_234, *next_dlmopen_base;
static bool clone_seen;		/* for good: the constructor sets no flag after it */

/* Before the new thread exists: it may run the swap at once. */
static void another_thread(void)
{
	__atomic_store_n(&clone_seen, true, __ATOMIC_SEQ_CST);
	__atomic_store_n(&odebug_one_thread, false, __ATOMIC_SEQ_CST);
}

static bool shares_memory(long nr, long a1)
{
	if (nr == SYS_clone)
		return ((unsigned long)a1 & CLONE_VM) != 0;
#ifdef SYS_clone3
	/*
	 * Assumed to: its flags are in the caller's struct clone_args, which
	 * may be any pointer (the kernel answers EFAULT; reading it here would
	 * fault), and a clone3() that makes a process is rare.
	 */
	if (nr == SYS_clone3)
		return true;
#endif
	return false;
}

static void *lookup(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

static long raw_syscall(long nr, long a1, long a2, long a3, long a4, long a5, long a6)
{
	register long r10 __asm__("r10") = a4;
	register long r8 __asm__("r8") = a5;
	register long r9 __asm__("r9") = a6;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	if ((unsigned long)ret > -4096UL) {
		errno = (int)-ret;
		return -1;
	}
	return ret;
}

/*
 * Defined under names of our own, exported under glibc's by aliases: the
 * constructor compares what the program reaches with these addresses,
 * which a reference to the exported name would resolve to the same thing.
 */
static long odebug_i_syscall(long nr, ...)
{
	syscall_fn *next = __atomic_load_n(&next_syscall, __ATOMIC_RELAXED);
	long a1, a2, a3, a4, a5, a6;
	va_list ap;

	/* As glibc's: six words, whatever the call passed. */
	va_start(ap, nr);
	a1 = va_arg(ap, long);
	a2 = va_arg(ap, long);
	a3 = va_arg(ap, long);
	a4 = va_arg(ap, long);
	a5 = va_arg(ap, long);
	a6 = va_arg(ap, long);
	va_end(ap);
	if (shares_memory(nr, a1)) {
		another_thread();
		if (!next)
			next = lookup("syscall");
	}
	if (!next)
		return raw_syscall(nr, a1, a2, a3, a4, a5, a6);
	return next(nr, a1, a2, a3, a4, a5, a6);
}

static int forward_clone(clone_fn **slot, const char *name, int (*fn)(void *), void *stack,
			 int flags, void *arg, va_list ap)
{
	clone_fn *next = __atomic_load_n(slot, __ATOMIC_RELAXED);
	void *ptid = va_arg(ap, void *), *tls = va_arg(ap, void *), *ctid = va_arg(ap, void *);

	if (flags & CLONE_VM)
		another_thread();
	if (!next)
		next = (clone_fn *)lookup(name);
	if (!next) {
		errno = ENOSYS;
		return -1;
	}
	return next(fn, stack, flags, arg, ptid, tls, ctid);
}

static int odebug_i_clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
{
	va_list ap;
	int r;

	va_start(ap, arg);
	r = forward_clone(&next_clone, "clone", fn, stack, flags, arg, ap);
	va_end(ap);
	return r;
}

static int odebug_i___clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
{
	va_list ap;
	int r;

	va_start(ap, arg);
	r = forward_clone(&next___clone, "__clone", fn, stack, flags, arg, ap);
	va_end(ap);
	return r;
}

/*
 * dlmopen() at both of glibc's versions (as dlopen.c's dlopen): 2.34's
 * default, and GLIBC_2.3.4, libdl's, which programs linked before 2.34
 * are bound to.
 */
static dlmopen_fn *resolve_dlmopen(dlmopen_fn **slot, const char *version)
{
	dlmopen_fn *next;

	*(void **)&next = dlvsym(RTLD_NEXT, "dlmopen", version);
	if (!next) {
		dlerror();	/* the failed lookup is not the program's error */
		next = (dlmopen_fn *)lookup("dlmopen");
	}
	__atomic_store_n(slot, next, __ATOMIC_RELAXED);
	return next;
}

struct dlmopen_call {
	dlmopen_fn *next;
	Lmid_t ns;
};

static void *open_in(const char *file, int mode, void *ctx)
{
	struct dlmopen_call *c = ctx;

	return c->next(c->ns, file, mode);
}

/* The open searched as the caller at @ra would have it (dlcaller.c). */
static void *forward_dlmopen(dlmopen_fn **slot, const char *version, Lmid_t ns,
			     const char *file, int mode, const void *ra)
{
	struct dlmopen_call c = { __atomic_load_n(slot, __ATOMIC_RELAXED), ns };

	if (ns != LM_ID_BASE)
		another_thread();
	if (!c.next)
		c.next = resolve_dlmopen(slot, version);
	return c.next ? odebug_dlopen_as_caller(open_in, &c, file, mode, ra) : NULL;
}

void *odebug_i_dlmopen_234(Lmid_t ns, const char *file, int mode) ODEBUG_EXPORT;
void *odebug_i_dlmopen_234(Lmid_t ns, const char *file, int mode)
{
	return forward_dlmopen(&next_dlmopen_234, "GLIBC_2.34", ns, file, mode,
			       __builtin_return_address(0));
}
__asm__(".symver odebug_i_dlmopen_234,dlmopen@@GLIBC_2.34");

void *odebug_i_dlmopen_base(Lmid_t ns, const char *file, int mode) ODEBUG_EXPORT;
void *odebug_i_dlmopen_base(Lmid_t ns, const char *file, int mode)
{
	return forward_dlmopen(&next_dlmopen_base, "GLIBC_2.3.4", ns, file, mode,
			       __builtin_return_address(0));
}
__asm__(".symver odebug_i_dlmopen_base,dlmopen@GLIBC_2.3.4");

long syscall(long nr, ...) __attribute__((alias("odebug_i_syscall"))) ODEBUG_EXPORT;
int clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
	__attribute__((alias("odebug_i_clone"))) ODEBUG_EXPORT;
int __clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
	__attribute__((alias("odebug_i___clone"))) ODEBUG_EXPORT;

/* The program reaches @ours when it calls @name. */
static bool reached(const char *name, void *ours)
{
	return odebug_program_definition(name) == ours;
}

__attribute__((constructor(101))) static void clone_watch(void)
{
	bool ours = reached("clone", (void *)odebug_i_clone) &&
		    reached("__clone", (void *)odebug_i___clone) &&
		    reached("syscall", (void *)odebug_i_syscall) &&
		    reached("dlmopen", (void *)odebug_i_dlmopen_234);

	odebug_start_step("clone.c definitions");
	__atomic_store_n(&next_clone, (clone_fn *)lookup("clone"), __ATOMIC_RELAXED);
	__atomic_store_n(&next___clone, (clone_fn *)lookup("__clone"), __ATOMIC_RELAXED);
	__atomic_store_n(&next_syscall, (syscall_fn *)lookup("syscall"), __ATOMIC_RELAXED);
	resolve_dlmopen(&next_dlmopen_234, "GLIBC_2.34");
	resolve_dlmopen(&next_dlmopen_base, "GLIBC_2.3.4");
	odebug_start_step("clone.c lookups");
	/* Once a thread was seen, one thread never comes back (it may not have ended). */
	if (!ours || !__libc_single_threaded || __atomic_load_n(&clone_seen, __ATOMIC_SEQ_CST))
		return;
	__atomic_store_n(&odebug_one_thread, true, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&clone_seen, __ATOMIC_SEQ_CST))	/* a handler's clone, meanwhile */
		another_thread();
}
