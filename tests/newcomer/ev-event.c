/* SPDX-License-Identifier: MIT */
/* A connection freed while its libevent event is still pending. */
#include <stdlib.h>
#include <unistd.h>
#include <event2/event.h>
#include <event2/event_struct.h>

struct conn {
	int fd;
	struct event ev;
};

static void on_read(evutil_socket_t fd, short what, void *arg)
{
	(void)fd, (void)what, (void)arg;
}

__attribute__((noinline)) static void conn_close(struct conn *c)
{
	close(c->fd);
	free(c);		/* the bug: event_del() was never called */
}

int main(void)
{
	struct event_base *base = event_base_new();
	struct conn *c = calloc(1, sizeof(*c));
	int p[2];

	if (!base || !c || pipe(p))
		return 2;
	c->fd = p[0];
	event_assign(&c->ev, base, p[0], EV_READ | EV_PERSIST, on_read, c);
	event_add(&c->ev, NULL);
	conn_close(c);
	event_base_loop(base, EVLOOP_NONBLOCK);
	event_base_free(base);
	return 0;
}
