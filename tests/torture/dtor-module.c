/* SPDX-License-Identifier: MIT */
/*
 * A module whose destructor frees an active object: the report runs inside
 * dlclose(), under the loader's lock (torture-report loader-lock).
 */
#include <stdlib.h>

#include "odebug.h"

static const struct debug_obj_descr module_descr = { .name = "module_object" };
static char *block;

__attribute__((constructor)) static void make(void)
{
	block = malloc(64);
	debug_object_init(block, &module_descr);
	debug_object_activate(block, &module_descr);
}

__attribute__((destructor)) static void gone(void)
{
	free(block);	/* "free active", from inside dlclose() */
}
