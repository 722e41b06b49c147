/* SPDX-License-Identifier: MIT */
/*
 * conn-bug.c - the bug that made Thomas Gleixner write debugobjects.
 *
 * A connection carries a keepalive timer.  conn_disconnect() frees the
 * connection but forgets to delete the timer, which stays linked in the
 * wheel.  The block is soon reused by a message buffer and overwritten; ten
 * ticks later the wheel walks into the garbage.  Without libodebug the
 * program dies in timer_tick(), far from the culprit.  With ODEBUG=1 the
 * free() is reported with conn_disconnect() in its backtrace, the timer's
 * fixup disarms it, and the program runs to the end.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "timer.h"

struct conn {
	int id;
	char peer[44];
	struct timer keepalive;
	unsigned long sent;
};

static unsigned long keepalives;

void keepalive_expired(struct timer *t);
void keepalive_expired(struct timer *t)
{
	struct conn *c = (struct conn *)((char *)t - offsetof(struct conn, keepalive));

	keepalives++;
	c->sent++;
	timer_add(t, timer_now() + 10);
}

struct conn *conn_open(int id);
struct conn *conn_open(int id)
{
	struct conn *c = calloc(1, sizeof(*c));

	if (!c)
		abort();
	c->id = id;
	snprintf(c->peer, sizeof(c->peer), "192.0.2.%d:443", id);
	timer_init(&c->keepalive, keepalive_expired);
	timer_add(&c->keepalive, timer_now() + 10);
	return c;
}

void conn_close(struct conn *c);
void conn_close(struct conn *c)
{
	timer_del(&c->keepalive);
	free(c);
}

/* The bug: the keepalive timer is still armed when the memory goes. */
void conn_disconnect(struct conn *c);
void conn_disconnect(struct conn *c)
{
	printf("conn %d (%s) disconnected after %lu keepalives\n",
	       c->id, c->peer, c->sent);
	free(c);
}

int main(void)
{
	struct conn *conns[3];
	char *message;
	int i;

	setvbuf(stdout, NULL, _IONBF, 0);
	for (i = 0; i < 3; i++)
		conns[i] = conn_open(i + 1);
	for (i = 0; i < 25; i++)
		timer_tick();

	conn_disconnect(conns[1]);
	/* The next allocation of that size reuses the block and fills it. */
	message = malloc(sizeof(struct conn));
	if (!message)
		abort();
	memset(message, 'x', sizeof(struct conn) - 1);
	message[sizeof(struct conn) - 1] = '\0';
	printf("queued a %zu-byte message\n", strlen(message));

	for (i = 0; i < 25; i++)
		timer_tick();
	conn_close(conns[0]);
	conn_close(conns[2]);
	free(message);
	printf("done: %lu keepalives sent, %lu timers still armed\n",
	       keepalives, timers_armed());
	return 0;
}
