/* SPDX-License-Identifier: MIT */
/*
 * request-bug.c - a started watch left in memory an arena recycles.
 *
 * A server handles each request with memory from one arena and resets the
 * arena when the request is done.  An upload (PUT) watches the client's
 * socket for the body.  The error path for an oversized upload returns
 * without watch_stop(): the watch stays linked in the event loop while
 * arena_reset() hands its memory to the next request, which fills it with a
 * response.  Without libodebug the event loop walks into that response on
 * its next round and aborts, one request later and far from the culprit.
 * No free() is involved, so free() checks, AddressSanitizer and Valgrind
 * see nothing.  With ODEBUG=1 arena_reset() reports the started watch (its
 * callback as the hint, request_done() in the backtrace), the fixup unlinks
 * it, and the server handles every request.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "watch.h"

#define MAX_UPLOAD 65536

struct request {
	int id;
	const char *method, *path;
	size_t length;
	char *headers;
	struct watch *body;	/* PUT: the client's socket, for the body */
	char *response;
};

static struct arena request_arena;
static unsigned long body_reads;

void on_body_data(struct watch *w);
void on_body_data(struct watch *w)
{
	(void)w;
	body_reads++;
}

int request_handle(int id, const char *method, const char *path, size_t length);
int request_handle(int id, const char *method, const char *path, size_t length)
{
	struct request *req = arena_alloc(&request_arena, sizeof(*req));

	req->id = id;
	req->method = method;
	req->path = path;
	req->length = length;
	req->headers = arena_alloc(&request_arena, 64);
	snprintf(req->headers, 64, "%s %s HTTP/1.1", method, path);
	if (strcmp(method, "PUT") == 0) {
		req->body = arena_alloc(&request_arena, sizeof(*req->body));
		watch_init(req->body, 100 + id, on_body_data);
		watch_start(req->body);
		if (length > MAX_UPLOAD) {
			printf("request %d: %s: %zu bytes is too large: 413\n",
			       id, req->headers, length);
			return 413;	/* the bug: req->body is still started */
		}
		loop_poll();	/* the body arrives */
		watch_stop(req->body);
	}
	req->response = arena_alloc(&request_arena, 256);
	memset(req->response, ' ', 255);
	req->response[255] = '\0';
	printf("request %d: %s: 200\n", id, req->headers);
	return 200;
}

/* The request is over: everything it allocated goes at once. */
void request_done(void);
void request_done(void)
{
	arena_reset(&request_arena);
}

int main(void)
{
	static const struct { const char *method, *path; size_t length; } reqs[] = {
		{ "GET", "/index.html", 0 },
		{ "PUT", "/upload/small.txt", 512 },
		{ "PUT", "/upload/huge.iso", 734003200 },
		{ "GET", "/style.css", 0 },
		{ "GET", "/logo.png", 0 },
	};
	size_t i;

	setvbuf(stdout, NULL, _IONBF, 0);
	arena_init(&request_arena, 4096);
	for (i = 0; i < sizeof(reqs) / sizeof(reqs[0]); i++) {
		request_handle((int)i + 1, reqs[i].method, reqs[i].path, reqs[i].length);
		request_done();
		loop_poll();	/* the server waits for the next request */
	}
	arena_destroy(&request_arena);
	printf("done: %zu requests, %lu body reads, %lu watches still started\n",
	       i, body_reads, watches_started());
	return 0;
}
