/* SPDX-License-Identifier: MIT */
/*
 * dlclose.c - a module unloaded with active objects in its data or bss
 * (the kernel checks a module's memory when it is unloaded).
 *
 * Before the real dlclose(), the active trackers in the module's writable
 * segments are copied (lib/core/unload.c); after it, if the module is gone from
 * the link map, those still active are reported from the copy and every
 * tracker in the segments is dropped.  A dlclose() that only drops a
 * reference, and a module whose destructors deactivated their objects,
 * give no report.  Each successful call takes one of the handle's
 * references counted by preload/dlopen.c.  The code the module must keep
 * (lib/checks/held/held-module.c) is checked after the real call too, once the
 * module's destructors had their chance to release it.  No libodebug
 * lock is held across any loader call.
 *
 * Two versions, as glibc's: dlclose@@GLIBC_2.34, and the baseline node
 * (dlclose@GLIBC_2.2.5 on x86-64) that programs linked before glibc 2.34
 * (dlclose was libdl's) are bound to; each forwards to the next
 * definition of its own version.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <string.h>

#include "held-ext.h"
#include "core.h"
#include "next.h"

struct find {
	uintptr_t base;
	const char *name;
	struct odebug_unload *u;	/* NULL: only say whether it is there */
	bool found;
};

static int find_module(struct dl_phdr_info *info, size_t size, void *data)
{
	struct find *f = data;
	int i;

	(void)size;
	if (info->dlpi_addr != f->base || !info->dlpi_name ||
	    strcmp(info->dlpi_name, f->name))
		return 0;
	f->found = true;
	for (i = 0; f->u && i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W) ||
		    f->u->nranges == ODEBUG_UNLOAD_RANGES)
			continue;
		f->u->lo[f->u->nranges] = info->dlpi_addr + ph->p_vaddr;
		f->u->hi[f->u->nranges] = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
		f->u->nranges++;
	}
	return 1;
}

static int checked_dlclose(int (*next)(void *), void *handle)
{
	struct odebug_unload u;
	struct link_map *lm = NULL;
	struct find f;
	int ret;

	if (!odebug_tracking_any() || !odebug_opt.check_free ||
	    !*(void *volatile *)&handle)	/* declared nonnull, but callers err */
		return next(handle);
	if (dlinfo(handle, RTLD_DI_LINKMAP, &lm) || !lm || !lm->l_name || !lm->l_name[0])
		return next(handle);	/* the program itself: never unloaded */
	u.nranges = 0;
	strncpy(u.module, lm->l_name, sizeof(u.module) - 1);
	u.module[sizeof(u.module) - 1] = '\0';
	f = (struct find){ lm->l_addr, u.module, &u, false };
	dl_iterate_phdr(find_module, &f);
	odebug_unload_before(&u);
	ret = next(handle);
	if (ret || !u.any)
		return ret;
	f = (struct find){ f.base, u.module, NULL, false };
	dl_iterate_phdr(find_module, &f);
	if (!f.found)
		odebug_unload_after(&u);
	return ret;
}

/*
 * Decided on: the handle's count (lib/checks/held/held-opens.c) drops with each
 * successful call; started, the module's memory is checked, and its
 * code once its destructors have run (lib/checks/held/held-module.c).
 */
static int check_dlclose(int (*next)(void *), void *handle)
{
	struct odebug_held_module m;
	bool started, watch = false;
	int ret;

	if (likely(odebug_load(&odebug_mode) < ODEBUG_MODE_ON) || odebug_tls.guard)
		return next(handle);
	if (!*(void *volatile *)&handle)	/* declared nonnull, but callers err */
		return next(handle);
	started = odebug_load(&odebug_mode) == ODEBUG_MODE_ON;
	if (started)
		watch = odebug_held_dlclose_before(handle, &m);
	ret = started ? checked_dlclose(next, handle) : next(handle);
	if (ret)
		return ret;
	odebug_opens_closed(handle);
	if (started) {	/* the module may be gone, its addresses free for another's */
		odebug_descr_forget();
		odebug_unwind_forget();
	}
	if (watch)	/* its destructors ran: what still calls into it */
		odebug_held_dlclose_after(&m);
	return ret;
}

int odebug_dlclose_234(void *handle) ODEBUG_EXPORT;
int odebug_dlclose_234(void *handle)
{
	return check_dlclose(odebug_next_dlclose, handle);
}
__asm__(".symver odebug_dlclose_234,dlclose@@GLIBC_2.34");

int odebug_dlclose_base(void *handle) ODEBUG_EXPORT;
int odebug_dlclose_base(void *handle)
{
	return check_dlclose(odebug_next_dlclose_base, handle);
}
__asm__(".symver odebug_dlclose_base,dlclose@" ODEBUG_V_BASE);
