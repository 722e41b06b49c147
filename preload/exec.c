/* SPDX-License-Identifier: MIT */
/*
 * exec.c - the end-of-run output before an exec replaces the process image.
 *
 * An exec ends the image as exit() does but runs no destructor, so the
 * summary, report_active_at_exit's reports and print_stats would be lost;
 * odebug_exit_before_exec() (lib/start/exit.c) writes them first.  An exec
 * that fails leaves the process running: the output is written again (at
 * the next exec or at exit) only if a warning was counted since.
 *
 * There is no one place to catch: glibc's exec functions call its hidden
 * __execve, __execvpe or the execveat system call, never an exported exec
 * function (libc.so.6 has no relocation for any of them), so each one is
 * interposed: execve, execv, execvp, execvpe, execl, execle, execlp,
 * fexecve, execveat.  posix_spawn, system and popen keep the caller's image
 * and are left alone.  Each forwards to the next definition of its own name
 * with the same arguments; execl, execle and execlp gather their arguments
 * on the stack (as glibc does) and forward to execv, execve and execvp.
 * Disabled, each is one branch and a tail call (the execl* functions gather
 * their arguments first: a variadic call cannot be forwarded).  Return
 * values and errno are the next definition's.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "start.h"

typedef int execve_fn(const char *, char *const[], char *const[]);
typedef int execv_fn(const char *, char *const[]);
typedef int fexecve_fn(int, char *const[], char *const[]);
typedef int execveat_fn(int, const char *, char *const[], char *const[], int);

/*
 * The next definition of @name, into *@slot; @fallback if there is none
 * (the system call for execve and execveat, which glibc has only since
 * 2.34; the others glibc has always had, and their absence ends the
 * process with one line rather than a jump to nowhere).
 */
static void resolve(void **slot, const char *name, void *fallback)
{
	void *fn = dlsym(RTLD_NEXT, name);

	if (!fn && !fallback) {
		odebug_message("cannot find the next ", name, "; aborting", (char *)NULL);
		abort();
	}
	__atomic_store_n(slot, fn ? fn : fallback, __ATOMIC_RELEASE);
}

static int raw_execve(const char *path, char *const argv[], char *const envp[])
{
	return (int)syscall(SYS_execve, path, argv, envp);
}

static int raw_execveat(int dirfd, const char *path, char *const argv[],
			char *const envp[], int flags)
{
	return (int)syscall(SYS_execveat, dirfd, path, argv, envp, flags);
}

/*
 * Each next_<name> starts as a stub that finds the next definition and
 * calls it; our constructor finds them all first, so an exec from a
 * signal handler, or from a vfork() child, never reaches the loader.
 */
#define LAZY(name, type, fallback, params, args)				\
	static type lazy_##name;						\
	static type *next_##name = lazy_##name;					\
	static int lazy_##name params						\
	{									\
		resolve((void **)&next_##name, #name, (void *)(fallback));	\
		return next_##name args;					\
	}

LAZY(execve, execve_fn, raw_execve, (const char *p, char *const a[], char *const e[]), (p, a, e))
LAZY(execvpe, execve_fn, NULL, (const char *p, char *const a[], char *const e[]), (p, a, e))
LAZY(execv, execv_fn, NULL, (const char *p, char *const a[]), (p, a))
LAZY(execvp, execv_fn, NULL, (const char *p, char *const a[]), (p, a))
LAZY(fexecve, fexecve_fn, NULL, (int fd, char *const a[], char *const e[]), (fd, a, e))
LAZY(execveat, execveat_fn, raw_execveat,
     (int fd, const char *p, char *const a[], char *const e[], int f), (fd, p, a, e, f))

/* Always, enabled or not. */
__attribute__((constructor)) static void resolve_exec(void)
{
	resolve((void **)&next_execve, "execve", (void *)raw_execve);
	resolve((void **)&next_execvpe, "execvpe", NULL);
	resolve((void **)&next_execv, "execv", NULL);
	resolve((void **)&next_execvp, "execvp", NULL);
	resolve((void **)&next_fexecve, "fexecve", NULL);
	resolve((void **)&next_execveat, "execveat", (void *)raw_execveat);
}

/* Enabled: what our destructor would print, now (not inside our own code). */
static void before_exec(void)
{
	int saved_errno = errno;

	if (odebug_tls.guard == 0)
		odebug_exit_before_exec();
	errno = saved_errno;
}

/* Disabled, or not decided yet: forward at once. */
static inline bool exec_quiet(void)
{
	return odebug_load(&odebug_mode) < ODEBUG_MODE_ON;
}

/*
 * Each forwards to the next definition of its own name (the execl*
 * functions below reach these directly, not through our exported names).
 */
static int run_execve(const char *path, char *const argv[], char *const envp[])
{
	if (likely(exec_quiet()))
		return next_execve(path, argv, envp);
	before_exec();
	return next_execve(path, argv, envp);
}

static int run_execv(const char *path, char *const argv[])
{
	if (likely(exec_quiet()))
		return next_execv(path, argv);
	before_exec();
	return next_execv(path, argv);
}

static int run_execvp(const char *file, char *const argv[])
{
	if (likely(exec_quiet()))
		return next_execvp(file, argv);
	before_exec();
	return next_execvp(file, argv);
}

ODEBUG_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	return run_execve(path, argv, envp);
}

