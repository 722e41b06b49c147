/* SPDX-License-Identifier: MIT */
/*
 * eventloop.c - an event loop that does real work per event:
 * the comparison a user makes when deciding what to leave on in a test run.
 *
 * bench-eventloop-{plain,asan,odebug} [EVENTS]
 *	4096 connections, each with a timer in the timer wheel of
 *	examples/timer-wheel (annotated for libodebug).  Each event picks a
 *	connection, re-arms its idle timer (timer_del + timer_add: two
 *	annotation calls), parses the connection's 512-byte request (request
 *	line and headers), hashes it (FNV-1a) and builds a 512-byte reply.
 *	Every 16 events the wheel ticks and expires idle connections, which
 *	the next event on them re-arms.  The work is fixed: the same for every
 *	build, so ASan's and memcheck's instrumentation of loads and stores
 *	shows as it would in a real server, and nobody tunes the ratio.
 *	Built from this one source plain (-DODEBUG_DISABLE), with
 *	-fsanitize=address, and linked with libodebug; memcheck runs the plain
 *	build.  Prints a checksum (equal in every build) and the time.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "timer.h"

#define CONNS		4096
#define MSG		512
#define IDLE_TICKS	1024	/* beyond the mean gap between two events on a connection */

struct conn {
	struct timer idle;
	unsigned long expired;
	char request[MSG];
	char reply[MSG];
};

static struct conn *conns;
static unsigned long expired_total;

static void conn_idle(struct timer *t)
{
	struct conn *c = (struct conn *)((char *)t - offsetof(struct conn, idle));

	c->expired++;
	expired_total++;
}

/* A request: a request line, headers, a blank line, padding to 512 bytes. */
static void make_request(char *buf, unsigned long id)
{
	int n = snprintf(buf, MSG,
			 "GET /objects/%lu/state?verbose=%lu HTTP/1.1\r\n"
			 "Host: bench.example\r\n"
			 "User-Agent: odebug-eventloop/1.0\r\n"
			 "Accept: application/json\r\n"
			 "X-Request-Id: %08lx-%04lx\r\n"
			 "X-Trace: %016lx\r\n"
			 "Connection: keep-alive\r\n"
			 "\r\n",
			 id, id & 1, id * 2654435761ul & 0xfffffffful, id & 0xffff,
			 id * 0x9e3779b97f4a7c15ul);
	for (; n < MSG; n++)
		buf[n] = (char)('a' + n % 26);
}

struct parsed {
	const char *path;
	int path_len, headers, keep_alive;
	unsigned long content;
};

/* Split the request into its line and headers, byte by byte. */
static void parse(const char *req, struct parsed *p)
{
	int i = 0, line = 0, start = 0;

	memset(p, 0, sizeof(*p));
	while (i < MSG && req[i] != ' ')
		i++;
	p->path = req + ++i;
	while (i < MSG && req[i] != ' ')
		i++;
	p->path_len = (int)(req + i - p->path);
	for (; i + 1 < MSG; i++) {
		if (req[i] != '\r' || req[i + 1] != '\n')
			continue;
		if (i == start)
			break;		/* the blank line */
		if (line++ > 0) {
			const char *h = req + start;
			int len = i - start, colon = 0;

			while (colon < len && h[colon] != ':')
				colon++;
			p->headers++;
			if (colon == 10 && !memcmp(h, "Connection", 10))
				p->keep_alive = len - colon > 6 && h[colon + 2] == 'k';
		}
		start = i + 2;
		i++;
	}
	for (i = start; i < MSG; i++)		/* the body: count its letters */
		p->content += (unsigned char)req[i] >= 'a';
}

static uint64_t fnv1a(const char *s, int len)
{
	uint64_t h = 0xcbf29ce484222325ull;
	int i;

	for (i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static void build_reply(char *out, const struct parsed *p, uint64_t h)
{
	static const char hex[] = "0123456789abcdef";
	static const char head[] = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n";
	int i = 0, j;

	for (j = 0; head[j]; j++)
		out[i++] = head[j];
	for (j = 0; j < p->path_len && i < MSG / 2; j++)
		out[i++] = p->path[j];
	for (; i < MSG; i++)
		out[i] = hex[(h >> ((i & 15) * 4)) & 15] ^ (char)(p->headers + p->keep_alive);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	unsigned long events = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000;
	unsigned long i, seed = 1;
	uint64_t sum = 0;
	double t0;

	conns = calloc(CONNS, sizeof(*conns));
	if (!conns)
		return 1;
	for (i = 0; i < CONNS; i++) {
		timer_init(&conns[i].idle, conn_idle);
		make_request(conns[i].request, i);
		timer_add(&conns[i].idle, timer_now() + IDLE_TICKS);
	}
	t0 = now_s();
	for (i = 0; i < events; i++) {
		struct conn *c;
		struct parsed p;
		uint64_t h;

		seed = seed * 6364136223846793005ul + 1442695040888963407ul;
		c = &conns[(seed >> 33) % CONNS];
		/* Re-arm the idle timer: deactivate, activate. */
		timer_del(&c->idle);
		timer_add(&c->idle, timer_now() + IDLE_TICKS);
		parse(c->request, &p);
		h = fnv1a(c->request, MSG);
		build_reply(c->reply, &p, h);
		sum += h ^ (uint64_t)(unsigned char)c->reply[(seed >> 20) % MSG] ^ p.content;
		if ((i & 15) == 15)
			timer_tick();
	}
	printf("events=%lu checksum=%016llx expired=%lu s=%.6f ns_per_event=%.1f\n",
	       events, (unsigned long long)sum, expired_total, now_s() - t0,
	       (now_s() - t0) * 1e9 / (double)events);
	for (i = 0; i < CONNS; i++)
		timer_del(&conns[i].idle);
	free(conns);
	return 0;
}
