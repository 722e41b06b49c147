/* SPDX-License-Identifier: MIT */
/* odebug.h compiles clean as strict C (built with -std=c99 and -std=c11). */
#include "odebug.h"

static bool fixup(void *addr, enum debug_obj_state state)
{
	(void)addr;
	return state == ODEBUG_STATE_ACTIVE;
}

static const struct debug_obj_descr descr = {
	.name = "header",
	.fixup_init = fixup,
};

int main(void)
{
	static char obj[8];
	struct debug_objects_stats s;

	debug_object_init(obj, &descr);
	debug_object_free(obj, &descr);
	return (int)(debug_objects_get_stats(&s, sizeof(s)) != sizeof(s));
}
