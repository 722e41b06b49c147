/* SPDX-License-Identifier: MIT */
/*
 * uv-watch.c - the libuv module's watches of descriptors.
 *
 * A poll handle started on a descriptor (uv_poll_start() with events) is a
 * watch of it (odebug_services, lib/checks/fd) until uv_poll_stop() or
 * uv_close(): a close() of the descriptor meanwhile is reported at that
 * close and not made (libuv's documentation: "The user should not close a
 * file descriptor while it is being polled by an active poll handle").
 * Whether the handle still polls is libuv's word at the close
 * (uv_is_active() and the handle's descriptor), for a handle the table
 * still has (its close callback not run: its memory is libuv's).
 */
#define _GNU_SOURCE
#include "uv-watch.h"

#define X(name) __typeof__(name) *real_##name;
WATCH_HOOKS(X)
#undef X

/* libodebug's services (the watches of descriptors), or NULL. */
static const struct odebug_services *svc;

static bool poll_watch_live(const void *owner, int fd, unsigned long *id)
{
	(void)id;
	return uv_odebug_polls(owner, fd);
}

static const struct odebug_watch_type poll_watch = {
	.owner = "libuv poll handle",
	.how = "uv_poll_start",
	.remover = "uv_poll_stop()",
	.live = poll_watch_live,
};

/* Started with events: a watch of its descriptor; with none, libuv stops it. */
int wrap_uv_poll_start(uv_poll_t *h, int events, uv_poll_cb cb)
{
	int ret = real_uv_poll_start(h, events, cb);

	if (svc && ret == 0 && events)
		svc->watch_begin(h->io_watcher.fd, h, 0, &poll_watch);
	return ret;
}

int wrap_uv_poll_stop(uv_poll_t *h)
{
	int fd = h->io_watcher.fd, ret = real_uv_poll_stop(h);

	uv_watch_end(fd, (const uv_handle_t *)h);
	return ret;
}

/* The poll handle @h no longer polls @fd (stopped, or closed by uv_close()). */
void uv_watch_end(int fd, const uv_handle_t *h)
{
	if (svc)
		svc->watch_end(fd, h);
}

void uv_watch_services(const struct odebug_services *s)
{
	if (s->version >= 1)
		svc = s;
}

#ifdef ODEBUG_MODULE_PRELOAD
/* The preloaded variant (the tests): the wrappers also under libuv's names. */
#define X(name) extern __typeof__(name) name					\
	__attribute__((alias("wrap_" #name), visibility("default")));
WATCH_HOOKS(X)
#undef X
#endif
