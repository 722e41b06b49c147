/* SPDX-License-Identifier: MIT */
/*
 * modules.c - annotation modules (modules/README.md): libodebug-<name>.so
 * loaded when the library it serves is in the process, its wrappers put
 * in the GOT slots every object calls the library's functions through.
 *
 * Runs from our constructor (decide(), under the loader's lock, which
 * dlopen() takes recursively) and from the dlopen() interposer after the
 * real call returned: never under a libodebug lock, never from free() or
 * a report.  One thread scans at a time; a scan asked for meanwhile (a
 * dlopen() on another thread, or from a constructor the scan's own
 * dlopen() runs) is done by that thread before it leaves.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "modules.h"
#include "fd.h"
#include "../modules/odebug-module.h"

#define MAX_SONAMES	4
#define MAX_HOOKS	64	/* per module; more are left unbound when lazy */

/* Which library each module serves: one row per module. */
static const struct known {
	const char *name;
	const char *sonames[MAX_SONAMES];
} known[] = {
	{ "libevent", { "libevent-2.1.so.7", "libevent_core-2.1.so.7" } },
	{ "libuv", { "libuv.so.1" } },
	{ "glib", { "libglib-2.0.so.0" } },
};
#define NKNOWN	(sizeof(known) / sizeof(known[0]))

static struct loaded {
	const struct odebug_module *mod;	/* NULL: not attached */
	uintptr_t base;				/* the module's load bias */
	bool tried;				/* loaded or failed: not again */
} loaded[NKNOWN];

static int busy, again;
static unsigned long long last_adds;
static void *(*real_dlopen)(const char *, int);

/* modules=: auto, none, or names separated by ','. */
static bool enabled(const char *name)
{
	const char *s = odebug_opt_str.modules;
	size_t n = strlen(name);

	if (!strcmp(s, "auto"))
		return true;
	while (*s) {
		size_t len = strcspn(s, ",");

		if (len == n && !memcmp(s, name, n))
			return true;
		s += len + (s[len] == ',');
	}
	return false;
}

/* An object's dynamic entry, relocated (glibc relocates most d_ptr's). */
static uintptr_t dyn_ptr(const struct dl_phdr_info *info, const ElfW(Dyn) *dyn,
			 ElfW(Sxword) tag)
{
	for (; dyn->d_tag != DT_NULL; dyn++) {
		if (dyn->d_tag != tag)
			continue;
		if (tag == DT_PLTRELSZ || tag == DT_RELASZ || tag == DT_PLTREL ||
		    dyn->d_un.d_ptr >= info->dlpi_addr)
			return dyn->d_un.d_ptr;
		return info->dlpi_addr + dyn->d_un.d_ptr;
	}
	return 0;
}

