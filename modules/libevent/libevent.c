/* SPDX-License-Identifier: MIT */
/*
 * libevent.c - libodebug-libevent.so, the annotation module of libevent 2.1
 * (modules/README.md, odebug-shim(7)): the system's unmodified
 * libevent-2.1.so.7 or libevent_core-2.1.so.7.
 *
 * A struct event is ACTIVE while it is pending (added): event_assign() and
 * event_new() init it, event_add() activates it (re-adding a pending event
 * is legal: rearm), event_del() deactivates it, event_free() frees it.  A
 * non-persistent event stops being pending when it fires: its callback goes
 * through a trampoline that deactivates it first.  event_base_free()
 * deletes every pending event of its base, so they are deactivated before
 * it.  Releasing the memory of a pending event is reported at the free(),
 * and fixup_free takes the event out of its base (event_del).
 *
 * event_set() (the 1.4 API, with evtimer_set() and signal_set() over it)
 * inits like event_assign().  Only the program's own events are tracked: an event_assign() or
 * event_new() called from inside libevent (its internal events, the events
 * of bufferevents and of event_base_once()) is left alone, since libevent
 * adds and deletes those through internal functions no hook sees.
 * evtimer_*() and evsignal_*() are macros over event_*(): covered.
 *
 * Bufferevents are not covered.  A bufferevent's memory and its two
 * events are libevent's: the program ends it with bufferevent_free(),
 * which deletes the events itself and releases the memory when the last
 * reference goes, so its events are never freed pending by the program,
 * and libevent adds and deletes them through internal calls no hook sees
 * (tracking them would report libevent's own correct use).  What is left
 * unchecked is the program's callback argument (bufferevent_setcb's
 * cbarg, typically the connection) freed while the bufferevent is still
 * enabled with its callbacks set: that would need the callback argument
 * held as the GLib module holds a source's data, which this module does
 * not do.
 *
 * libevent calls its exported functions through its PLT (event_free calls
 * event_del, event_new calls event_assign): those calls reach the wrappers
 * too, which must not annotate twice.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <event2/event.h>

#include "odebug.h"
#include "odebug-module.h"

static int (*real_assign)(struct event *, struct event_base *, evutil_socket_t,
			  short, event_callback_fn, void *);
static void (*real_set)(struct event *, evutil_socket_t, short, event_callback_fn, void *);
static struct event *(*real_new)(struct event_base *, evutil_socket_t, short,
				 event_callback_fn, void *);
static int (*real_add)(struct event *, const struct timeval *);
static int (*real_del)(struct event *);
static void (*real_free)(struct event *);
static void (*real_base_free)(struct event_base *);
static void (*real_base_free_nofinalize)(struct event_base *);
static event_callback_fn (*real_get_callback)(const struct event *);
static int (*real_foreach)(struct event_base *, event_base_foreach_event_cb, void *);

/* Inside event_set(), whose own event_assign() comes from libevent. */
static __thread int in_set;

/* libevent's own code: calls from there are its internal events. */
static uintptr_t lib_lo, lib_hi;

#define FROM_LIBEVENT() \
	((uintptr_t)__builtin_return_address(0) - lib_lo < lib_hi - lib_lo)

/*
 * The events this module tracks, and a one-shot event's own callback while
 * its trampoline stands in: open addressing keyed by the event's address,
 * so event_add() and event_del() know an event is the program's with one
 * lockless probe (no lookup in libodebug's table).  Written under
 * slots_lock at init; read, and cleared by compare-and-swap, without it
 * (the hint and the fixup run inside a report and free()).  A persistent
 * event's slot whose event is no longer tracked (its memory was freed) is
 * reused; a trampoline's only when its address is assigned again, so a
 * one-shot callback is never lost.  Full: the event is not tracked (never
 * a false report).
 */
#define SLOTS	(1 << 16)
#define TOMB	((struct event *)1)
static struct slot {
	struct event *ev;
	event_callback_fn cb;	/* NULL: no trampoline */
	void *arg;
} slots[SLOTS];
static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;

static size_t hash(const struct event *ev)
{
	return ((uintptr_t)ev >> 4) * 0x9e3779b97f4a7c15ULL >> 48;	/* 16 bits */
}

static struct slot *slot_find(const struct event *ev)
{
	size_t i = hash(ev), n;

