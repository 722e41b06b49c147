/* SPDX-License-Identifier: MIT */
/*
 * A module that leaves an active object in its bss: under odebug --audit,
 * la_objclose() reports it and runs its fixup, under the loader's lock
 * (torture-report audit-lock).
 */
#include "odebug.h"

static bool fixup_free(void *addr, enum debug_obj_state state);
static const struct debug_obj_descr module_descr = {
	.name = "audit_module_object", .fixup_free = fixup_free,
};
static char object[64];

static bool fixup_free(void *addr, enum debug_obj_state state)
{
	if (state != ODEBUG_STATE_ACTIVE)
		return false;
	debug_object_deactivate(addr, &module_descr);
	debug_object_free(addr, &module_descr);
	return true;
}

__attribute__((constructor)) static void make(void)
{
	debug_object_init(object, &module_descr);
	debug_object_activate(object, &module_descr);
}
