/* SPDX-License-Identifier: MIT */
/*
 * libevent.c - libodebug-libevent.so, the annotation module of libevent 2.1
 * (modules/README.md, odebug-shim(7)): the system's unmodified
 * libevent-2.1.so.7 or libevent_core-2.1.so.7.
 *
 * The module observes and never substitutes: every wrapper calls libevent
 * with the arguments it was given and returns what libevent returned, so
 * the program and libevent see their own callbacks and arguments
 * (event_get_callback(), event_get_assignment(), event_self_cbarg(),
 * finalizers, event_base_foreach_event()).
 *
 * A struct event is tracked ACTIVE from the event_assign(), event_set() or
 * event_new() that makes it, whoever calls it (the program, or libevent
 * for the events of bufferevents and of event_base_once()), until its
 * memory is released.  Whether libevent still holds it is asked of
 * libevent when that matters, at the free (odebug_module.released): its
 * own flags, read from the public struct layout (<event2/event_struct.h>).
 * Pending (added, timeout armed) or active (its callback queued): libevent
 * will touch the memory again, and the free is reported; the fixup takes
 * the event out of its base without waiting (event_del_noblock()).
 * Otherwise (never added, deleted, fired, freed by event_free(), deleted
 * by event_base_free(), or only finalizing, libevent's own teardown) the
 * tracker goes silently.  So nothing is mirrored: a one-shot event that
 * fired, an event deleted by libevent's internal calls, or one made by a
 * libevent built with other flags (event_set() tail-calling
 * event_assign() under -DNDEBUG, or calling it directly) is judged by the
 * same flags.
 *
 * Tracking is idempotent: an address tracked already (an event assigned
 * again, or event_new()'s own event_assign() seen through libevent's PLT)
 * stays as it is, one lockless debug_object_rearm() when the module knows
 * the tracker there is its own (known[]).  An event on the calling
 * thread's stack is marked first, so that a returned frame's event goes
 * with its frame; a returned frame's bytes may be reused, so libevent's
 * flags cannot be read there, and the module, which keeps no record of
 * the event's state, stays silent.
 *
 * An event added on a descriptor (EV_READ, EV_WRITE or EV_CLOSED) is a
 * watch of it (odebug_services, lib/checks/fd, odebug-fd(7)).  libevent's
 * own code closes a descriptor and deletes its event right after (its DNS
 * server's port, its HTTP connections), so a close of a watched
 * descriptor is made and judged at that thread's next poll by libevent's
 * loop for the event's base: an event still pending on the descriptor
 * then polls whatever file takes the number, and is reported with the
 * close's stack, its fixup deleting it (event_del_noblock()).  Pending is
 * libevent's word, read from the event's flags at the poll; the loop is
 * the one event_base_loop() runs on this thread.
 *
 * Bufferevents are not covered beyond this: a bufferevent's events are
 * libevent's and it deletes them before releasing their memory (silent);
 * the program's callback argument (bufferevent_setcb's cbarg) freed while
 * the bufferevent is enabled is not checked.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <event2/event.h>
#include <event2/event_struct.h>

#include "odebug.h"
#include "odebug-module.h"

static int (*real_assign)(struct event *, struct event_base *, evutil_socket_t,
			  short, event_callback_fn, void *);
static void (*real_set)(struct event *, evutil_socket_t, short, event_callback_fn, void *);
static struct event *(*real_new)(struct event_base *, evutil_socket_t, short,
				 event_callback_fn, void *);
static int (*real_del_noblock)(struct event *);
static size_t (*real_event_size)(void);
static int (*real_add)(struct event *, const struct timeval *);
static int (*real_loop)(struct event_base *, int);

/* libodebug's services (the watches of descriptors), or NULL. */
static const struct odebug_services *svc;

/* The flags that say libevent holds the event: pending, or queued to run. */
#define HELD	(EVLIST_TIMEOUT | EVLIST_INSERTED | EVLIST_ACTIVE | EVLIST_ACTIVE_LATER)

/* The library's struct event is the one these headers describe (attach). */
static bool layout_ok;