	for (n = 0; n < SLOTS; n++, i = (i + 1) % SLOTS) {
		struct event *e = __atomic_load_n(&slots[i].ev, __ATOMIC_ACQUIRE);

		if (e == ev)
			return &slots[i];
		if (!e)
			return NULL;
	}
	return NULL;
}

/* A slot for the event (under slots_lock): its own, else a free one. */
static struct slot *slot_make(struct event *ev)
{
	struct slot *s = slot_find(ev), *reuse = NULL;
	size_t i = hash(ev), n;

	if (s)
		return s;
	for (n = 0; n < SLOTS && !reuse; n++, i = (i + 1) % SLOTS) {
		struct event *e = slots[i].ev;

		/* A trampoline's slot stays until its address is assigned again. */
		if (!e || e == TOMB || (!slots[i].cb &&
		    debug_object_get_state(e) == ODEBUG_STATE_NOTAVAILABLE))
			reuse = &slots[i];
	}
	return reuse;
}

/* Drop the event's slot (lockless: a fixup runs inside free()). */
static void slot_forget(struct event *ev)
{
	struct slot *s = slot_find(ev);

	if (s)
		__atomic_compare_exchange_n(&s->ev, &ev, TOMB, false,
					    __ATOMIC_RELEASE, __ATOMIC_RELAXED);
}

static void *event_hint(void *addr);
static bool event_fixup_free(void *addr, enum debug_obj_state state);

static const struct debug_obj_descr event_descr = {
	.name = "libevent_event",
	.debug_hint = event_hint,
	.fixup_free = event_fixup_free,
};

/* The program's event, tracked (one lockless probe). */
static bool tracked(const struct event *ev)
{
	return slot_find(ev) != NULL;
}

/* A one-shot event fires: it is no longer pending. */
static void trampoline(evutil_socket_t fd, short what, void *arg)
{
	struct event *ev = arg;
	struct slot *s = slot_find(ev);
	event_callback_fn cb = s ? s->cb : NULL;
	void *cb_arg = s ? s->arg : NULL;

	if (s)
		debug_object_deactivate(ev, &event_descr);
	if (cb)
		cb(fd, what, cb_arg);
}

/* The hint: the event's own callback (reads only). */
static void *event_hint(void *addr)
{
	struct event *ev = addr;
	event_callback_fn cb = real_get_callback(ev);
	struct slot *s;

	if (cb == trampoline && (s = slot_find(ev)) && s->cb)
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
	slot_forget(addr);
	return true;
}

/*
 * Remember the event as the program's; a one-shot one (not EV_PERSIST,
 * with a callback) gets the trampoline in place of its callback.  False
 * when the table is full: the event is then not tracked.
 */
