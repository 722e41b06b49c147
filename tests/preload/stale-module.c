/* SPDX-License-Identifier: MIT */
/*
 * A module dlopen'ed and dlclose'd by stale-descr.c: its
 * descriptor, debug_hint and fixup_free go away with it, while libodebug
 * may still track objects that name them.
 */
#include <stdbool.h>
#include <stddef.h>

#include "odebug.h"

static void *stale_hint(void *addr)
{
	return *(void **)addr;
}

static bool stale_fixup_free(void *addr, enum debug_obj_state state)
{
	(void)state;
	debug_object_deactivate(addr, NULL);	/* never reached once unloaded */
	return false;
}

/*
 * Built twice: as "stale_type", and as "stale_twin" (the "twin" case), a
 * name of the same length, so both builds lay out alike and, loaded at the
 * same base, have their descriptor and its name at the same addresses.
 */
#ifndef STALE_NAME
#define STALE_NAME "stale_type"
#endif

/* Not const: in .data, which a reused mapping overwrites in the test. */
struct debug_obj_descr stale_descr = {
	.name = STALE_NAME,
	.debug_hint = stale_hint,
	.fixup_free = stale_fixup_free,
};

static void *module_obj[4];

/* Arm the module's own static object and @heap_obj with our descriptor. */
void stale_arm(void *heap_obj);
void stale_arm(void *heap_obj)
{
	debug_object_init(module_obj, &stale_descr);
	debug_object_activate(module_obj, &stale_descr);
	debug_object_init(heap_obj, &stale_descr);
	debug_object_activate(heap_obj, &stale_descr);
}

/* Arm only @heap_obj (the "twin" case leaves nothing in the module). */
void stale_arm_heap(void *heap_obj);
void stale_arm_heap(void *heap_obj)
{
	debug_object_init(heap_obj, &stale_descr);
	debug_object_activate(heap_obj, &stale_descr);
}