static const ElfW(Dyn) *dynamic_of(const struct dl_phdr_info *info)
{
	int i;

	for (i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			return (const ElfW(Dyn) *)(info->dlpi_addr +
						   info->dlpi_phdr[i].p_vaddr);
	return NULL;
}

/* The soname an object declares, or its file's base name. */
static const char *soname_of(const struct dl_phdr_info *info, const ElfW(Dyn) *dyn)
{
	const char *strtab = (const char *)dyn_ptr(info, dyn, DT_STRTAB);
	const char *slash;
	const ElfW(Dyn) *d;

	for (d = dyn; strtab && d->d_tag != DT_NULL; d++)
		if (d->d_tag == DT_SONAME)
			return strtab + d->d_un.d_val;
	slash = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
	return slash ? slash + 1 : info->dlpi_name;
}

#if defined(__x86_64__)
#define R_SLOT(t)	((t) == R_X86_64_JUMP_SLOT || (t) == R_X86_64_GLOB_DAT)
#elif defined(__aarch64__)
#define R_SLOT(t)	((t) == R_AARCH64_JUMP_SLOT || (t) == R_AARCH64_GLOB_DAT)
#elif defined(__riscv) && __riscv_xlen == 64
/* RISC-V fills GOT entries with R_RISCV_64 (data pointers to it too). */
#define R_SLOT(t)	((t) == R_RISCV_JUMP_SLOT || (t) == R_RISCV_64)
#else
#define R_SLOT(t)	0	/* no redirection on this architecture */
#endif

struct patch {
	const struct odebug_hook *hook;		/* the one being placed */
	void *global;				/* what the name resolves to */
	uintptr_t relro_lo, relro_hi;
	uintptr_t self_lo, self_hi;		/* the object's own extent */
};

/* Point one slot at the wrapper, through a RELRO page if it is one. */
static void put_slot(struct patch *p, void **slot)
{
	size_t psz = (size_t)getpagesize();
	uintptr_t page = (uintptr_t)slot & ~(uintptr_t)(psz - 1);
	bool ro = (uintptr_t)slot >= p->relro_lo && (uintptr_t)slot < p->relro_hi;

	if (ro && mprotect((void *)page, psz, PROT_READ | PROT_WRITE))
		return;
	__atomic_store_n(slot, p->hook->wrapper, __ATOMIC_RELEASE);
	if (ro)
		mprotect((void *)page, psz, PROT_READ);
}

/*
 * A slot is the library's function when it holds its address (bound), or,
 * not yet bound (lazy), when it points into its own object's PLT and the
 * name resolves to the library's function.
 */
static bool slot_is_real(const struct patch *p, void *v)
{
	if (v == *p->hook->real)
		return true;
	return (uintptr_t)v >= p->self_lo && (uintptr_t)v < p->self_hi &&
	       p->global == *p->hook->real;
}

/* Every slot of one relocation table that calls p->hook's function. */
static void patch_relocs(const struct dl_phdr_info *info, struct patch *p,
			 const ElfW(Sym) *symtab, const char *strtab,
			 const ElfW(Rela) *rel, size_t size)
{
	size_t i, n = size / sizeof(*rel);

	for (i = 0; rel && i < n; i++) {
		void **slot = (void **)(info->dlpi_addr + rel[i].r_offset);
		const char *name;

		if (!R_SLOT(ELF64_R_TYPE(rel[i].r_info)))
			continue;
		name = strtab + symtab[ELF64_R_SYM(rel[i].r_info)].st_name;
		if (strcmp(name, p->hook->symbol) || *slot == p->hook->wrapper ||
		    !slot_is_real(p, *slot))
			continue;
		put_slot(p, slot);
	}
}

/* One pass over the loaded objects (visit()'s state). */
struct scan {
	uintptr_t self;			/* libodebug's load bias */
	bool want[NKNOWN];		/* a module to load */
	char path[NKNOWN][ODEBUG_OPT_STRLEN];	/* the library it serves */
	void *global[NKNOWN][MAX_HOOKS];	/* each hook's name, resolved */
	unsigned long long adds;
};

/* A module's own slots are left alone (it calls reals, never by name). */
static bool is_module(uintptr_t base)
{
	size_t m;

	for (m = 0; m < NKNOWN; m++)
		if (loaded[m].mod && loaded[m].base == base)
			return true;
	return false;
}

/* One object: a known library to serve, and its slots to redirect. */
static int visit(struct dl_phdr_info *info, size_t size, void *data)
{
	struct scan *s = data;
	const ElfW(Dyn) *dyn = dynamic_of(info);
	const ElfW(Sym) *symtab;
	const char *strtab, *soname;
	struct patch p = { 0 };
	uintptr_t pltrel;
	size_t m, k;
	int i;

	if (size >= offsetof(struct dl_phdr_info, dlpi_adds) + sizeof(info->dlpi_adds))
		s->adds = info->dlpi_adds;
	if (!dyn || info->dlpi_addr == s->self || is_module(info->dlpi_addr))
		return 0;
	soname = soname_of(info, dyn);
	for (m = 0; soname && m < NKNOWN; m++)
		for (k = 0; k < MAX_SONAMES && known[m].sonames[k]; k++)
			if (!loaded[m].tried && !s->want[m] && enabled(known[m].name) &&
			    !strcmp(soname, known[m].sonames[k]) &&
			    strlen(info->dlpi_name) < ODEBUG_OPT_STRLEN) {
				s->want[m] = true;
				strcpy(s->path[m], info->dlpi_name);
			}
	symtab = (const ElfW(Sym) *)dyn_ptr(info, dyn, DT_SYMTAB);
	strtab = (const char *)dyn_ptr(info, dyn, DT_STRTAB);
	/* RELA only (x86-64, aarch64, riscv64); no PLT (-fno-plt): GOT alone. */
	pltrel = dyn_ptr(info, dyn, DT_PLTREL);
	if (!symtab || !strtab || (pltrel && pltrel != DT_RELA))
		return 0;
	p.self_lo = ~(uintptr_t)0;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;

		if (ph->p_type == PT_GNU_RELRO)
			p.relro_lo = lo, p.relro_hi = hi;
		if (ph->p_type == PT_LOAD) {
			p.self_lo = lo < p.self_lo ? lo : p.self_lo;
			p.self_hi = hi > p.self_hi ? hi : p.self_hi;
		}
	}
	for (m = 0; m < NKNOWN; m++) {
		const struct odebug_hook *h = loaded[m].mod ? loaded[m].mod->hooks : NULL;

		for (k = 0; h && h[k].symbol; k++) {
			if (!h[k].wrapper)
				continue;
			p.hook = &h[k];
			p.global = k < MAX_HOOKS ? s->global[m][k] : NULL;
			patch_relocs(info, &p, symtab, strtab,
				     (const ElfW(Rela) *)dyn_ptr(info, dyn, DT_JMPREL),
				     dyn_ptr(info, dyn, DT_PLTRELSZ));
			patch_relocs(info, &p, symtab, strtab,
				     (const ElfW(Rela) *)dyn_ptr(info, dyn, DT_RELA),
				     dyn_ptr(info, dyn, DT_RELASZ));
		}
	}
	return 0;
}

