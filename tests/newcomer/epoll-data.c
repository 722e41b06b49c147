/* SPDX-License-Identifier: MIT */
/* A connection freed while its epoll registration still points at it. */
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>

struct conn {
	int fd;
	char buf[256];
};

__attribute__((noinline)) static void conn_drop(struct conn *c)
{
	free(c);		/* the bug: still registered with data.ptr = c */
}

int main(void)
{
	int ep = epoll_create1(EPOLL_CLOEXEC), p[2];
	struct conn *c = calloc(1, sizeof(*c));
	struct epoll_event ev = { .events = EPOLLIN };

	if (ep < 0 || !c || pipe(p))
		return 2;
	c->fd = p[0];
	ev.data.ptr = c;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev))
		return 2;
	conn_drop(c);
	return 0;
}
