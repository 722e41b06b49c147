/* SPDX-License-Identifier: MIT */
/*
 * definition.c - which definition of a function the program's calls
 * reach, for the start's questions about the program's allocator (free.c)
 * and its clone() (clone.c).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>

#include "internal.h"
#include "next.h"

/*
 * The definition of @name the program's calls reach (NULL if none).
 * dlsym(RTLD_DEFAULT) answers with the first symbol that has a value, and
 * a non-PIE executable that takes a function's address (node takes
 * malloc's) has one without defining it: its canonical PLT entry, an
 * undefined symbol that forwards to the first definition after the
 * executable in the global scope.  That one is found in the link map,
 * object by object: each object's own lookup starts with itself, and a
 * definition found in its dependencies is skipped (theirs come later).
 */
void *odebug_program_definition(const char *name)
{
	void *p = dlsym(RTLD_DEFAULT, name), *h, *q;
	const ElfW(Sym) *sym = NULL;
	struct link_map *l = NULL, *in = NULL;
	Dl_info info;

	if (!p || !dladdr1(p, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym ||
	    sym->st_shndx != SHN_UNDEF || !dladdr1(p, &info, (void **)&l, RTLD_DL_LINKMAP) || !l)
		return p;
	for (l = l->l_next; l; l = l->l_next) {
		if (!(h = dlopen(l->l_name, RTLD_NOLOAD | RTLD_LAZY)))
			continue;
		q = dlsym(h, name);
		dlclose(h);
		if (q && dladdr1(q, &info, (void **)&in, RTLD_DL_LINKMAP) && in == l &&
		    dladdr1(q, &info, (void **)&sym, RTLD_DL_SYMENT) && sym &&
		    sym->st_shndx != SHN_UNDEF)
			return q;
	}
	return NULL;
}
