/* SPDX-License-Identifier: MIT */
/*
 * shim.c - what a shim needs to annotate a library from outside
 * (odebug-shim(7)): where an object lives, an init that picks the right
 * annotation, and the shim's own frames kept out of reports and origins.
 * (debug_object_rearm, an activate for re-armable objects, is in
 * debugobjects.c.)
 */
#include "core.h"

/**
 * debug_object_on_stack - is @addr on the calling thread's stack?
 *
 * The thread's stack as the C library knows it (not a coroutine's, nor an
 * alternate signal stack).  False when libodebug is disabled.
 */
ODEBUG_EXPORT bool debug_object_on_stack(const void *addr)
{
	uintptr_t base;

	if (!odebug_on())
		return false;
	odebug_stack_prepare();
	return odebug_on_stack((uintptr_t)addr, &base);
}

/**
 * debug_object_init_auto - debug_object_init or _init_on_stack, as fits
 * @addr:	address of the object
 * @descr:	pointer to an object specific debug description structure
 *
 * For a shim that wraps a library's init function and cannot know where
 * the caller put the object.
 */
ODEBUG_EXPORT void debug_object_init_auto(void *addr, const struct debug_obj_descr *descr)
{
	if (debug_object_on_stack(addr))
		debug_object_init_on_stack(addr, descr);
	else
		debug_object_init(addr, descr);
}

/**
 * debug_objects_skip_module - leave a module's frames out of reports
 * @addr:	any address in the module (a function of the shim)
 *
 * Backtraces and origins (origins=1) start at the first frame outside
 * libodebug and the modules so marked, so a report names the caller of
 * the shim's wrapper, not the wrapper.  Only leading frames are skipped.
 * The module may be in another link namespace (dlmopen, LD_AUDIT).
 * The executable cannot be marked.  Returns whether the module was
 * marked; at most 16 segments in all.  Call it with no lock held (it walks
 * the loaded modules), typically from the shim's constructor.
 */
ODEBUG_EXPORT bool debug_objects_skip_module(const void *addr)
{
	/*
	 * Decided on is enough: the skipped ranges need no table.  An
	 * annotation module's constructor runs while libodebug decides (its
	 * scan loads the module), when the mode is not known yet: not OFF.
	 */
	odebug_enable_slow();
	if (odebug_load(&odebug_mode) == ODEBUG_MODE_OFF)
		return false;
	return odebug_backtrace_skip_module(addr, false);
}
