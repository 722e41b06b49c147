/* SPDX-License-Identifier: MIT */
/*
 * glib-watch.h - the GLib module's watches of descriptors (glib-watch.c),
 * as glib-odebug.c lists them in the module's descriptor.
 */
#ifndef ODEBUG_GLIB_WATCH_H
#define ODEBUG_GLIB_WATCH_H

#include <stdbool.h>
#include <glib.h>
#include <glib-unix.h>

#include "odebug.h"
#include "odebug-module.h"

/* Wrapped: GLib's definition in real_NAME, the wrapper in wrap_NAME. */
#define WATCH_HOOKS(X) X(g_unix_fd_add) X(g_unix_fd_add_full) X(g_source_add_unix_fd)	\
	X(g_source_remove_unix_fd)
/* Only called. */
#define WATCH_CALLS(X) X(g_main_context_find_source_by_id) X(g_main_current_source)

#define X(name) extern __typeof__(name) *real_##name;
WATCH_HOOKS(X)
WATCH_CALLS(X)
#undef X
#define X(name) extern __typeof__(name) wrap_##name;
WATCH_HOOKS(X)
#undef X

bool glib_watch_released(const struct debug_obj_descr *descr, void *addr, bool gone);
void glib_watch_services(const struct odebug_services *s);

#endif
