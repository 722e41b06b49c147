/* SPDX-License-Identifier: MIT */
/*
 * evplugin.c - a plugin that uses libevent, loaded with dlopen() by a
 * program that does not (evdlopen.c): its calls are redirected when it is
 * loaded, and its misuse is reported naming plugin_drop; an event in its
 * own data is checked when it is unloaded.
 */
#include <stdlib.h>
#include <event2/event.h>
#include <event2/event_struct.h>

static void on_event(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
}

int plugin_drop(void);
int plugin_drop(void)
{
	struct event_base *base = event_base_new();
	struct event *ev = malloc(sizeof(*ev) + 64);
	struct timeval later = { 60, 0 };
	int n;

	event_assign(ev, base, -1, EV_PERSIST, on_event, NULL);
	event_add(ev, &later);
	free(ev);
	n = event_base_get_num_events(base, EVENT_BASE_COUNT_ADDED);
	event_base_free(base);
	return n;
}

/* The plugin's own event, in its data: added, then deleted before the unload. */
static struct event ev_static;

int plugin_static_deleted(void);
int plugin_static_deleted(void)
{
	struct event_base *base = event_base_new();
	struct timeval later = { 60, 0 };
	int n;

	event_assign(&ev_static, base, -1, EV_PERSIST, on_event, NULL);
	event_add(&ev_static, &later);
	event_del(&ev_static);
	n = event_base_get_num_events(base, EVENT_BASE_COUNT_ADDED);
	event_base_free(base);
	return n;
}

/* The same event still pending when the plugin is unloaded (its base kept). */
int plugin_static_pending(void);
int plugin_static_pending(void)
{
	struct event_base *base = event_base_new();
	struct timeval later = { 60, 0 };

	event_assign(&ev_static, base, -1, EV_PERSIST, on_event, NULL);
	event_add(&ev_static, &later);
	return event_base_get_num_events(base, EVENT_BASE_COUNT_ADDED);
}
