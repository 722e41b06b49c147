/* SPDX-License-Identifier: MIT */
/*
 * The header's inline switch in an executable built without -fPIE: its
 * reference to __debug_objects_on is a copy relocation, so the word callers
 * read lives in the executable, not in libodebug.so, and libodebug must
 * write it through its GOT for the calls to stop (or keep) calling in.
 *
 *	nopie off	ODEBUG unset: the word reads 0 and nothing is tracked
 *	nopie on	ODEBUG=1: the word reads 1 and the inline calls track
 *	nopie oom	ODEBUG=1 and pool_max=100: the out-of-memory switch-off
 *			clears the executable's copy too
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "odebug.h"

extern char __executable_start[], _end[];

static const struct debug_obj_descr descr = { .name = "nopie" };
static long objs[400];
static int failed;

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "nopie: FAILED: %s\n", what);
		failed = 1;
	}
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	const char *word = (const char *)&__debug_objects_on;
	int i;

	/* The word this program reads is the copy relocation's. */
	check(word >= __executable_start && word < _end,
	      "__debug_objects_on is not the executable's copy (no copy relocation?)");
	if (!strcmp(mode, "off")) {
		check(__debug_objects_on == 0, "the word is not 0 with ODEBUG unset");
		check(!debug_objects_enabled(), "enabled with ODEBUG unset");
		debug_object_init(&objs[0], &descr);
		check(debug_object_activate(&objs[0], &descr) == 0, "activate failed");
		check(debug_object_get_state(&objs[0]) == ODEBUG_STATE_NOTAVAILABLE,
		      "an object was tracked with ODEBUG unset");
	} else if (!strcmp(mode, "on")) {
		check(__debug_objects_on == 1, "the word is not 1 with ODEBUG=1");
		check(debug_objects_enabled(), "not enabled with ODEBUG=1");
		debug_object_init(&objs[0], &descr);
		check(debug_object_activate(&objs[0], &descr) == 0, "activate failed");
		check(debug_object_get_state(&objs[0]) == ODEBUG_STATE_ACTIVE,
		      "the inline calls did not reach libodebug");
		debug_object_deactivate(&objs[0], &descr);
		debug_object_free(&objs[0], &descr);
		check(debug_object_get_state(&objs[0]) == ODEBUG_STATE_NOTAVAILABLE,
		      "free did not reach libodebug");
	} else if (!strcmp(mode, "oom")) {
		check(__debug_objects_on == 1, "the word is not 1 with ODEBUG=1");
		for (i = 0; i < 400; i++)
			debug_object_init(&objs[i], &descr);
		check(!debug_objects_enabled(), "still enabled after running out of trackers");
		check(__debug_objects_on == 0, "the executable's copy of the word is still set");
	} else {
		fprintf(stderr, "usage: nopie off|on|oom\n");
		return 2;
	}
	return failed;
}
