/* SPDX-License-Identifier: MIT */
/*
 * next.h - the release functions we forward to: the next definitions after
 * ours (glibc's, or another allocator preloaded after libodebug).
 */
#ifndef ODEBUG_NEXT_H
#define ODEBUG_NEXT_H

#include <stddef.h>

/* glibc's baseline version node on this architecture (meson passes it). */
#ifndef ODEBUG_V_BASE
#define ODEBUG_V_BASE "GLIBC_2.2.5"
#endif

extern ODEBUG_HIDDEN void (*odebug_next_free)(void *p);
extern ODEBUG_HIDDEN void *(*odebug_next_realloc)(void *p, size_t size);
extern ODEBUG_HIDDEN int (*odebug_next_munmap)(void *addr, size_t len);
extern ODEBUG_HIDDEN void *(*odebug_next_mremap)(void *old, size_t old_size, size_t new_size,
				   int flags, void *new_addr);
extern ODEBUG_HIDDEN size_t (*odebug_next_usable_size)(void *p);
extern ODEBUG_HIDDEN int (*odebug_next_dlclose)(void *handle);
extern ODEBUG_HIDDEN int (*odebug_next_dlclose_base)(void *handle);	/* dlclose@ODEBUG_V_BASE */
extern ODEBUG_HIDDEN size_t odebug_page_size;
void *odebug_next_at(const char *name, const char *version);
void *odebug_program_definition(const char *name);
bool odebug_defined_elsewhere(const char *name);
void odebug_free_probe(void);
extern ODEBUG_HIDDEN ODEBUG_TLS int odebug_free_reached;

/* "mmap.c": what every mapping release path shares (replace.c too) */
#include <stdbool.h>
#include <stdint.h>
bool odebug_release_checking(void);
bool odebug_range_ok(uintptr_t start, size_t len);
void odebug_check_pages(uintptr_t start, size_t len);
uintptr_t odebug_page_up(uintptr_t v);
uintptr_t odebug_user_top(void);

/* "sanitizer.c": heap blocks checked from a sanitizer runtime's free hook */
#include <stdbool.h>
bool odebug_sanitizer_init(void);

#endif
