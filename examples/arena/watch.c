/* SPDX-License-Identifier: MIT */
/*
 * watch.c - the event loop's list of started watches.
 *
 * Like any intrusive list it trusts its callers: a started watch whose
 * memory is recycled stays linked, and the loop walks into whatever was
 * written there on its next round.  It notices the broken magic and
 * aborts, far from the code that forgot watch_stop().  The annotation lets
 * libodebug catch the memory going instead, and the fixup unlinks the watch.
 */
#include <stdio.h>
#include <stdlib.h>

#include "odebug.h"
#include "watch.h"

static struct watch *started;
static unsigned long nstarted;

static const struct debug_obj_descr watch_debug_descr;

static void unlink_watch(struct watch *w)
{
	*w->pprev = w->next;
	if (w->next)
		w->next->pprev = w->pprev;
	w->next = NULL;
	w->pprev = NULL;
	nstarted--;
}

/* fixup_free: the memory of a started watch is released or recycled. */
static bool watch_fixup_free(void *addr, enum debug_obj_state state)
{
	struct watch *w = addr;

	if (state != ODEBUG_STATE_ACTIVE)
		return false;
	if (w->pprev)
		unlink_watch(w);
	debug_object_deactivate(w, &watch_debug_descr);
	debug_object_free(w, &watch_debug_descr);
	return true;
}

/* The callback tells which watch it is: printed as the report's "hint:". */
static void *watch_debug_hint(void *addr)
{
	return (void *)((struct watch *)addr)->callback;
}

static const struct debug_obj_descr watch_debug_descr = {
	.name = "watch",
	.debug_hint = watch_debug_hint,
	.fixup_free = watch_fixup_free,
};

void watch_init(struct watch *w, int fd, void (*callback)(struct watch *w))
{
	debug_object_init(w, &watch_debug_descr);
	w->next = NULL;
	w->pprev = NULL;
	w->fd = fd;
	w->callback = callback;
	w->magic = WATCH_MAGIC;
}

void watch_start(struct watch *w)
{
	/* Started twice: "activate active" under ODEBUG, and ignored. */
	debug_object_activate(w, &watch_debug_descr);
	if (w->pprev)
		return;
	w->next = started;
	if (started)
		started->pprev = &w->next;
	w->pprev = &started;
	started = w;
	nstarted++;
}

void watch_stop(struct watch *w)
{
	if (!w->pprev)
		return;
	debug_object_deactivate(w, &watch_debug_descr);
	unlink_watch(w);
}

unsigned long watches_started(void)
{
	return nstarted;
}

void loop_poll(void)
{
	struct watch *w, *next;

	for (w = started; w; w = next) {
		if (w->magic != WATCH_MAGIC) {
			fprintf(stderr, "event loop: corrupted watch %p (magic 0x%08x, "
				"expected 0x%08x): aborting\n",
				(void *)w, w->magic, WATCH_MAGIC);
			abort();
		}
		next = w->next;
		w->callback(w);
	}
}
