/* SPDX-License-Identifier: MIT */
/*
 * A double free (or, with an argument, an invalid free) in a sanitizer
 * build, with libodebug tracking something.
 */
#include <stdlib.h>

#include "odebug.h"

static const struct debug_obj_descr thing_descr = { .name = "thing" };

int main(int argc, char **argv)
{
	char *volatile held = malloc(32);
	char *volatile p = malloc(48);

	debug_object_init(held, &thing_descr);	/* the free hook has work */
	(void)argv;
	if (argc > 1) {
		free(p + 8);			/* not a block's start */
	} else {
		free(p);
		free(p);			/* the sanitizer's report */
	}
	debug_object_free(held, &thing_descr);
	free(held);
	return 0;
}
