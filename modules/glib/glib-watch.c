/* SPDX-License-Identifier: MIT */
/*
 * glib-watch.c - the GLib module's watches of descriptors.
 *
 * A descriptor a source polls (g_unix_fd_add(), g_unix_fd_add_full(),
 * g_source_add_unix_fd()) is a watch of it (odebug_services,
 * lib/checks/fd): a close() of it while GLib still polls it for that
 * source is reported at the close and not made.  GLib's word at the
 * close: the source attached and not destroyed, and not the source whose
 * callback is running (a callback may close its descriptor and return
 * G_SOURCE_REMOVE).  The source's memory is marked by a tracker of ours
 * 5 bytes into it, ACTIVE from the first watch; its release by GLib (the
 * source finalised, however it was destroyed) is seen by libodebug's free
 * check, which asks released(): the source's watches end there, silently.
 * g_source_remove_unix_fd() ends one.  A close made inside GLib's own code
 * (GIO's g_socket_close() closes a socket before the socket's source is
 * destroyed, GDBus does so on its worker thread) is GLib's business: made,
 * silent, and the end of that descriptor's watches (own_code).
 */
#define _GNU_SOURCE
#include "glib-watch.h"

#define X(name) __typeof__(name) *real_##name;
WATCH_HOOKS(X)
WATCH_CALLS(X)
#undef X

static const struct odebug_services *svc;

#define MARK(s) ((char *)(s) + 5)

/* A source's mark: made by its first watch, dropped silently with its memory. */
static bool source_untracked(void *addr)
{
	(void)addr;
	return true;
}

static const struct debug_obj_descr source_descr = {
	.name = "glib_fd_source",
	.is_static_object = source_untracked,
};

/*
 * Does GLib still poll @fd for the source @owner (asked at a close)?  Its
 * memory is still the source's while the mark is ACTIVE (released() ends
 * the watches before GLib's free); then GLib's own fields.
 */
static bool source_watch_live(const void *owner, int fd, unsigned long *id)
{
	const GSource *s = owner;

	(void)fd;
	if (debug_object_get_state(MARK(s)) != ODEBUG_STATE_ACTIVE ||
	    !(__atomic_load_n(&s->flags, __ATOMIC_RELAXED) & G_HOOK_FLAG_ACTIVE) ||
	    !__atomic_load_n(&s->context, __ATOMIC_RELAXED) || (*id && s->source_id != *id))
		return false;
	*id = s->source_id;
	return real_g_main_current_source() != s;
}

/*
 * GLib's own closes are its business: GIO's g_socket_close() closes the
 * descriptor and destroys the socket's sources after, inside GLib.
 */
static const char *const glib_code[] = { "libglib-2.0.so", "libgio-2.0.so", "libgobject-2.0.so",
					  NULL };

static const struct odebug_watch_type fd_add_watch = {
	.owner = "GLib fd source",
	.how = "g_unix_fd_add",
	.remover = "g_source_remove()",
	.live = source_watch_live,
	.own_code = glib_code,
};

static const struct odebug_watch_type add_fd_watch = {
	.owner = "GLib source",
	.how = "g_source_add_unix_fd",
	.remover = "g_source_remove_unix_fd() or g_source_destroy()",
	.live = source_watch_live,
	.own_code = glib_code,
};

static void watch_source(GSource *s, int fd, guint id, const struct odebug_watch_type *type)
{
	if (!s)
		return;
	if (debug_object_get_state(MARK(s)) != ODEBUG_STATE_ACTIVE)
		debug_object_activate(MARK(s), &source_descr);
	svc->watch_begin(fd, s, id, type);
}

/* The source's memory goes (GLib finalised it): its watches end, silently. */
bool glib_watch_released(const struct debug_obj_descr *descr, void *addr, bool gone)
{
	(void)gone;
	if (descr != &source_descr)
		return false;
	if (svc)
		svc->watch_end(-1, (char *)addr - 5);
	return true;
}

guint wrap_g_unix_fd_add_full(gint prio, gint fd, GIOCondition cond, GUnixFDSourceFunc f,
				     gpointer data, GDestroyNotify notify)
{
	guint id = real_g_unix_fd_add_full(prio, fd, cond, f, data, notify);

	if (svc && id)
		watch_source(real_g_main_context_find_source_by_id(NULL, id), fd, id, &fd_add_watch);
	return id;
}

guint wrap_g_unix_fd_add(gint fd, GIOCondition cond, GUnixFDSourceFunc f, gpointer data)
{
	guint id = real_g_unix_fd_add(fd, cond, f, data);

	if (svc && id)
		watch_source(real_g_main_context_find_source_by_id(NULL, id), fd, id, &fd_add_watch);
	return id;
}

gpointer wrap_g_source_add_unix_fd(GSource *s, gint fd, GIOCondition events)
{
	gpointer tag = real_g_source_add_unix_fd(s, fd, events);

	if (svc && tag)
		watch_source(s, fd, s->source_id, &add_fd_watch);
	return tag;
}

void wrap_g_source_remove_unix_fd(GSource *s, gpointer tag)
{
	int fd = tag ? ((const GPollFD *)tag)->fd : -1;

	real_g_source_remove_unix_fd(s, tag);
	if (svc && fd >= 0)
		svc->watch_end(fd, s);
}

void glib_watch_services(const struct odebug_services *s)
{
	if (s->version >= 1)
		svc = s;
}

#ifdef ODEBUG_MODULE_PRELOAD
/* The preloaded variant (the tests): the wrappers under GLib's names. */
#define X(name) extern __typeof__(name) name					\
	__attribute__((alias("wrap_" #name), visibility("default")));
WATCH_HOOKS(X)
#undef X
#endif