static void *event_hint(void *addr);
static bool event_fixup_free(void *addr, enum debug_obj_state state);
static void watch_end(const struct event *ev, bool gone);

/* An event not tracked yet is tracked by its first activate. */
static bool untracked_event(void *addr)
{
	(void)addr;
	return true;
}

static const struct debug_obj_descr event_descr = {
	.name = "libevent_event",
	.debug_hint = event_hint,
	.fixup_free = event_fixup_free,
	.is_static_object = untracked_event,
};

/* libevent's flags of the event: a read, no lock (its base may be gone). */
static short event_flags(const struct event *ev)
{
	return __atomic_load_n(&ev->ev_evcallback.evcb_flags, __ATOMIC_RELAXED);
}

/*
 * Does libevent hold @ev?  Only what still reads as an event libevent set
 * up is judged: EVLIST_INIT and no flag libevent never sets (memory used
 * again as something else without a free: a destroyed mutex's kind is
 * -1), and a base, which a pending or queued event has.
 */
static bool held(const struct event *ev)
{
	short f = event_flags(ev);

	return layout_ok && (f & ~EVLIST_ALL) == 0 && (f & EVLIST_INIT) && (f & HELD) &&
	       __atomic_load_n(&ev->ev_base, __ATOMIC_RELAXED);
}

/* The hint: the event's callback, read from the struct (reads only). */
static void *event_hint(void *addr)
{
	const struct event *ev = addr;

	return *(void *const *)&ev->ev_evcallback.evcb_cb_union.evcb_callback;
}

/*
 * The addresses whose tracker is known to be the module's, one per hash
 * (direct-mapped, racy like a cache): a hit lets an event assigned again
 * be tracked by one lockless rearm; a miss (the first assign, an entry
 * evicted or cleared) goes the slower way, which also replaces another
 * type's tracker left at the address by memory used again without a free.
 * An entry is cleared when its tracker goes (released, the fixup): a stale
 * one can only keep a tracker of another type that came since, as a
 * missed report.
 */
#define KNOWN_BITS	14
static const struct event *known[1 << KNOWN_BITS];

static const struct event **known_of(const void *addr)
{
	return &known[((uintptr_t)addr * 0x9e3779b97f4a7c15ull) >> (64 - KNOWN_BITS)];
}

/* Its tracker goes: forget it (lockless; in free() and on the report path). */
static void forget(const void *addr)
{
	const struct event *ev = addr;

	__atomic_compare_exchange_n(known_of(addr), &ev, NULL, false, __ATOMIC_RELAXED,
				    __ATOMIC_RELAXED);
}

/* The memory of a held event goes: take it out of its base, not waiting. */
static bool event_fixup_free(void *addr, enum debug_obj_state state)
{
	if (state != ODEBUG_STATE_ACTIVE || !held(addr))
		return false;
	real_del_noblock(addr);
	debug_object_deactivate(addr, &event_descr);
	debug_object_free(addr, &event_descr);
	forget(addr);
	return true;
}

/*
 * libevent's word at a release (odebug_module.released).  @gone: the
 * bytes may be another frame's now, and the module has no record of the
 * event's state: silent.
 */
static bool event_released(const struct debug_obj_descr *descr, void *addr, bool gone)
{
	if (descr != &event_descr)
		return false;
	watch_end(addr, gone);	/* the memory goes, reported or not */
	if (!gone && held(addr))
		return false;
	forget(addr);
	return true;
}

static void put_str(char *buf, size_t cap, size_t *n, const char *str)
{
	while (*str && *n + 1 < cap)
		buf[(*n)++] = *str++;
	buf[*n] = '\0';
}

static void put_num(char *buf, size_t cap, size_t *n, uintptr_t v, unsigned int radix)
{
	char tmp[2 + 2 * sizeof(v) + 1], *p = tmp + sizeof(tmp) - 1;

	*p = '\0';
	do
		*--p = "0123456789abcdef"[v % radix];
	while (v /= radix);
	if (radix == 16) {
		*--p = 'x';
		*--p = '0';
	}
	put_str(buf, cap, n, p);
}

