/* SPDX-License-Identifier: MIT */
/*
 * dynsym.c - an object's dynamic symbols, looked up in its own hash table
 * (dynsym.h).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>

#include "dynsym.h"
#include "base.h"

/* The dynamic section of the object @info describes, NULL if none. */
const ElfW(Dyn) *odebug_dynamic_of(const struct dl_phdr_info *info)
{
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			return (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	return NULL;
}

/*
 * glibc relocates the d_ptr entries of a loaded object's dynamic section
 * in place, except where that section is read-only (the vDSO's): an
 * address below the load base is still an offset.
 */
static const void *dyn_ptr(uintptr_t bias, ElfW(Addr) p)
{
	return (const void *)(p < bias ? bias + p : p);
}

/* The dynamic symbol table of the object loaded at @bias whose dynamic section is @dyn. */
bool odebug_dynsyms_of(uintptr_t bias, const ElfW(Dyn) *dyn, struct odebug_dynsyms *s)
{
	const ElfW(Dyn) *d;

	memset(s, 0, sizeof(*s));
	for (d = dyn; d && d->d_tag != DT_NULL; d++) {
		if (d->d_tag == DT_SYMTAB)
			s->sym = dyn_ptr(bias, d->d_un.d_ptr);
		else if (d->d_tag == DT_STRTAB)
			s->str = dyn_ptr(bias, d->d_un.d_ptr);
		else if (d->d_tag == DT_VERSYM)
			s->versym = dyn_ptr(bias, d->d_un.d_ptr);
		else if (d->d_tag == DT_GNU_HASH)
			s->gnu_hash = dyn_ptr(bias, d->d_un.d_ptr);
		else if (d->d_tag == DT_HASH)
			s->hash = dyn_ptr(bias, d->d_un.d_ptr);
	}
	return s->sym && s->str && (s->gnu_hash || s->hash);
}

/*
 * Is symbol @i @name's definition, of its default version (with @any, of
 * any version)?  An undefined symbol with a value is a non-PIE
 * executable's canonical PLT entry, a hidden version (versym bit 15) one
 * that unversioned lookups pass over.
 */
static bool defines(const struct odebug_dynsyms *s, uint32_t i, const char *name, bool any)
{
	const ElfW(Sym) *sym = &s->sym[i];

	return sym->st_shndx != SHN_UNDEF && sym->st_value && !strcmp(s->str + sym->st_name, name) &&
	       (any || !(s->versym && (s->versym[i] & 0x8000)));
}

static const ElfW(Sym) *gnu_lookup(const struct odebug_dynsyms *s, const char *name, bool any)
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

		if ((ch | 1) == (gh | 1) && defines(s, i, name, any))
			return &s->sym[i];
		if (ch & 1)
			break;
	}
	return NULL;
}

static const ElfW(Sym) *sysv_lookup(const struct odebug_dynsyms *s, const char *name, bool any)
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
		if (defines(s, i, name, any))
			return &s->sym[i];
	return NULL;
}

/*
 * @name's definition of its default version in @s, from the object's own
 * hash table: a few dozen instructions, where dladdr() scans every symbol
 * of the object.
 */
const ElfW(Sym) *odebug_dynsym_lookup(const struct odebug_dynsyms *s, const char *name)
{
	return s->gnu_hash ? gnu_lookup(s, name, false) : sysv_lookup(s, name, false);
}

/* The same, of any version (a name dlvsym() may find at a version not the default). */
const ElfW(Sym) *odebug_dynsym_lookup_any(const struct odebug_dynsyms *s, const char *name)
{
	return s->gnu_hash ? gnu_lookup(s, name, true) : sysv_lookup(s, name, true);
}

struct in_object {
	const char *base, *name;
	void *p;
	bool seen;
};

static int object_symbol(struct dl_phdr_info *info, size_t size, void *data)
{
	struct in_object *o = data;
	const char *slash = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
	struct odebug_dynsyms s;
	const ElfW(Sym) *sym;

	(void)size;
	if (!slash || strcmp(slash + 1, o->base))
		return 0;
	o->seen = true;
	if (odebug_dynsyms_of(info->dlpi_addr, odebug_dynamic_of(info), &s) &&
	    (sym = odebug_dynsym_lookup(&s, o->name)) &&
	    ELF64_ST_TYPE(sym->st_info) != STT_GNU_IFUNC)
		o->p = (void *)(info->dlpi_addr + sym->st_value);
	return 1;
}

/*
 * @name as the loaded object whose file is named @base defines it (its
 * default version), as dlsym() on a dlopen(@base, RTLD_NOLOAD) handle
 * answers for a function the object defines itself; NULL if it is not
 * loaded or does not.  No dlopen() when a file of that name is loaded:
 * ours would rescan for modules.
 */
void *odebug_object_definition(const char *base, const char *name)
{
	struct in_object o = { base, name, NULL, false };
	void *h;

	dl_iterate_phdr(object_symbol, &o);
	if (o.seen || !(h = dlopen(base, RTLD_LAZY | RTLD_NOLOAD)))
		return o.p;
	/* Loaded under another file name than its soname: the loader knows it. */
	o.p = dlsym(h, name);
	dlclose(h);
	return o.p;
}
