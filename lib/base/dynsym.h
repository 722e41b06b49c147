/* SPDX-License-Identifier: MIT */
/*
 * dynsym.h - an object's dynamic symbols, looked up in its own hash table
 * (dynsym.c), for the start's questions: which definition the program's
 * calls reach (preload/definition.c), how long libc's dlclose() is
 * (backtrace.c), libc's own malloc() and clone() (preload/free.c,
 * helper.c).  No loader call, no allocation.
 */
#ifndef ODEBUG_DYNSYM_H
#define ODEBUG_DYNSYM_H

#include <link.h>
#include <stdbool.h>
#include <stdint.h>

/* An object's dynamic symbol table, as its dynamic section gives it. */
struct odebug_dynsyms {
	const ElfW(Sym) *sym;
	const char *str;
	const ElfW(Half) *versym;
	const uint32_t *gnu_hash, *hash;
};

bool odebug_dynsyms_of(uintptr_t bias, const ElfW(Dyn) *dyn, struct odebug_dynsyms *s);
const ElfW(Sym) *odebug_dynsym_lookup(const struct odebug_dynsyms *s, const char *name);
const ElfW(Sym) *odebug_dynsym_lookup_any(const struct odebug_dynsyms *s, const char *name);
const ElfW(Dyn) *odebug_dynamic_of(const struct dl_phdr_info *info);
void *odebug_object_definition(const char *base, const char *name);

#endif /* ODEBUG_DYNSYM_H */