static void put_what(char *buf, size_t cap, size_t *n, short what)
{
	static const struct { short bit; const char *name; } names[] = {
		{ EV_TIMEOUT, "EV_TIMEOUT" }, { EV_READ, "EV_READ" },
		{ EV_WRITE, "EV_WRITE" }, { EV_SIGNAL, "EV_SIGNAL" },
		{ EV_PERSIST, "EV_PERSIST" }, { EV_ET, "EV_ET" },
		{ EV_CLOSED, "EV_CLOSED" },
	};
	const char *sep = "";
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (what & names[i].bit) {
			put_str(buf, cap, n, sep);
			put_str(buf, cap, n, names[i].name);
			sep = "|";
		}
	if (!*sep)
		put_str(buf, cap, n, "no flags (a timer)");
}

/*
 * The holder line (odebug_module.describe): the event's fd, what it waits
 * for, its base, and what libevent's flags say now.
 */
static bool event_describe(const struct debug_obj_descr *descr, void *addr, char *buf,
			   size_t cap)
{
	const struct event *ev = addr;
	short f;
	size_t n = 0;

	if (descr != &event_descr || !layout_ok)
		return false;
	f = event_flags(ev);
	put_str(buf, cap, &n, "libevent event fd ");
	if (ev->ev_fd < 0)
		put_str(buf, cap, &n, "-1");
	else
		put_num(buf, cap, &n, (uintptr_t)ev->ev_fd, 10);
	put_str(buf, cap, &n, ", ");
	put_what(buf, cap, &n, ev->ev_events);
	put_str(buf, cap, &n, f & (EVLIST_ACTIVE | EVLIST_ACTIVE_LATER) ?
		", its callback queued to run in base " : ", pending in base ");
	put_num(buf, cap, &n, (uintptr_t)ev->ev_base, 16);
	put_str(buf, cap, &n, "; the fixup takes it out of the base "
		"(event_del_noblock) before the memory goes");
	return true;
}

/* --- watches of descriptors --------------------------------------- */

/* An event that polls its descriptor (a signal's or a timer's does not). */
static bool polls_fd(const struct event *ev)
{
	return ev->ev_fd >= 0 && (ev->ev_events & (EV_READ | EV_WRITE | EV_CLOSED)) &&
	       !(ev->ev_events & EV_SIGNAL);
}

/*
 * libevent's word: @owner is added (inserted in its base) on @fd.  Its
 * memory is read only while our tracker says it is still an event's
 * (released with its memory), so a record a free or a new assignment
 * left behind is found dead without reading freed bytes.
 */
static bool event_watch_live(const void *owner, int fd, unsigned long *id)
{
	const struct event *ev = owner;
	short f;

	(void)id;
	if (!layout_ok || debug_object_get_state((void *)ev) != ODEBUG_STATE_ACTIVE)
		return false;
	f = event_flags(ev);
	return (f & ~EVLIST_ALL) == 0 && (f & EVLIST_INIT) && (f & EVLIST_INSERTED) &&
	       ev->ev_fd == fd && polls_fd(ev);
}

/* The base whose loop runs on this thread (event_base_loop()), or NULL. */
static __thread struct event_base *looping __attribute__((tls_model("initial-exec")));

static bool event_loop_here(const void *owner)
{
	const struct event *ev = owner;

	return looping && __atomic_load_n(&ev->ev_base, __ATOMIC_RELAXED) == looping;
}

/* The fixup, from the loop's poll (its base's lock is not held there). */
static bool event_watch_stop(const void *owner)
{
	return real_del_noblock((struct event *)owner) == 0;
}

/* libevent's polls come from its backends: libevent_core, libevent. */
static const char *const libevent_code[] = { "libevent", NULL };

static const struct odebug_watch_type event_watch = {
	.owner = "libevent event",
	.how = "event_add",
	.remover = "event_del()",
	.live = event_watch_live,
	.own_code = libevent_code,
	.loop_here = event_loop_here,
	.stop = event_watch_stop,
};

