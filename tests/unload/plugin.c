/* SPDX-License-Identifier: MIT */
/*
 * plugin.c - a module with a static object in its data, and its type's
 * descriptor: both are unmapped when the module is unloaded.  Its
 * debug_object_* references resolve to the process's libodebug.
 */
#include "odebug.h"

struct ticker {
	int armed;
	char pad[28];
};

static struct ticker ticker;
static int clean_exit;

static const struct debug_obj_descr ticker_descr = { .name = "plugin_ticker" };

void plugin_start(int clean);
void plugin_start(int clean)
{
	clean_exit = clean;
	debug_object_init(&ticker, &ticker_descr);
	debug_object_activate(&ticker, &ticker_descr);
	ticker.armed = 1;
}

void *plugin_object(void);
void *plugin_object(void)
{
	return &ticker;
}

/* A well-behaved module stops its object in its destructor. */
__attribute__((destructor)) static void plugin_fini(void)
{
	if (!clean_exit || !ticker.armed)
		return;
	ticker.armed = 0;
	debug_object_deactivate(&ticker, &ticker_descr);
	debug_object_free(&ticker, &ticker_descr);
}
