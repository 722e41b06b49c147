/* SPDX-License-Identifier: MIT */
/*
 * plugin.c - a module with a static object in its data, and its type's
 * descriptor: both are unmapped when the module is unloaded.  Its
 * debug_object_* references resolve to the process's libodebug.
 */
#include <unistd.h>

#include "odebug.h"

struct ticker {
	int armed;
	char pad[28];
};

static struct ticker ticker;
static int clean_exit;

void plugin_start(int clean);
static const struct debug_obj_descr ticker_descr;

/* Read only while the module is mapped: through LD_AUDIT, not after dlclose. */
static void *ticker_hint(void *addr)
{
	(void)addr;
	return (void *)plugin_start;
}

static bool ticker_fixup_free(void *addr, enum debug_obj_state state)
{
	static const char msg[] = "plugin: fixup_free stopped the ticker\n";
	ssize_t r;

	if (state != ODEBUG_STATE_ACTIVE)
		return false;
	ticker.armed = 0;
	debug_object_deactivate(addr, &ticker_descr);
	debug_object_free(addr, &ticker_descr);
	r = write(1, msg, sizeof(msg) - 1);
	(void)r;
	return true;
}

static const struct debug_obj_descr ticker_descr = {
	.name = "plugin_ticker",
	.debug_hint = ticker_hint,
	.fixup_free = ticker_fixup_free,
};

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
