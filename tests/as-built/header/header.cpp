// SPDX-License-Identifier: MIT
// odebug.h compiles clean as C++ and links with C linkage.
#include "odebug.h"

static bool fixup(void *, enum debug_obj_state state)
{
	return state == ODEBUG_STATE_ACTIVE;
}

int main()
{
	static struct debug_obj_descr descr = {};
	static char obj[8];
	struct debug_objects_stats s;

	descr.name = "header_cpp";
	descr.fixup_init = fixup;
	debug_object_init(obj, &descr);
	debug_object_free(obj, &descr);
	return debug_objects_get_stats(&s, sizeof(s)) != sizeof(s);
}
