/* SPDX-License-Identifier: MIT */
/*
 * With ODEBUG_DISABLE every call compiles to nothing: this program is
 * linked without libodebug and checks the stubs' results.
 */
#define ODEBUG_DISABLE
#include "odebug.h"

#include <stdio.h>

static const struct debug_obj_descr descr = { .name = "disabled" };

int main(void)
{
	static char obj[8];
	int bad = 0;

	debug_object_init(obj, &descr);
	debug_object_init_on_stack(obj, &descr);
	bad |= debug_object_activate(obj, &descr) != 0;
	debug_object_deactivate(obj, &descr);
	debug_object_destroy(obj, &descr);
	debug_object_free(obj, &descr);
	debug_object_assert_init(obj, &descr);
	debug_object_active_state(obj, &descr, 0, 1);
	debug_check_no_obj_freed(obj, sizeof(obj));
	bad |= debug_objects_enabled();
	bad |= debug_object_get_state(obj) != ODEBUG_STATE_NOTAVAILABLE;
	bad |= debug_objects_get_stats(NULL, 0) != 0;
	debug_objects_print_stats(2);
	if (bad)
		puts("ODEBUG_DISABLE stubs returned unexpected values");
	return bad;
}
