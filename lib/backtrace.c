/* SPDX-License-Identifier: MIT */
/*
 * backtrace.c - capturing and naming the culprit's frames.
 *
 * libunwind is dlopen'ed RTLD_LOCAL, and only when libodebug is enabled:
 * linked normally it would export its _Unwind_* symbols into the global
 * scope and take over the host program's C++ exception unwinding.  Capture
 * uses unw_backtrace (about 11 ns a frame); frames are named with dladdr at
 * report time, never with unw_get_proc_name, which maps the ELF file and
 * allocates for every frame.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <string.h>

#include "internal.h"

#ifndef ODEBUG_LIBUNWIND_SONAME
#define ODEBUG_LIBUNWIND_SONAME "libunwind.so.8"
#endif

static int (*unw_backtrace_fn)(void **buffer, int size);
static void *self_base;

void odebug_backtrace_init(void)
{
	Dl_info info;
	void *handle, *pcs[4];

	if (dladdr((void *)odebug_backtrace_init, &info))
		self_base = info.dli_fbase;
	handle = dlopen(ODEBUG_LIBUNWIND_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (handle)
		*(void **)&unw_backtrace_fn = dlsym(handle, "unw_backtrace");
	/*
	 * Prime it here, outside any release path: the first call maps
	 * libunwind's caches (and glibc's backtrace() dlopens libgcc_s).
	 */
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
	Dl_info info;
	int i;

	for (i = 0; i < n; i++)
		if (!dladdr(pcs[i], &info) || info.dli_fbase != self_base)
			break;
	return i;
}

static void put_module(struct odebug_buf *b, const Dl_info *info, uintptr_t pc)
{
	const char *path = info->dli_fname;

	/* The main program's map has an empty or relative name. */
	if (!path || *path != '/')
		path = odebug_exe_path();
	odebug_puts(b, path);
	odebug_putc(b, '+');
	odebug_put_hex(b, pc - (uintptr_t)info->dli_fbase);
}

/*
 * "name+0xoff" for @pc; with @with_module, " (module+0xoff)" too.  An
 * address without a symbol prints as itself.  @lookup is the address to
 * resolve (a return address minus one, so a call at a function's very end
 * is not named after the next function).
 */
static void put_symbol_at(struct odebug_buf *b, uintptr_t pc, uintptr_t lookup,
			  bool with_module)
{
	Dl_info info;
	bool found;

	odebug_guard_enter();
	found = pc && dladdr((void *)lookup, &info);
	odebug_guard_exit();
	if (!found) {
		odebug_put_hex(b, pc);
		return;
	}
	if (info.dli_sname && info.dli_saddr) {
		odebug_puts(b, info.dli_sname);
		odebug_putc(b, '+');
		odebug_put_hex(b, pc - (uintptr_t)info.dli_saddr);
	} else if (with_module) {
		odebug_puts(b, "??");
	} else {
		odebug_put_hex(b, pc);
	}
	if (with_module) {
		odebug_puts(b, " (");
		put_module(b, &info, pc);
		odebug_putc(b, ')');
	}
}

void odebug_put_symbol(struct odebug_buf *b, uintptr_t pc, bool with_module)
{
	put_symbol_at(b, pc, pc, with_module);
}

/* "    #3 0x55d0c0a81c40 in conn_close+0x2d (/usr/bin/app+0x1c40)\n" */
void odebug_put_frame(struct odebug_buf *b, int index, uintptr_t pc)
{
	odebug_puts(b, "    #");
	odebug_put_dec(b, (unsigned long)index);
	odebug_putc(b, ' ');
	odebug_put_hex(b, pc);
	odebug_puts(b, " in ");
	put_symbol_at(b, pc, pc ? pc - 1 : pc, true);
	odebug_putc(b, '\n');
}
