/* SPDX-License-Identifier: MIT */
/*
 * event-odebug.c - an LD_PRELOAD shim that annotates libevent's events
 * from outside, with the method of odebug-shim(7).  libevent itself is the
 * system's unmodified libevent-2.1.
 *
 * An event is ACTIVE while it is pending (added): event_assign() is init,
 * event_add() re-arms (re-adding a pending event is legal), event_del()
 * deactivates, event_free() frees.  A non-persistent event stops being
 * pending when it fires: its callback goes through a trampoline that
 * deactivates it first.  Releasing the memory of a pending event is then
 * reported at the free(), and fixup_free removes the event from its base.
 *
 * usage: LD_PRELOAD="libodebug.so.1 libevent-odebug.so" ODEBUG=1 ./app
 * (libodebug first: it must see free() before anything else).
 *
 * libevent calls its own exported functions through the PLT (event_new
 * calls event_assign, event_free calls event_del), so those internal
 * calls reach the wrappers too: no wrapper for event_new is needed, and
 * the wrappers must not annotate twice.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <event2/event.h>

#include "odebug.h"

#define EXPORT __attribute__((visibility("default")))

static int (*real_assign)(struct event *, struct event_base *, evutil_socket_t,
			  short, event_callback_fn, void *);
static int (*real_add)(struct event *, const struct timeval *);
static int (*real_del)(struct event *);
static void (*real_free)(struct event *);

/* A non-persistent event's own callback, while its trampoline stands in. */
#define SLOTS 4096
static struct slot {
	struct event *ev;
	event_callback_fn cb;
	void *arg;
} slots[SLOTS];
static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;

/* Inside the real event_free(), whose own event_del() comes back here. */
static __thread int freeing;

static struct slot *slot_of(struct event *ev, bool make)
{
	size_t i = ((uintptr_t)ev >> 4) % SLOTS, n;

	for (n = 0; n < SLOTS; n++, i = (i + 1) % SLOTS) {
		if (slots[i].ev == ev)
			return &slots[i];
		if (!slots[i].ev)
			return make ? &slots[i] : NULL;
	}
	return NULL;
}

static void forget(struct event *ev)
{
	struct slot *s;

	pthread_mutex_lock(&slots_lock);
	s = slot_of(ev, false);
	if (s)
		s->ev = (struct event *)1;	/* a tombstone: probing goes on */
	pthread_mutex_unlock(&slots_lock);
}

static void *event_hint(void *addr);
static bool event_fixup_free(void *addr, enum debug_obj_state state);

static const struct debug_obj_descr event_descr = {
	.name = "libevent_event",
	.debug_hint = event_hint,
	.fixup_free = event_fixup_free,
};

static void trampoline(evutil_socket_t fd, short what, void *arg)
{
	struct event *ev = arg;
	event_callback_fn cb = NULL;
	void *cb_arg = NULL;
	struct slot *s;

	pthread_mutex_lock(&slots_lock);
	s = slot_of(ev, false);
	if (s) {
		cb = s->cb;
		cb_arg = s->arg;
	}
	pthread_mutex_unlock(&slots_lock);
	debug_object_deactivate(ev, &event_descr);	/* fired: no longer pending */
	if (cb)
		cb(fd, what, cb_arg);
}

/* The hint: the event's own callback (only reads). */
static void *event_hint(void *addr)
{
	struct event *ev = addr;
	event_callback_fn cb = event_get_callback(ev);
	struct slot *s;

	if (cb == trampoline && (s = slot_of(ev, false)))
		cb = s->cb;
	return *(void **)&cb;
}

/* The memory of a pending event goes: take it out of its base first. */
static bool event_fixup_free(void *addr, enum debug_obj_state state)
{
	if (state != ODEBUG_STATE_ACTIVE)
		return false;
	real_del(addr);
	debug_object_deactivate(addr, &event_descr);
	debug_object_free(addr, &event_descr);
	forget(addr);
	return true;
}

__attribute__((constructor)) static void shim_init(void)
{
	*(void **)&real_assign = dlsym(RTLD_NEXT, "event_assign");
	*(void **)&real_add = dlsym(RTLD_NEXT, "event_add");
	*(void **)&real_del = dlsym(RTLD_NEXT, "event_del");
	*(void **)&real_free = dlsym(RTLD_NEXT, "event_free");
	/* Reports and origins name the program's call, not these wrappers. */
	debug_objects_skip_module((void *)shim_init);
}

EXPORT int event_assign(struct event *ev, struct event_base *base, evutil_socket_t fd,
			short events, event_callback_fn cb, void *arg)
{
	struct slot *s = NULL;
	int ret;

	if (!(events & EV_PERSIST) && cb) {
		pthread_mutex_lock(&slots_lock);
		s = slot_of(ev, true);
		if (s) {
			s->ev = ev;
			s->cb = cb;
			s->arg = arg;
			cb = trampoline;
			arg = ev;
		}
		pthread_mutex_unlock(&slots_lock);
	} else {
		forget(ev);
	}
	ret = real_assign(ev, base, fd, events, cb, arg);
	if (ret == 0)
		debug_object_init_auto(ev, &event_descr);	/* heap, static or stack */
	return ret;
}

EXPORT int event_add(struct event *ev, const struct timeval *tv)
{
	int ret = real_add(ev, tv);

	if (ret == 0)
		debug_object_rearm(ev, &event_descr);	/* re-adding is legal */
	return ret;
}

EXPORT int event_del(struct event *ev)
{
	int ret = real_del(ev);

	if (ret == 0 && !freeing)	/* event_free() untracked it already */
		debug_object_deactivate(ev, &event_descr);
	return ret;
}

EXPORT void event_free(struct event *ev)
{
	if (ev) {
		real_del(ev);
		debug_object_deactivate(ev, &event_descr);
		debug_object_free(ev, &event_descr);
		forget(ev);
	}
	freeing++;
	real_free(ev);
	freeing--;
}