/* An event added anew (not pending before) on a descriptor: a watch of it. */
static int wrap_add(struct event *ev, const struct timeval *tv)
{
	bool fresh = svc && layout_ok && !(event_flags(ev) & EVLIST_INSERTED);
	int ret = real_add(ev, tv);

	if (fresh && ret == 0 && polls_fd(ev))
		svc->watch_begin(ev->ev_fd, ev, 0, &event_watch);
	return ret;
}

/* The loop that runs on this thread, for the judgement at its poll. */
static int wrap_loop(struct event_base *base, int flags)
{
	struct event_base *outer = looping;
	int ret;

	looping = base;
	ret = real_loop(base, flags);
	looping = outer;
	return ret;
}

/*
 * @ev's memory goes: the watch of its descriptor ends now.  (One begun on
 * a descriptor it was assigned away from, or with @gone, when its bytes
 * may be another's already, is found dead at that descriptor's next
 * close: event_watch_live().)
 */
static void watch_end(const struct event *ev, bool gone)
{
	if (svc && !gone)
		svc->watch_end(ev->ev_fd, ev);
}

static void event_services(const struct odebug_services *s)
{
	if (s->version >= 1)
		svc = s;
}

/*
 * An address not known to be ours: the module's trackers are all ACTIVE,
 * so an ACTIVE one is left as it is (most likely ours, its entry evicted);
 * any other (another type's, memory used again without a free) is freed,
 * and the event tracked anew, marked first when it is on this thread's
 * stack so that its tracker goes with its frame.
 */
static void track_slow(struct event *ev)
{
	enum debug_obj_state state = debug_object_get_state(ev);

	if (state == ODEBUG_STATE_ACTIVE)
		return;
	if (state != ODEBUG_STATE_NOTAVAILABLE)
		debug_object_free(ev, &event_descr);
	if (debug_object_on_stack(ev))
		debug_object_init_on_stack(ev, &event_descr);
}

/* Track @ev, once: an address known to be ours is one lockless rearm. */
static void track(struct event *ev)
{
	const struct event **k = known_of(ev);
	int saved = errno;	/* libevent's, for the caller */

	if (!layout_ok)
		return;
	if (__atomic_load_n(k, __ATOMIC_RELAXED) != ev)
		track_slow(ev);
	debug_object_rearm(ev, &event_descr);
	__atomic_store_n(k, ev, __ATOMIC_RELAXED);
	errno = saved;
}

/*
 * The event the last event_assign() wrapper on this thread tracked:
 * event_set() and event_new() call event_assign(), through libevent's PLT
 * or not, and track only if that call was not seen.  Initial-exec: one
 * load from the thread pointer.
 */
static __thread const struct event *assigned __attribute__((tls_model("initial-exec")));

static int wrap_assign(struct event *ev, struct event_base *base, evutil_socket_t fd,
		       short events, event_callback_fn cb, void *arg)
{
	int ret = real_assign(ev, base, fd, events, cb, arg);

	if (ret == 0) {
		track(ev);
		assigned = ev;
	}
	return ret;
}

/* The 1.4 API (memcached, tmux): event_assign() on the current base. */
static void wrap_set(struct event *ev, evutil_socket_t fd, short events,
		     event_callback_fn cb, void *arg)
{
	assigned = NULL;
	real_set(ev, fd, events, cb, arg);
	if (assigned != ev)
		track(ev);
}

static struct event *wrap_new(struct event_base *base, evutil_socket_t fd, short events,
			      event_callback_fn cb, void *arg)
{
	struct event *ev;

	assigned = NULL;
	ev = real_new(base, fd, events, cb, arg);
	if (ev && assigned != ev)
		track(ev);
	return ev;
}

/* The flags are read at the offsets of these headers: the library's must match. */
static void attach(void)
{
	layout_ok = real_event_size() == sizeof(struct event);
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
		HOOK("event_base_loop", wrap_loop, real_loop),
		HOOK("event_del_noblock", NULL, real_del_noblock),
		HOOK("event_get_struct_event_size", NULL, real_event_size),
		{ NULL, NULL, NULL },
	},
	.attach = attach,
	.describe = event_describe,
	.released = event_released,
	.services = event_services,
};
