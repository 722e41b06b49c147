/* SPDX-License-Identifier: MIT */
/*
 * uv-watch.h - the libuv module's watches of descriptors (uv-watch.c),
 * as uv-odebug.c lists them in the module's descriptor.
 */
#ifndef ODEBUG_UV_WATCH_H
#define ODEBUG_UV_WATCH_H

#include <stdbool.h>
#include <uv.h>

#include "odebug.h"
#include "odebug-module.h"

/* Wrapped: libuv's definition in real_NAME, the wrapper in wrap_NAME. */
#define WATCH_HOOKS(X) X(uv_poll_start) X(uv_poll_stop)

#define X(name) extern __typeof__(name) *real_##name, wrap_##name;
WATCH_HOOKS(X)
#undef X

/* uv-odebug.c: the handle's table entry says libuv still polls @fd for it. */
bool uv_odebug_polls(const uv_poll_t *h, int fd);

void uv_watch_end(int fd, const uv_handle_t *h);
void uv_watch_services(const struct odebug_services *s);

#endif
