/* SPDX-License-Identifier: MIT */
/*
 * symbolize.c - naming a frame: function+offset, module+offset, file:line.
 *
 * dladdr names exported functions and every module.  When libodebug is
 * built with libdw (elfutils), it is dlopen'ed on the first report, never
 * in a process that reports nothing, and adds static functions and
 * file:line from debug information.  One Dwfl is kept for the process (its
 * per-module caches make later reports cheap) and used under the report
 * lock only, since a Dwfl is not thread-safe.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

#ifdef ODEBUG_HAVE_LIBDW
#include <elfutils/libdwfl.h>

#ifndef ODEBUG_LIBDW_SONAME
#define ODEBUG_LIBDW_SONAME "libdw.so.1"
#endif

static struct {
	__typeof__(dwfl_begin) *begin;
	__typeof__(dwfl_linux_proc_report) *proc_report;
	__typeof__(dwfl_report_begin) *report_begin;
	__typeof__(dwfl_report_end) *report_end;
	__typeof__(dwfl_addrmodule) *addrmodule;
	__typeof__(dwfl_module_addrinfo) *addrinfo;
	__typeof__(dwfl_module_getsrc) *getsrc;
	__typeof__(dwfl_module_addrdie) *addrdie;
	__typeof__(dwfl_lineinfo) *lineinfo;
	__typeof__(dwfl_linux_proc_find_elf) *find_elf;
	__typeof__(dwfl_standard_find_debuginfo) *find_debuginfo;
} dw;
static Dwfl_Callbacks callbacks;
static Dwfl *dwfl;
static int dw_state;	/* 0 untried, 1 loaded, -1 unavailable */
static pid_t dwfl_owner_pid;

static bool load_libdw(void)
{
	void *h;

	if (dw_state)
		return dw_state > 0;
	dw_state = -1;
	h = dlopen(ODEBUG_LIBDW_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return false;
#define SYM(field, name) \
	if (!(*(void **)&dw.field = dlsym(h, #name))) return false
	SYM(begin, dwfl_begin);
	SYM(proc_report, dwfl_linux_proc_report);
	SYM(report_begin, dwfl_report_begin);
	SYM(report_end, dwfl_report_end);
	SYM(addrmodule, dwfl_addrmodule);
	SYM(addrinfo, dwfl_module_addrinfo);
	SYM(getsrc, dwfl_module_getsrc);
	SYM(addrdie, dwfl_module_addrdie);
	SYM(lineinfo, dwfl_lineinfo);
	SYM(find_elf, dwfl_linux_proc_find_elf);
	SYM(find_debuginfo, dwfl_standard_find_debuginfo);
#undef SYM
	callbacks.find_elf = dw.find_elf;
	callbacks.find_debuginfo = dw.find_debuginfo;
	dw_state = 1;
	return true;
}

/* (Re)read the process's modules: at first use, after fork, after dlopen. */
static bool report_modules(void)
{
	if (!dwfl) {
		dwfl = dw.begin(&callbacks);
		if (!dwfl)
			return false;
	}
	dw.report_begin(dwfl);
	dwfl_owner_pid = getpid();
	if (dw.proc_report(dwfl, dwfl_owner_pid) != 0) {
		dw.report_end(dwfl, NULL, NULL);
		return false;
	}
	return dw.report_end(dwfl, NULL, NULL) == 0;
}

static Dwfl_Module *module_of(uintptr_t addr)
{
	Dwfl_Module *mod;

	if (!load_libdw())
		return NULL;
	if ((!dwfl || dwfl_owner_pid != getpid()) && !report_modules())
		return NULL;
	mod = dw.addrmodule(dwfl, addr);
	if (!mod && report_modules())	/* a module loaded since */
		mod = dw.addrmodule(dwfl, addr);
	return mod;
}

static void copy(char *dst, size_t size, const char *src)
{
	size_t n = strlen(src);

	if (n >= size)
		n = size - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

static void symbolize_dwarf(uintptr_t lookup, struct odebug_frame *f)
{
	Dwfl_Module *mod = module_of(lookup);
	Dwfl_Line *line = NULL;
	Dwarf_Addr bias, laddr = 0;
	GElf_Off off = 0;
	GElf_Sym sym;
	const char *name, *file;
	int lineno = 0;

	if (!mod)
		return;
	name = dw.addrinfo(mod, lookup, &off, &sym, NULL, NULL, NULL);
	if (name && !f->func[0]) {
		copy(f->func, sizeof(f->func), name);
		f->func_off = f->pc - (lookup - off);
	}
	/* Only inside a compilation unit: crt code has no lines of its own. */
	if (dw.addrdie(mod, lookup, &bias))
		line = dw.getsrc(mod, lookup);
	if (line && (file = dw.lineinfo(line, &laddr, &lineno, NULL, NULL, NULL)) &&
	    lineno > 0 && (!name || laddr >= lookup - off)) {
		/* (a line row before the function's start belongs to another) */
		copy(f->file, sizeof(f->file), file);
		f->line = (unsigned int)lineno;
	}
}
#endif /* ODEBUG_HAVE_LIBDW */

/* The main program's map has an empty or relative name in dladdr. */
static const char *module_path(const char *path)
{
	return path && *path == '/' ? path : odebug_exe_path();
}

/**
 * odebug_symbolize - name the code at @pc
 * @pc:		the address
 * @is_return:	@pc is a return address: look up the call instruction
 * @f:		filled in; names are copied, empty when unknown
 *
 * Called with the report lock held, never with a bucket lock.
 */
void odebug_symbolize(uintptr_t pc, bool is_return, struct odebug_frame *f)
{
	uintptr_t lookup = is_return && pc ? pc - 1 : pc;
	Dl_info info;
	bool found;

	memset(f, 0, sizeof(*f));
	f->pc = pc;
	odebug_guard_enter();
	found = pc && dladdr((void *)lookup, &info);
	if (found) {
		f->module = module_path(info.dli_fname);
		f->module_off = pc - (uintptr_t)info.dli_fbase;
		if (info.dli_sname && info.dli_saddr) {
			size_t n = strlen(info.dli_sname);

			if (n >= sizeof(f->func))
				n = sizeof(f->func) - 1;
			memcpy(f->func, info.dli_sname, n);
			f->func[n] = '\0';
			f->func_off = pc - (uintptr_t)info.dli_saddr;
		}
	}
#ifdef ODEBUG_HAVE_LIBDW
	if (found)
		symbolize_dwarf(lookup, f);
#endif
	odebug_guard_exit();
}
