/* SPDX-License-Identifier: MIT */
/*
 * conn-timer.c - the timer story of debugobjects, in userspace, with no
 * annotation at all.
 *
 * Each connection has a keepalive: a POSIX timer (SIGEV_THREAD) whose
 * sival_ptr is the connection.  conn_disconnect() frees the connection
 * but forgets timer_delete(), so the timer stays armed, holding a pointer
 * to freed memory.  The block is soon reused by a message buffer; when
 * the timer fires, its function finds garbage where the connection was
 * and the program aborts, in the timer's thread, far from the culprit.
 * With ODEBUG=1 (the odebug launcher) the free() is reported with
 * conn_disconnect() in its backtrace and the timer as the holder; the
 * fixup disarms the timer and the program runs to its end.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CONN_MAGIC 0xc0de5afeu

struct conn {
	unsigned int magic;
	int id;
	char peer[40];
	timer_t keepalive;
	unsigned long sent;
};

void keepalive_expired(union sigval v);
void keepalive_expired(union sigval v)
{
	struct conn *c = v.sival_ptr;

	if (c->magic != CONN_MAGIC) {
		fprintf(stderr, "keepalive: connection %p is corrupted (magic %#x)\n",
			(void *)c, c->magic);
		abort();
	}
	c->sent++;
	printf("keepalive sent to conn %d (%s)\n", c->id, c->peer);
}

struct conn *conn_open(int id, const char *peer);
struct conn *conn_open(int id, const char *peer)
{
	struct conn *c = calloc(1, sizeof(*c));
	struct sigevent se = {
		.sigev_notify = SIGEV_THREAD,
		.sigev_notify_function = keepalive_expired,
		.sigev_value.sival_ptr = c,
	};
	struct itimerspec in_1s = { .it_value = { 1, 0 } };

	c->magic = CONN_MAGIC;
	c->id = id;
	snprintf(c->peer, sizeof(c->peer), "%s", peer);
	if (timer_create(CLOCK_MONOTONIC, &se, &c->keepalive) ||
	    timer_settime(c->keepalive, 0, &in_1s, NULL)) {
		perror("timer");
		exit(2);
	}
	return c;
}

/* Correct: the timer goes first. */
void conn_close(struct conn *c);
void conn_close(struct conn *c)
{
	timer_delete(c->keepalive);
	free(c);
}

/* The bug: the timer is left armed, holding c. */
void conn_disconnect(struct conn *c);
void conn_disconnect(struct conn *c)
{
	free(c);
}

int main(void)
{
	struct conn *a = conn_open(1, "10.0.0.1:443"), *b = conn_open(2, "10.0.0.2:443");
	char *msg;

	setvbuf(stdout, NULL, _IOLBF, 0);
	conn_close(b);
	conn_disconnect(a);
	/* The freed block is reused at once: a message buffer of the same size. */
	msg = malloc(sizeof(struct conn));
	memset(msg, 'A', sizeof(struct conn) - 1);
	msg[sizeof(struct conn) - 1] = '\0';
	usleep(1500000);	/* a's keepalive was due at 1 s */
	printf("message %.8s..., done\n", msg);
	free(msg);
	return 0;
}
