/* SPDX-License-Identifier: MIT */
/*
 * arena.c - a chunk arena.
 *
 * arena_reset() rewinds every chunk without giving memory back to libc, so
 * no free() ever sees an object allocated here die: libodebug's interposed
 * free() cannot check this memory, and neither AddressSanitizer nor Valgrind
 * notices a stale pointer into it.  The arena therefore checks the memory
 * itself, with debug_check_no_obj_freed(), before it recycles or releases
 * it: an object still active in there is reported, with the caller of
 * arena_reset() in the backtrace, and its type's fixup_free repairs the
 * damage before the memory is handed out again.
 */
#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>

#include "odebug.h"
#include "arena.h"

struct arena_chunk {
	struct arena_chunk *next;
	size_t size, used;
	alignas(max_align_t) unsigned char data[];
};

#define ALIGN(n) (((n) + alignof(max_align_t) - 1) & ~(alignof(max_align_t) - 1))

void arena_init(struct arena *a, size_t chunk_size)
{
	a->head = NULL;
	a->cur = NULL;
	a->chunk_size = chunk_size;
}

static struct arena_chunk *chunk_new(struct arena *a, size_t size)
{
	struct arena_chunk *c, **pp;

	if (size < a->chunk_size)
		size = a->chunk_size;
	c = malloc(sizeof(*c) + size);
	if (!c)
		abort();
	c->next = NULL;
	c->size = size;
	c->used = 0;
	for (pp = &a->head; *pp; pp = &(*pp)->next)
		;
	*pp = c;
	return c;
}

void *arena_alloc(struct arena *a, size_t size)
{
	struct arena_chunk *c = a->cur ? a->cur : a->head;
	void *p;

	size = ALIGN(size ? size : 1);
	while (c && c->size - c->used < size)
		c = c->next;	/* a recycled chunk with room, or none */
	if (!c)
		c = chunk_new(a, size);
	a->cur = c;
	p = c->data + c->used;
	c->used += size;
	return p;
}

/* Everything allocated since the last reset dies here. */
void arena_reset(struct arena *a)
{
	struct arena_chunk *c;

	for (c = a->head; c; c = c->next) {
		debug_check_no_obj_freed(c->data, c->used);
		c->used = 0;
	}
	a->cur = a->head;
}

void arena_destroy(struct arena *a)
{
	struct arena_chunk *c, *next;

	for (c = a->head; c; c = next) {
		next = c->next;
		/* free() checks too when interposed; a mmap'ed chunk would not. */
		debug_check_no_obj_freed(c->data, c->used);
		free(c);
	}
	arena_init(a, a->chunk_size);
}
