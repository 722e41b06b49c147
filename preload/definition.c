/* SPDX-License-Identifier: MIT */
/*
 * definition.c - which definition of a function the program's calls
 * reach, for the start's questions about the program's allocator (free.c)
 * and its clone() (clone.c).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <string.h>

#include "dynsym.h"
#include "core.h"
#include "next.h"

struct definition {
	const char *name;
	const ElfW(Sym) *sym;
	uintptr_t bias;
	const char *object;	/* its name: "" for the executable */
};

static int first_definition(struct dl_phdr_info *info, size_t size, void *data)
{
	struct definition *d = data;
	struct odebug_dynsyms s;

	(void)size;
	if (!odebug_dynsyms_of(info->dlpi_addr, odebug_dynamic_of(info), &s) ||
	    !(d->sym = odebug_dynsym_lookup(&s, d->name)))
		return 0;
	d->bias = info->dlpi_addr;
	d->object = info->dlpi_name;
	return 1;
}

/*
 * The definition of @name the program's calls reach (NULL if none): the
 * first object of the global scope that defines it, in link-map order.
 * Not dlsym(RTLD_DEFAULT), which answers with the first symbol that has a
 * value: a non-PIE executable that takes a function's address (node takes
 * malloc's) has one without defining it, its canonical PLT entry.  Each
 * object's own hash table answers (dladdr() would scan every symbol of
 * it: millions of instructions in node), and the symbol's value is the
 * address; an IFUNC's is the function the loader chose, asked of dlsym().
 * No dlopen() otherwise: ours would rescan for modules at each.
 */
void *odebug_program_definition(const char *name)
{
	struct definition d = { name, NULL, 0, NULL };
	void *h, *p = NULL;

	dl_iterate_phdr(first_definition, &d);
	if (!d.sym)
		return NULL;
	if (ELF64_ST_TYPE(d.sym->st_info) != STT_GNU_IFUNC)
		return (void *)(d.bias + d.sym->st_value);
	/* An IFUNC: the loader's answer, the function it chose. */
	h = dlopen(d.object && *d.object ? d.object : NULL, RTLD_LAZY | RTLD_NOLOAD);
	if (h) {
		p = dlsym(h, name);
		dlclose(h);
	}
	return p;
}

struct elsewhere {
	const char *name;
	uintptr_t self;		/* an address of ours */
	bool found;
};

static int defined_elsewhere(struct dl_phdr_info *info, size_t size, void *data)
{
	struct elsewhere *e = data;
	struct odebug_dynsyms s;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && e->self >= lo && e->self - lo < ph->p_memsz)
			return 0;	/* ours */
	}
	e->found = odebug_dynsyms_of(info->dlpi_addr, odebug_dynamic_of(info), &s) &&
		   odebug_dynsym_lookup_any(&s, e->name);
	return e->found;
}

/*
 * Does a loaded object other than libodebug define @name, at any version?
 * Asked before a lookup that may well fail (a C program has no operator
 * delete, no sanitizer): a failed dlsym() allocates its message, and the
 * first allocation of a process that never allocates (/bin/true) makes
 * its heap.
 */
bool odebug_defined_elsewhere(const char *name)
{
	struct elsewhere e = { name, (uintptr_t)odebug_defined_elsewhere, false };

	dl_iterate_phdr(defined_elsewhere, &e);
	return e.found;
}
