/* SPDX-License-Identifier: MIT */
/*
 * culprit.c - the program check-gdb.sh runs under gdb: it frees an active
 * object (the culprit is release_gadget), and its is_static_object callback
 * runs under a bucket lock, where a debugger may stop too.
 */
#include <stdlib.h>

#include "odebug.h"

struct gadget {
	int armed;
	char pad[60];
};

static bool gadget_is_static(void *addr)
{
	return ((struct gadget *)addr)->armed == 42;	/* a breakpoint here holds a bucket lock */
}

static const struct debug_obj_descr gadget_descr = {
	.name = "gadget",
	.is_static_object = gadget_is_static,
};

struct gadget *the_gadget;
struct gadget static_gadget = { .armed = 42 };

void release_gadget(struct gadget *g);
void release_gadget(struct gadget *g)
{
	debug_object_free(g, &gadget_descr);	/* still active: reported */
}

int main(void)
{
	the_gadget = malloc(sizeof(*the_gadget));
	if (!the_gadget)
		return 1;
	debug_object_init(the_gadget, &gadget_descr);
	debug_object_activate(the_gadget, &gadget_descr);
	debug_object_activate(&static_gadget, &gadget_descr);
	release_gadget(the_gadget);
	debug_object_deactivate(the_gadget, &gadget_descr);	/* the fix */
	debug_object_free(the_gadget, &gadget_descr);
	free(the_gadget);
	return 0;
}