/* dst = a b c d (NULL ends), if it fits in cap; false otherwise. */
static bool concat(char *dst, size_t cap, const char *a, const char *b,
		   const char *c, const char *d)
{
	const char *part[] = { a, b, c, d };
	size_t i, n = 0, len;

	for (i = 0; i < 4 && part[i]; i++) {
		len = strlen(part[i]);
		if (n + len >= cap)
			return false;
		memcpy(dst + n, part[i], len);
		n += len;
	}
	dst[n] = '\0';
	return true;
}

/*
 * Where libodebug-<name>.so is, first hit: module_path, else
 * ODEBUG_MODULE_PATH (the file, or the build tree's <name>/ folder), then
 * odebug-modules/ beside libodebug.
 */
static bool module_file(char *dst, size_t cap, const char *name, const char *self)
{
	char dir[ODEBUG_OPT_STRLEN + 32], sub[64];
	const char *path = odebug_opt_str.module_path;
	const char *slash = self ? strrchr(self, '/') : NULL;
	size_t n = slash ? (size_t)(slash - self) : 0;

	if (!path || !*path)
		path = odebug_getenv("ODEBUG_MODULE_PATH");	/* a build tree's launcher */
	if (path && *path) {
		if (concat(dst, cap, path, "/libodebug-", name, ".so") && !access(dst, R_OK))
			return true;
		if (concat(sub, sizeof(sub), "/", name, "/libodebug-", NULL) &&
		    concat(dst, cap, path, sub, name, ".so") && !access(dst, R_OK))
			return true;
	}
	if (!n || n + 16 >= sizeof(dir))
		return false;
	memcpy(dir, self, n);
	memcpy(dir + n, "/odebug-modules", 16);
	return concat(dst, cap, dir, "/libodebug-", name, ".so") && !access(dst, R_OK);
}

/*
 * What a module may call back (odebug_module.services): the watches of
 * descriptors, kept by the descriptor family (lib/checks/fd/watch.c).
 */
static const struct odebug_services services = {
	.version = ODEBUG_SERVICES_VERSION,
	.watch_begin = odebug_fd_watch_begin,
	.watch_end = odebug_fd_watch_end,
};

/* Load one module and resolve its hooks in the library it serves (all or none). */
static void attach(size_t m, const char *libpath, const char *self)
{
	char file[ODEBUG_OPT_STRLEN + 64];
	const struct odebug_module *mod;
	const struct odebug_hook *h;
	void *handle, *lib;
	Dl_info di;

	loaded[m].tried = true;
	if (!module_file(file, sizeof(file), known[m].name, self)) {
		if (odebug_opt.verbosity)
			odebug_message("no module libodebug-", known[m].name, ".so found for ",
				       libpath, " (module_path, ODEBUG_MODULE_PATH)", (char *)NULL);
		return;
	}
	handle = real_dlopen(file, RTLD_NOW | RTLD_LOCAL);
	if (!handle) {
		odebug_message("cannot load ", file, ": ", dlerror(), (char *)NULL);
		return;
	}
	mod = dlsym(handle, "odebug_module");
	lib = real_dlopen(libpath, RTLD_LAZY | RTLD_NOLOAD);
	if (!mod || mod->abi != ODEBUG_MODULE_ABI || strcmp(mod->name, known[m].name) ||
	    !lib) {
		odebug_message(file, ": no odebug_module of this version for ",
			       known[m].name, "; not used", (char *)NULL);
		dlerror();
		return;
	}
	for (h = mod->hooks; h->symbol; h++)
		if (!(*h->real = dlsym(lib, h->symbol))) {
			odebug_message(file, ": ", libpath, " has no ", h->symbol,
				       "; module not used", (char *)NULL);
			dlerror();
			return;
		}
	if (mod->services)
		mod->services(&services);
	if (mod->attach)
		mod->attach();
	if (dladdr((const void *)mod, &di))
		loaded[m].base = (uintptr_t)di.dli_fbase;
	for (h = mod->hooks; h->symbol; h++)
		if (h->wrapper) {
			/* Reports and origins name the program's call. */
			odebug_backtrace_skip_module(h->wrapper, true);
			break;
		}
	__atomic_store_n(&loaded[m].mod, mod, __ATOMIC_RELEASE);
	if (odebug_opt.verbosity)
		odebug_message("module ", known[m].name, " attached: ", file, " for ", libpath,
			       (char *)NULL);
}

