/* SPDX-License-Identifier: MIT */
/*
 * evtail.c - a callback whose last act is a call into libevent, compiled
 * with sibling calls (meson.build): a tail call, so libevent's own frame
 * is what the called function returns to, as in a libevent built with
 * -DNDEBUG, whose event_set() tail-calls event_assign().  How the code
 * around a call was compiled must not change what a module decides.
 */
#include <event2/event.h>

void evtail_readd(evutil_socket_t fd, short what, void *arg);
void evtail_readd(evutil_socket_t fd, short what, void *arg)
{
	static const struct timeval later = { 60, 0 };

	(void)fd;
	(void)what;
	event_add(arg, &later);		/* re-armed by its own callback */
}