ODEBUG_EXPORT int execv(const char *path, char *const argv[])
{
	return run_execv(path, argv);
}

ODEBUG_EXPORT int execvp(const char *file, char *const argv[])
{
	return run_execvp(file, argv);
}

ODEBUG_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	if (likely(exec_quiet()))
		return next_execvpe(file, argv, envp);
	before_exec();
	return next_execvpe(file, argv, envp);
}

ODEBUG_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	if (likely(exec_quiet()))
		return next_fexecve(fd, argv, envp);
	before_exec();
	return next_fexecve(fd, argv, envp);
}

ODEBUG_EXPORT int execveat(int dirfd, const char *path, char *const argv[],
			   char *const envp[], int flags)
{
	if (likely(exec_quiet()))
		return next_execveat(dirfd, path, argv, envp, flags);
	before_exec();
	return next_execveat(dirfd, path, argv, envp, flags);
}

/*
 * The execl* functions: the arguments after @arg up to the NULL (E2BIG past
 * INT_MAX, as glibc), gathered in an array on the stack; execle's
 * environment follows the NULL.
 */
enum list_exec { LIST_EXECL, LIST_EXECLP, LIST_EXECLE };

static ptrdiff_t count_args(va_list ap)
{
	ptrdiff_t argc;

	for (argc = 1; va_arg(ap, const char *); argc++)
		if (argc == INT_MAX)
			return -1;
	return argc;
}

static int list_exec(enum list_exec kind, const char *path, const char *arg, va_list ap)
{
	va_list count;
	ptrdiff_t argc, i;

	va_copy(count, ap);
	argc = count_args(count);
	va_end(count);
	if (argc < 0) {
		errno = E2BIG;
		return -1;
	}
	char *argv[argc + 1];

	argv[0] = (char *)arg;
	for (i = 1; i <= argc; i++)
		argv[i] = va_arg(ap, char *);	/* argv[argc] is the NULL */
	if (kind == LIST_EXECLE)
		return run_execve(path, argv, va_arg(ap, char *const *));
	return kind == LIST_EXECLP ? run_execvp(path, argv) : run_execv(path, argv);
}

/* execl, execlp, execle: their variadic arguments, to list_exec(). */
#define LIST_EXEC(name, kind)							\
	ODEBUG_EXPORT int name(const char *path, const char *arg, ...)		\
	{									\
		va_list ap;							\
		int r;								\
										\
		va_start(ap, arg);						\
		r = list_exec(kind, path, arg, ap);				\
		va_end(ap);							\
		return r;							\
	}
LIST_EXEC(execl, LIST_EXECL)
LIST_EXEC(execlp, LIST_EXECLP)
LIST_EXEC(execle, LIST_EXECLE)
