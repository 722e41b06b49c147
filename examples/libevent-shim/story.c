/* SPDX-License-Identifier: MIT */
/*
 * story.c - the timer story on the system's libevent: a connection holds a
 * persistent timeout event; conn_drop() frees the connection without
 * event_del().  Also legal uses that must stay silent: re-adding a pending
 * event, a one-shot event that fired, event_new/event_free.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <event2/event.h>
#include <event2/event_struct.h>

struct conn {
	int id;
	char peer[40];
	struct event timeout;
	unsigned long ticks;
};

static void on_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;

	(void)fd;
	(void)what;
	c->ticks++;
}

static void on_once(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(*(int *)arg)++;
}

struct conn *conn_open(struct event_base *base, int id);
struct conn *conn_open(struct event_base *base, int id)
{
	struct timeval tv = { 0, 2000 };
	struct conn *c = calloc(1, sizeof(*c));

	if (!c)
		abort();
	c->id = id;
	snprintf(c->peer, sizeof(c->peer), "192.0.2.%d:443", id);
	event_assign(&c->timeout, base, -1, EV_PERSIST, on_timeout, c);
	event_add(&c->timeout, &tv);
	event_add(&c->timeout, &tv);	/* re-arming a pending event: legal */
	return c;
}

void conn_close(struct conn *c);
void conn_close(struct conn *c)
{
	event_del(&c->timeout);
	free(c);
}

/* The bug: the timeout event is still pending in the base. */
void conn_drop(struct conn *c);
void conn_drop(struct conn *c)
{
	free(c);
}

int main(void)
{
	struct event_base *base = event_base_new();
	struct timeval quick = { 0, 1000 }, run = { 0, 30000 };
	struct event once, *ev;
	struct conn *a, *b;
	char *junk;
	int fired = 0;

	setvbuf(stdout, NULL, _IONBF, 0);
	a = conn_open(base, 1);
	b = conn_open(base, 2);
	event_assign(&once, base, -1, 0, on_once, &fired);
	event_add(&once, &quick);
	ev = event_new(base, -1, EV_PERSIST, on_timeout, a);
	event_add(ev, &quick);
	event_base_loopexit(base, &run);
	event_base_dispatch(base);
	event_free(ev);
	printf("one-shot event fired %d time(s)\n", fired);

	conn_drop(b);			/* the bug */
	junk = malloc(sizeof(struct conn));
	memset(junk, 0x5a, sizeof(struct conn));	/* the block is reused */
	event_base_loopexit(base, &run);
	event_base_dispatch(base);	/* the base walks the reused block */
	conn_close(a);
	free(junk);
	event_base_free(base);
	printf("done\n");
	return 0;
}
