/* SPDX-License-Identifier: MIT */
/*
 * arena.h - a chunk arena: bump allocation, no per-object free, and a reset
 * that recycles everything at once (the way request pools work in web
 * servers).  Annotated for libodebug: memory the arena recycles or releases
 * is checked for active objects first (debug_check_no_obj_freed).
 */
#ifndef ARENA_H
#define ARENA_H

#include <stddef.h>

struct arena_chunk;

struct arena {
	struct arena_chunk *head;	/* every chunk, oldest first */
	struct arena_chunk *cur;	/* where arena_alloc() bumps */
	size_t chunk_size;
};

void arena_init(struct arena *a, size_t chunk_size);
void *arena_alloc(struct arena *a, size_t size);
void arena_reset(struct arena *a);
void arena_destroy(struct arena *a);

#endif
