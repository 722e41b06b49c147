/* SPDX-License-Identifier: MIT */
/*
 * dlopen.c - a library loaded at run time gets its annotation module
 * (lib/checks/modules.c): after a successful dlopen(), decided on, the known
 * libraries now in the process get their modules, and every object newly
 * loaded has its calls to wrapped functions redirected.
 *
 * Each handle returned is counted (lib/checks/held/held-opens.c), so that dlclose.c
 * knows which dlclose() drops the program's last reference.
 *
 * The scan runs after the real dlopen() returned: no libodebug lock is
 * held, and a dlopen() nested in a constructor holds only the loader's
 * lock, which the scan's own dlopen() takes recursively.  With ODEBUG
 * unset: one branch and a tail call.  The return value, errno and the
 * thread's dlerror() state (nothing failed: none) are glibc's.
 *
 * Two versions, as dlclose.c: dlopen@@GLIBC_2.34 and the baseline node
 * programs linked before glibc 2.34 (libdl's dlopen) are bound to.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>

#include "held-ext.h"
#include "core.h"
#include "modules.h"
#include "interpose.h"

static void *lazy_234(const char *file, int mode);
static void *lazy_base(const char *file, int mode);
static void *(*next_234)(const char *, int) = lazy_234;
static void *(*next_base)(const char *, int) = lazy_base;

/* Until resolved (a dlopen() from another library's constructor): look it up. */
static void *lazy_234(const char *file, int mode)
{
	*(void **)&next_234 = odebug_next_at("dlopen", "GLIBC_2.34");
	return next_234 ? next_234(file, mode) : NULL;
}

static void *lazy_base(const char *file, int mode)
{
	*(void **)&next_base = odebug_next_at("dlopen", ODEBUG_V_BASE);
	return next_base ? next_base(file, mode) : NULL;
}

static void *open_next(const char *file, int mode, void *next)
{
	return ((void *(*)(const char *, int))next)(file, mode);
}

/*
 * Decided on: the open searched as the caller at @ra would have it
 * (dlcaller.c: glibc would take libodebug for the caller), the handle
 * counted (lib/checks/held/held-opens.c), the annotation modules scanned.
 */
static void *scanned_dlopen(void *(*next)(const char *, int), const char *file, int mode,
			    const void *ra)
{
	void *handle = odebug_dlopen_as_caller(open_next, (void *)next, file, mode, ra);
	int saved = errno;

	if (handle && !odebug_tls.guard) {
		odebug_opens_add(handle, mode & RTLD_NODELETE);
		odebug_modules_scan();
	}
	errno = saved;
	return handle;
}

/* Unset: a tail call, so glibc sees the program's return address as the caller's. */
void *odebug_dlopen_234(const char *file, int mode) ODEBUG_EXPORT;
void *odebug_dlopen_234(const char *file, int mode)
{
	if (likely(odebug_load(&odebug_mode) < ODEBUG_MODE_ON))
		return next_234(file, mode);
	return scanned_dlopen(next_234, file, mode, __builtin_return_address(0));
}
__asm__(".symver odebug_dlopen_234,dlopen@@GLIBC_2.34");

void *odebug_dlopen_base(const char *file, int mode) ODEBUG_EXPORT;
void *odebug_dlopen_base(const char *file, int mode)
{
	if (likely(odebug_load(&odebug_mode) < ODEBUG_MODE_ON))
		return next_base(file, mode);
	return scanned_dlopen(next_base, file, mode, __builtin_return_address(0));
}
__asm__(".symver odebug_dlopen_base,dlopen@" ODEBUG_V_BASE);
