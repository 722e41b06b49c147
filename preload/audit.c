/* SPDX-License-Identifier: MIT */
/*
 * audit.c - libodebug-audit.so, an rtld-audit(7) module for the odebug
 * launcher's --audit: the check of an unloaded module with its fixups.
 *
 * la_objclose() runs after a module's destructors and before its unmap,
 * so its data is still there and so are its descriptors and fixups: the
 * module's writable segments are checked exactly as released memory is
 * (debug_check_no_obj_freed in the program's libodebug: report with hint,
 * then fixup_free).  The dlclose() interposer, which runs after, then finds
 * nothing left.  A line naming the module follows the reports only when
 * one was printed (a repeat, a suppressed one or one beyond max_reports is
 * only counted).  It is called with the loader's lock held: the report path
 * must not wait for a lock that a thread waiting for the loader holds
 * (RELIABILITY.md).
 *
 * This module lives in its own link namespace, with its own libc; it calls
 * into the program's namespace only through the pointers it looks up in
 * the program's libodebug.  At exit the loader calls la_objclose() for
 * every object, the executable first: from then on nothing is checked.
 *
 * A report's backtrace starts at the caller of dlclose(): this module and
 * the loader are marked as skipped modules (debug_objects_skip_module),
 * and libodebug skips libc's dlclose() frames and its own interposer.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "odebug.h"

static struct link_map *odebug_map;	/* the program's libodebug */
static void (*check)(const void *addr, size_t size);
static size_t (*get_stats)(struct debug_objects_stats *stats, size_t size);
static bool (*skip_module)(const void *addr);
static int exiting, skipping;

__attribute__((visibility("default"))) unsigned int la_version(unsigned int version)
{
	return version < LAV_CURRENT ? version : LAV_CURRENT;
}

static int is_libodebug(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "libodebug.so", 12);
}

__attribute__((visibility("default"))) unsigned int
la_objopen(struct link_map *map, Lmid_t lmid, uintptr_t *cookie)
{
	*cookie = lmid == LM_ID_BASE ? (uintptr_t)map : 0;
	if (lmid == LM_ID_BASE && map->l_name && is_libodebug(map->l_name) && !odebug_map)
		odebug_map = map;
	return 0;
}

/*
 * Every preloaded object is relocated now, and the loader's lock is free:
 * a handle on the program's libodebug (a link_map of a preloaded object
 * has no search list for dlsym), and the two functions.
 */
__attribute__((visibility("default"))) void la_preinit(uintptr_t *cookie)
{
	void *h;

	(void)cookie;
	if (!odebug_map || check)
		return;
	h = dlmopen(LM_ID_BASE, odebug_map->l_name, RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return;
	*(void **)&get_stats = dlsym(h, "debug_objects_get_stats");
	*(void **)&check = dlsym(h, "debug_check_no_obj_freed");
	*(void **)&skip_module = dlsym(h, "debug_objects_skip_module");
}

__attribute__((visibility("default"))) unsigned int la_objclose(uintptr_t *cookie);

/*
 * Leave this module's frames and the loader's out of reports.  Done at the
 * first check, once libodebug tracks something: marking would start it,
 * and starting it here would dlopen libunwind inside dlclose().
 */
static void skip_loader(void)
{
	uintptr_t ldso = getauxval(AT_BASE);	/* the loader's ELF header */

	skipping = 1;
	if (!skip_module)
		return;
	skip_module((const void *)la_objclose);
	if (ldso)
		skip_module((const void *)ldso);
}

static void say(const char *a, const char *b, const char *c)
{
	ssize_t r;

	r = write(2, a, strlen(a));
	r = write(2, b, strlen(b));
	r = write(2, c, strlen(c));
	(void)r;
}

__attribute__((visibility("default"))) unsigned int la_objclose(uintptr_t *cookie)
{
	struct link_map *map = (struct link_map *)*cookie;
	struct debug_objects_stats before, after;
	const ElfW(Ehdr) *eh;
	const ElfW(Phdr) *ph;
	int i;

	if (!map || exiting)
		return 0;
	if (!map->l_prev) {		/* the executable: the process is exiting */
		exiting = 1;
		return 0;
	}
	if (!odebug_map || map == odebug_map || !map->l_name || !map->l_name[0])
		return 0;
	if (!check || !get_stats)
		return 0;
	/* The ELF header is mapped at the base of every shared object. */
	eh = (const ElfW(Ehdr) *)map->l_addr;
	if (!map->l_addr || memcmp(eh->e_ident, ELFMAG, SELFMAG))
		return 0;
	memset(&before, 0, sizeof(before));
	get_stats(&before, sizeof(before));
	if (!skipping && before.objs_allocated)	/* libodebug has started */
		skip_loader();
	ph = (const ElfW(Phdr) *)((const char *)eh + eh->e_phoff);
	for (i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_W))
			check((const void *)(map->l_addr + ph[i].p_vaddr), ph[i].p_memsz);
	memset(&after, 0, sizeof(after));
	get_stats(&after, sizeof(after));
	/* Only under a report printed here (not a repeat, suppressed or over max_reports). */
	if (after.printed > before.printed)
		say("ODEBUG: the object(s) above were in ", map->l_name,
		    ", unloaded by dlclose() (checked by libodebug-audit.so before the unmap)\n");
	return 0;
}
