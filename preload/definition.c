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

#include "internal.h"
#include "next.h"

/* An object's dynamic symbol table, as its dynamic section gives it. */
struct dynsyms {
	const ElfW(Sym) *sym;
	const char *str;
	const ElfW(Half) *versym;
	const uint32_t *gnu_hash, *hash;
};

/*
 * glibc relocates the d_ptr entries of a loaded object's dynamic section
 * in place, except where that section is read-only (the vDSO's): an
 * address below the load base is still an offset.
 */
static const void *dyn_ptr(const struct link_map *l, ElfW(Addr) p)
{
	return (const void *)(p < l->l_addr ? l->l_addr + p : p);
}

static bool dynsyms_of(const struct link_map *l, struct dynsyms *s)
{
	const ElfW(Dyn) *d;

	memset(s, 0, sizeof(*s));
	for (d = l->l_ld; d && d->d_tag != DT_NULL; d++) {
		if (d->d_tag == DT_SYMTAB)
			s->sym = dyn_ptr(l, d->d_un.d_ptr);
		else if (d->d_tag == DT_STRTAB)
			s->str = dyn_ptr(l, d->d_un.d_ptr);
		else if (d->d_tag == DT_VERSYM)
			s->versym = dyn_ptr(l, d->d_un.d_ptr);
		else if (d->d_tag == DT_GNU_HASH)
			s->gnu_hash = dyn_ptr(l, d->d_un.d_ptr);
		else if (d->d_tag == DT_HASH)
			s->hash = dyn_ptr(l, d->d_un.d_ptr);
	}
	return s->sym && s->str && (s->gnu_hash || s->hash);
}

/*
 * Is symbol @i @name's definition, of its default version?  An undefined
 * symbol with a value is a non-PIE executable's canonical PLT entry, a
 * hidden version (versym bit 15) one that unversioned lookups pass over.
 */
static bool defines(const struct dynsyms *s, uint32_t i, const char *name)
{
	const ElfW(Sym) *sym = &s->sym[i];

	return sym->st_shndx != SHN_UNDEF && sym->st_value && !strcmp(s->str + sym->st_name, name) &&
	       !(s->versym && (s->versym[i] & 0x8000));
}

static const ElfW(Sym) *gnu_lookup(const struct dynsyms *s, const char *name)
{
	const uint32_t *h = s->gnu_hash;
	uint32_t nbuckets = h[0], symoffset = h[1], bloom_size = h[2], shift = h[3];
	const ElfW(Addr) *bloom = (const void *)&h[4];
	const uint32_t *buckets = (const void *)&bloom[bloom_size], *chain = &buckets[nbuckets];
	const unsigned int bits = sizeof(ElfW(Addr)) * 8;
	uint32_t gh = 5381, i;
	const unsigned char *c;
	ElfW(Addr) mask;

	for (c = (const unsigned char *)name; *c; c++)
		gh = gh * 33 + *c;
	if (!nbuckets || !bloom_size)
		return NULL;
	mask = ((ElfW(Addr))1 << (gh % bits)) | ((ElfW(Addr))1 << ((gh >> shift) % bits));
	if ((bloom[(gh / bits) % bloom_size] & mask) != mask)
		return NULL;
	for (i = buckets[gh % nbuckets]; i >= symoffset && i; i++) {
		uint32_t ch = chain[i - symoffset];

		if ((ch | 1) == (gh | 1) && defines(s, i, name))
			return &s->sym[i];
		if (ch & 1)
			break;
	}
	return NULL;
}

static const ElfW(Sym) *sysv_lookup(const struct dynsyms *s, const char *name)
{
	const uint32_t *h = s->hash, *bucket = &h[2], *chain = &bucket[h[0]];
	uint32_t hv = 0, g, i, steps = 0;
	const unsigned char *c;

	for (c = (const unsigned char *)name; *c; c++) {
		hv = (hv << 4) + *c;
		g = hv & 0xf0000000u;
		hv ^= g >> 24;
		hv &= ~g;
	}
	if (!h[0])
		return NULL;
	for (i = bucket[hv % h[0]]; i && i < h[1] && steps++ < h[1]; i = chain[i])
		if (defines(s, i, name))
			return &s->sym[i];
	return NULL;
}

/*
 * The definition of @name the program's calls reach (NULL if none): the
 * first object of the global scope that defines it, in link-map order.
 * Not dlsym(RTLD_DEFAULT), which answers with the first symbol that has a
 * value: a non-PIE executable that takes a function's address (node takes
 * malloc's) has one without defining it, its canonical PLT entry.  Each
 * object's own hash table answers (dladdr() would scan every symbol of
 * it: millions of instructions in node); dlsym() of the object found
 * gives the address, an IFUNC's resolved (the symbol's value where the
 * loader does not know the object by name, as the vDSO).
 */
void *odebug_program_definition(const char *name)
{
	struct link_map *l = NULL;
	const ElfW(Sym) *sym;
	struct dynsyms s;
	void *main = dlopen(NULL, RTLD_LAZY | RTLD_NOLOAD), *h, *p = NULL;

	if (!main || dlinfo(main, RTLD_DI_LINKMAP, &l) || !l) {
		if (main)
			dlclose(main);
		return dlsym(RTLD_DEFAULT, name);
	}
	for (; l; l = l->l_next) {
		if (!dynsyms_of(l, &s) ||
		    !(sym = s.gnu_hash ? gnu_lookup(&s, name) : sysv_lookup(&s, name)))
			continue;
		h = l->l_name && *l->l_name ? dlopen(l->l_name, RTLD_LAZY | RTLD_NOLOAD) : main;
		if (h) {
			p = dlsym(h, name);
			if (h != main)
				dlclose(h);
		} else if (ELF64_ST_TYPE(sym->st_info) != STT_GNU_IFUNC) {
			p = (void *)(l->l_addr + sym->st_value);
		}
		break;
	}
	dlclose(main);
	return p;
}
