/* SPDX-License-Identifier: MIT */
/*
 * session.c - refcounted sessions from a fixed pool.
 *
 * The last session_put() gives the slot back to the pool, which keeps its
 * free list in the free slots themselves (as malloc does).  No free() is
 * involved, so nothing but the pool notices a stale session pointer, and
 * the pool only when its free list is already corrupt.
 *
 * The annotation: every operation on a session (get, put, send) activates
 * it while it changes the session and deactivates it after, and the last
 * put destroys it.  A later get, put or send through a stale pointer then
 * activates a DESTROYED object: libodebug reports "activate destroyed" with
 * the culprit's backtrace and returns -EINVAL, and the operation is refused
 * instead of writing into a dead slot (the kernel's call_rcu() refuses a
 * double call the same way).  A slot is only forgotten (debug_object_free)
 * when the pool hands it out again; from then on a stale pointer designates
 * a live session, which no tool can tell from a good one.
 *
 * Operations on a session do not nest; a threaded version would hold the
 * session's lock across each one, which keeps them from nesting too.
 */
#include <stdio.h>
#include <stdlib.h>

#include "odebug.h"
#include "session.h"

#define NSLOTS 4

static struct session slots[NSLOTS];
static struct session *free_list;
static int pool_ready, next_id = 1;

/* The deliver function tells sessions apart: printed as the "hint:". */
static void *session_debug_hint(void *addr)
{
	return (void *)((struct session *)addr)->deliver;
}

static const struct debug_obj_descr session_debug_descr = {
	.name = "session",
	.debug_hint = session_debug_hint,
};

static struct session *pool_take(void)
{
	struct session *s;
	size_t i;

	if (!pool_ready) {
		for (i = NSLOTS; i-- > 0;) {
			slots[i].u.next_free = free_list;
			free_list = &slots[i];
		}
		pool_ready = 1;
	}
	s = free_list;
	if (!s)
		return NULL;
	if (s < slots || s >= slots + NSLOTS ||
	    (size_t)((char *)s - (char *)slots) % sizeof(*s)) {
		fprintf(stderr, "session pool: corrupted free list (%p is not a "
			"session slot): aborting\n", (void *)s);
		abort();
	}
	free_list = s->u.next_free;
	return s;
}

struct session *session_open(const char *user,
			     void (*deliver)(struct session *s, const char *text))
{
	struct session *s = pool_take();

	if (!s)
		return NULL;
	debug_object_free(s, &session_debug_descr);	/* its last life */
	debug_object_init(s, &session_debug_descr);
	s->u.last_notice = NULL;
	s->refs = 1;
	s->id = next_id++;
	snprintf(s->user, sizeof(s->user), "%s", user);
	s->deliver = deliver;
	return s;
}

struct session *session_get(struct session *s)
{
	if (debug_object_activate(s, &session_debug_descr))
		return NULL;
	s->refs++;
	debug_object_deactivate(s, &session_debug_descr);
	return s;
}

void session_put(struct session *s)
{
	unsigned int refs;

	if (debug_object_activate(s, &session_debug_descr))
		return;
	refs = --s->refs;
	debug_object_deactivate(s, &session_debug_descr);
	if (refs)
		return;
	debug_object_destroy(s, &session_debug_descr);
	s->u.next_free = free_list;
	free_list = s;
}

int session_send(struct session *s, const char *text)
{
	if (debug_object_activate(s, &session_debug_descr))
		return -1;
	s->u.last_notice = text;
	debug_object_deactivate(s, &session_debug_descr);
	s->deliver(s, text);	/* outside: it may take a reference */
	return 0;
}