/* libodebug itself: its load bias and file, found once. */
static uintptr_t self_bias;
static const char *self_file;

static int find_self(struct dl_phdr_info *info, size_t size, void *data)
{
	uintptr_t me = (uintptr_t)data;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && me >= lo && me - lo < ph->p_memsz) {
			self_bias = info->dlpi_addr;
			self_file = info->dlpi_name;
			return 1;
		}
	}
	return 0;
}

/* One pass: find the libraries to serve, load their modules, redirect. */
static bool scan_once(void)
{
	struct scan s;
	size_t m, k;
	bool any = false;

	memset(&s, 0, sizeof(s));
	if (!self_file)
		dl_iterate_phdr(find_self, (void *)scan_once);
	if (!self_file)
		return false;
	s.self = self_bias;
	dl_iterate_phdr(visit, &s);
	for (m = 0; m < NKNOWN; m++)
		if (s.want[m]) {
			attach(m, s.path[m], self_file);
			any = any || loaded[m].mod;
		}
	if (!any && s.adds == last_adds)
		return false;
	for (m = 0; m < NKNOWN; m++)
		for (k = 0; loaded[m].mod && loaded[m].mod->hooks[k].symbol && k < MAX_HOOKS; k++)
			s.global[m][k] = dlsym(RTLD_DEFAULT, loaded[m].mod->hooks[k].symbol);
	dlerror();
	memset(s.want, 0, sizeof(s.want));
	dl_iterate_phdr(visit, &s);	/* redirect, the new modules' slots too */
	last_adds = s.adds;
	return true;
}

/**
 * odebug_modules_scan - serve every known library now in the process
 *
 * From decide() and after each successful dlopen(), decided on only.
 */
void odebug_modules_scan(void)
{
	if (!strcmp(odebug_opt_str.modules, "none"))
		return;
	if (!real_dlopen && !(*(void **)&real_dlopen = dlsym(RTLD_NEXT, "dlopen")))
		*(void **)&real_dlopen = dlsym(RTLD_DEFAULT, "dlopen");
	__atomic_store_n(&again, 1, __ATOMIC_RELEASE);
	if (__atomic_exchange_n(&busy, 1, __ATOMIC_ACQ_REL))
		return;		/* the scanning thread sees again and rescans */
	while (__atomic_exchange_n(&again, 0, __ATOMIC_ACQ_REL))
		scan_once();
	__atomic_store_n(&busy, 0, __ATOMIC_RELEASE);
	/* A request between the last pass and the release: take it. */
	if (__atomic_load_n(&again, __ATOMIC_ACQUIRE) &&
	    !__atomic_exchange_n(&busy, 1, __ATOMIC_ACQ_REL)) {
		while (__atomic_exchange_n(&again, 0, __ATOMIC_ACQ_REL))
			scan_once();
		__atomic_store_n(&busy, 0, __ATOMIC_RELEASE);
	}
}

/*
 * The report's holder line from the module whose descriptor @descr is
 * (odebug_module.describe), for the report.  Reads loaded[] only: a
 * module, once attached, stays loaded.
 */
static bool describe(const struct debug_obj_descr *descr, void *addr, char *buf, size_t cap)
{
	for (size_t m = 0; m < NKNOWN; m++) {
		const struct odebug_module *mod = __atomic_load_n(&loaded[m].mod, __ATOMIC_ACQUIRE);

		if (mod && mod->describe && mod->describe(descr, addr, buf, cap))
			return true;
	}
	return false;
}

/*
 * The served library's word on an ACTIVE object of a module's descriptor
 * (odebug_module.released), asked before a report: true when the library
 * let it go.  Reads loaded[] only, like describe.
 */
static bool released(const struct debug_obj_descr *descr, void *addr, bool gone)
{
	for (size_t m = 0; m < NKNOWN; m++) {
		const struct odebug_module *mod = __atomic_load_n(&loaded[m].mod, __ATOMIC_ACQUIRE);

		if (mod && mod->released && mod->released(descr, addr, gone))
			return true;
	}
	return false;
}

/* Is @o's memory gone or reused (a frame returned, a module unloaded)? */
static bool snapshot_gone(const struct odebug_snapshot *o)
{
	return o->dead || (o->flags & (ODEBUG_SNAP_FRAME_GONE | ODEBUG_SNAP_UNLOADED));
}

static bool modules_released(const struct odebug_snapshot *o)
{
	return released(o->descr, (void *)o->addr, snapshot_gone(o));
}

/* Only while the object's memory is its own: a module reads it. */
static bool modules_describe(const struct odebug_snapshot *o, char *buf, size_t cap)
{
	return !snapshot_gone(o) && describe(o->descr, (void *)o->addr, buf, cap);
}

ODEBUG_CHECKER(modules) = {
	.name = "modules",
	.released = modules_released,
	.describe = modules_describe,
};