static bool remember(struct event *ev, short events, event_callback_fn *cb, void **arg)
{
	bool oneshot = !(events & EV_PERSIST) && *cb;
	struct slot *s;

	pthread_mutex_lock(&slots_lock);
	s = slot_make(ev);
	if (s) {
		s->cb = oneshot ? *cb : NULL;
		s->arg = oneshot ? *arg : NULL;
		__atomic_store_n(&s->ev, ev, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&slots_lock);
	if (!s)
		return false;
	if (oneshot) {
		*cb = trampoline;
		*arg = ev;
	}
	return true;
}

/* Drop what was tracked at ev (a re-assign, or an untracked new event). */
static void untrack(struct event *ev)
{
	slot_forget(ev);
	if (debug_object_get_state(ev) == ODEBUG_STATE_NOTAVAILABLE)
		return;
	if (debug_object_get_state(ev) == ODEBUG_STATE_ACTIVE)
		debug_object_deactivate(ev, &event_descr);
	debug_object_free(ev, &event_descr);
}

static int wrap_assign(struct event *ev, struct event_base *base, evutil_socket_t fd,
		       short events, event_callback_fn cb, void *arg)
{
	bool track;
	int ret;

	if (FROM_LIBEVENT()) {
		if (!in_set)
			slot_forget(ev);	/* libevent's own now */
		return real_assign(ev, base, fd, events, cb, arg);
	}
	untrack(ev);
	track = remember(ev, events, &cb, &arg);
	ret = real_assign(ev, base, fd, events, cb, arg);
	if (ret == 0 && track)
		debug_object_init_auto(ev, &event_descr);	/* heap, static or stack */
	else if (track)
		slot_forget(ev);
	return ret;
}

/* The 1.4 API (memcached, tmux): event_assign() on the current base. */
static void wrap_set(struct event *ev, evutil_socket_t fd, short events,
		     event_callback_fn cb, void *arg)
{
	bool track;

	if (FROM_LIBEVENT()) {
		real_set(ev, fd, events, cb, arg);
		return;
	}
	untrack(ev);
	track = remember(ev, events, &cb, &arg);
	in_set++;
	real_set(ev, fd, events, cb, arg);	/* its event_assign() is libevent's */
	in_set--;
	if (track)
		debug_object_init_auto(ev, &event_descr);
}

static struct event *wrap_new(struct event_base *base, evutil_socket_t fd, short events,
			      event_callback_fn cb, void *arg)
{
	struct event *ev;

	if (FROM_LIBEVENT())
		return real_new(base, fd, events, cb, arg);
	/* libevent's own event_assign() inside is not tracked: assign here. */
	ev = real_new(base, fd, events, cb, arg);
	if (ev && wrap_assign(ev, base, fd, events, cb, arg))
		untrack(ev);
	return ev;
}

static int wrap_add(struct event *ev, const struct timeval *tv)
{
	int ret = real_add(ev, tv);

	if (ret == 0 && !FROM_LIBEVENT() && tracked(ev))
		debug_object_rearm(ev, &event_descr);	/* re-adding is legal */
	return ret;
}

static int wrap_del(struct event *ev)
{
	int ret = real_del(ev);

	if (ret == 0 && tracked(ev))
		debug_object_deactivate(ev, &event_descr);
	return ret;
}

static void wrap_free(struct event *ev)
{
	if (ev && tracked(ev)) {
		real_del(ev);
		untrack(ev);
	}
	real_free(ev);
}

/* event_base_free() deletes its pending events: no longer pending. */
static int base_event_gone(const struct event_base *base, const struct event *ev, void *arg)
{
	(void)base;
	(void)arg;
	if (debug_object_get_state(ev) == ODEBUG_STATE_ACTIVE)
		debug_object_deactivate((void *)ev, &event_descr);
	return 0;
}

static void wrap_base_free(struct event_base *base)
{
	if (base)
		real_foreach(base, base_event_gone, NULL);
	real_base_free(base);
}

static void wrap_base_free_nofinalize(struct event_base *base)
{
	if (base)
		real_foreach(base, base_event_gone, NULL);
	real_base_free_nofinalize(base);
}

/* Find libevent's extent, for FROM_LIBEVENT(). */
static int find_lib(struct dl_phdr_info *info, size_t size, void *data)
{
	uintptr_t fbase = (uintptr_t)data, lo = UINTPTR_MAX, hi = 0;
	int i;

	(void)size;
	if (info->dlpi_addr != fbase)
		return 0;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD)
			continue;
		if (info->dlpi_addr + ph->p_vaddr < lo)
			lo = info->dlpi_addr + ph->p_vaddr;
		if (info->dlpi_addr + ph->p_vaddr + ph->p_memsz > hi)
			hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
	}
	lib_lo = lo;
	lib_hi = hi;
	return 1;
}

static void attach(void)
{
	Dl_info di;

	if (dladdr(*(void **)&real_add, &di))
		dl_iterate_phdr(find_lib, di.dli_fbase);
}

#define HOOK(name, wrapper, real) { name, (void *)(wrapper), (void **)&(real) }

ODEBUG_MODULE_EXPORT const struct odebug_module odebug_module = {
	.abi = ODEBUG_MODULE_ABI,
	.name = "libevent",
	.hooks = (const struct odebug_hook[]){
		HOOK("event_assign", wrap_assign, real_assign),
		HOOK("event_new", wrap_new, real_new),
		HOOK("event_set", wrap_set, real_set),
		HOOK("event_add", wrap_add, real_add),
		HOOK("event_del", wrap_del, real_del),
		HOOK("event_free", wrap_free, real_free),
		HOOK("event_base_free", wrap_base_free, real_base_free),
		HOOK("event_base_free_nofinalize", wrap_base_free_nofinalize,
		     real_base_free_nofinalize),
		HOOK("event_get_callback", NULL, real_get_callback),
		HOOK("event_base_foreach_event", NULL, real_foreach),
		{ NULL, NULL, NULL },
	},
	.attach = attach,
};
