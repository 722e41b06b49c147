/* SPDX-License-Identifier: MIT */
/*
 * glib-odebug.c - libodebug's module for the GLib 2.x main loop
 * (libodebug-glib.so): a source holds its callback's data pointer from
 * g_source_set_callback() (or g_timeout_add*, g_idle_add*, g_io_add_watch*,
 * g_child_watch_add*) until the source lets the callback go: removed,
 * destroyed, finalised, its callback returned G_SOURCE_REMOVE, or the
 * callback replaced.  Freeing the data before, with free(), g_free(),
 * g_slice (through malloc: G_SLICE=always-malloc before GLib 2.76) or the
 * last g_object_unref(), is reported at the free, naming the sources that
 * hold it, and the sources no longer call the program.
 *
 * How: the callback is installed with g_source_set_callback_indirect()
 * and callback functions of ours (a record per callback: the program's
 * function, data and notify).  GLib calls their unref when the source
 * drops the callback (every way of ending, GLib's own internal calls
 * included), so no exit path needs a wrapper; their get hands GLib the
 * program's function and data, so dispatch and
 * g_main_context_find_source_by_user_data() see what they always saw.
 * GLib is linked -Bsymbolic-functions: its own g_timeout_add() never
 * reaches a g_source_set_callback() hook, so each adding function is
 * wrapped and builds its source with GLib's public calls, as GLib does.
 *
 * The object tracked is the data: one tracker 3 bytes into it (an odd
 * address no annotation uses: a GObject or a struct the program annotates
 * keeps its own tracker), ACTIVE while at least one record holds it, so
 * several sources may share one data pointer, and INACTIVE after until the
 * data's memory is released.  Only values that can be
 * pointers are held (lib/checks/held/held.c's rule: 8-aligned, from 64 KiB up, below
 * the top of user space): NULL, GINT_TO_POINTER() values and string
 * literals pass through untouched.
 *
 * While a callback runs (GLib's dispatch takes a reference, then calls
 * get), its record does not hold the data: a callback may free its own
 * data and return G_SOURCE_REMOVE.  Which unref ends the hold is GLib's
 * word, not a count of ours: an unref that is not the last comes while a
 * dispatch holds the source (and a reference of its own on the source),
 * and GLib clears source->callback_data before it lets a callback go
 * (g_source_destroy() from inside the callback, a callback replaced), so
 * a source whose callback_data is no longer the record has let it go for
 * good, and one whose callback_data still is has ended a dispatch: the
 * record holds again unless the data's memory is gone.  The last unref
 * never reads the source (GLib may be finalising it).  So the hold is
 * decided when GLib lets go, in both builds of the module; a released()
 * hook asked at the free would add nothing (the records already follow
 * GLib's unrefs), is not called for the preloaded build, and would read
 * records and sources unlocked while another thread's last unref frees
 * them.
 *
 * The report's holder line (describe) names the sources holding the data:
 * id, name, callback and context.  The fixup keeps every source, so the
 * program's own g_source_remove() or g_source_destroy() after the free
 * still finds it: the record stops holding, the program's notify is never
 * called (the memory is being freed), and the source's next dispatches
 * call a function of ours of the source type's callback signature that
 * touches nothing (see fixed_func()).
 *
 * The descriptors sources poll are watches: glib-watch.c.
 *
 * Locks: one spinlock over the records, never held across a call into
 * GLib or the program (GLib calls ref and get under its context lock).
 *
 * Loaded by libodebug when the program has libglib-2.0.so.0
 * (modules/README.md); built with ODEBUG_MODULE_PRELOAD the wrappers are
 * exported under GLib's names instead, for LD_PRELOAD (the tests).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <glib.h>
#include <glib-unix.h>

#include "odebug.h"
#include "odebug-module.h"
#include "glib-watch.h"

/* Wrapped: GLib's definition in real_NAME, the wrapper in wrap_NAME. */
#define HOOKS(X) X(g_timeout_add) X(g_timeout_add_full) X(g_timeout_add_seconds) \
	X(g_timeout_add_seconds_full) X(g_idle_add) X(g_idle_add_full)	\
	X(g_child_watch_add) X(g_child_watch_add_full) X(g_io_add_watch)	\
	X(g_io_add_watch_full) X(g_source_set_callback)
/* Only called. */
#define CALLS(X) X(g_timeout_source_new) X(g_timeout_source_new_seconds)	\
	X(g_idle_source_new) X(g_child_watch_source_new) X(g_io_create_watch) \
	X(g_source_set_priority) X(g_source_attach) X(g_source_unref)	\
	X(g_source_set_callback_indirect)
/* Read: GLib's source types (a fixed record's function has its type's signature). */
#define TYPES(X) X(g_timeout_funcs) X(g_child_watch_funcs) X(g_unix_signal_funcs) \
	X(g_unix_fd_source_funcs) X(g_io_watch_funcs)

#define X(name) static __typeof__(name) *real_##name;
HOOKS(X)
CALLS(X)
TYPES(X)
#undef X

struct rec {
	GSourceFunc func;
	gpointer data;
	GDestroyNotify notify;
	GSource *source;
	struct rec *next;	/* the bucket's chain */
	int refs;		/* GLib's references to the callback */
	int in_call;		/* dispatches running */
	bool holding;		/* counts toward the data's hold */
	bool let_go;		/* the source dropped the callback during a dispatch */
	bool fixed;		/* the fixup took the data: no function, no notify */
	bool spins;		/* a 0 ms g_timeout_add*(): ready at every iteration */
};

#define BUCKETS 4096
static struct rec *buckets[BUCKETS];
static int rec_lock;
static unsigned long made_sources;

#define TRACKER(d) ((char *)(d) + 3)

static void lock(void)
{
	while (__atomic_exchange_n(&rec_lock, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(&rec_lock, __ATOMIC_RELAXED))
			__builtin_ia32_pause();
}

static void unlock(void)
{
	__atomic_store_n(&rec_lock, 0, __ATOMIC_RELEASE);
}

/*
 * The lock for a report's reads (describe): a few tries, never a wait
 * without end (the report may come from a signal handler that interrupted
 * this thread's own holder, or from a call made under the lock).
 */
static bool lock_briefly(void)
{
	for (int i = 0; i < 1000; i++) {
		if (!__atomic_exchange_n(&rec_lock, 1, __ATOMIC_ACQUIRE))
			return true;
		__builtin_ia32_pause();
	}
	return false;
}

static struct rec **bucket_of(const void *data)
{
	return &buckets[((uintptr_t)data * 0x9e3779b97f4a7c15ull) >> (64 - 12)];
}

/* lib/checks/held/held.c's test: could @v be a pointer to memory a free can release? */
static bool plausible(const void *v)
{
	uintptr_t p = (uintptr_t)v;

	return p >= 65536 && !(p & 7) && p < (1ull << 47);
}

/* Records holding @data.  Locked. */
static unsigned int holds_of(const void *data)
{
	unsigned int n = 0;

	for (struct rec *r = *bucket_of(data); r; r = r->next)
		n += r->data == data && r->holding;
	return n;
}

static void *data_hint(void *addr);
static bool data_fixup_free(void *addr, enum debug_obj_state state);
static bool data_describe(const struct debug_obj_descr *descr, void *addr, char *buf, size_t cap);

/*
 * The data has no init call of its own: the first hold's activate makes
 * its tracker (kernel-style, as for a statically initialised object).
 */
static bool data_untracked(void *addr)
{
	(void)addr;
	return true;
}

static const struct debug_obj_descr data_descr = {
	.name = "glib_source_data",
	.debug_hint = data_hint,
	.is_static_object = data_untracked,
	.fixup_free = data_fixup_free,
};

/*
 * A hold begins.  The tracker outlives the hold, INACTIVE, until the
 * data's memory is released (libodebug's free check drops it), so a data
 * pointer used again costs one lockless activate and one lockless
 * deactivate per hold.  Data on this thread's stack is marked so first
 * (an unmarked tracker there would be a stack note); a frame below ours
 * is dead, so only addresses above this frame are asked about.
 */
static void hold_begin(void *data)
{
	/* Within 64 MiB above this frame: maybe this stack (libodebug decides). */
	uintptr_t up = (uintptr_t)data - (uintptr_t)__builtin_frame_address(0);

	if (up < (64u << 20) && debug_object_on_stack(TRACKER(data)))
		debug_object_init_on_stack(TRACKER(data), &data_descr);
	debug_object_activate(TRACKER(data), &data_descr);
}

/* @r holds or stops holding; the tracker follows the count.  Locked. */
static void set_holding(struct rec *r, bool on)
{
	unsigned int before;

	if (r->holding == on)
		return;
	before = holds_of(r->data);
	r->holding = on;
	if (on && before == 0)
		hold_begin(r->data);
	else if (!on && before == 1)
		debug_object_deactivate(TRACKER(r->data), &data_descr);
}

/* The hint: the function of a source holding the data, else of any with it (a read). */
static void *data_hint(void *addr)
{
	const void *data = (char *)addr - 3;
	void *any = NULL;

	for (struct rec *r = *bucket_of(data); r; r = r->next) {
		if (r->data != data)
			continue;
		if (r->holding)
			return *(void **)&r->func;
		any = *(void **)&r->func;
	}
	return any;
}

static void put_str(char *buf, size_t cap, size_t *n, const char *str)
{
	while (*str && *n + 1 < cap)
		buf[(*n)++] = *str++;
	buf[*n] = '\0';
}

static void put_num(char *buf, size_t cap, size_t *n, uintptr_t v, unsigned int base)
{
	char tmp[2 + 2 * sizeof(v) + 1], *p = tmp + sizeof(tmp) - 1;

	*p = '\0';
	do
		*--p = "0123456789abcdef"[v % base];
	while (v /= base);
	if (base == 16) {
		*--p = 'x';
		*--p = '0';
	}
	put_str(buf, cap, n, p);
}

/* One holder: "source ID \"NAME\" (callback F, context C)"; read under the lock. */
static void put_source(char *buf, size_t cap, size_t *n, const struct rec *r)
{
	const GSource *s = r->source;

	put_str(buf, cap, n, "source ");
	if (s->source_id && s->context) {
		put_num(buf, cap, n, s->source_id, 10);
		put_str(buf, cap, n, " ");
	}
	if (s->name) {
		put_str(buf, cap, n, "\"");
		put_str(buf, cap, n, s->name);
		put_str(buf, cap, n, "\" ");
	}
	put_str(buf, cap, n, "(callback ");
	put_num(buf, cap, n, (uintptr_t)*(void **)&r->func, 16);
	if (s->context) {
		put_str(buf, cap, n, ", context ");
		put_num(buf, cap, n, (uintptr_t)s->context, 16);
	} else {
		put_str(buf, cap, n, ", not attached");
	}
	put_str(buf, cap, n, ")");
}

/*
 * The report's holder line (odebug_module.describe): the sources holding
 * the data, two named and the rest counted.  Under the lock a linked
 * record's source is not finalised (its last unref unlinks the record
 * first), and its name is freed after that.  Reads and copies only.
 */
static bool data_describe(const struct debug_obj_descr *descr, void *addr, char *buf, size_t cap)
{
	const void *data = (char *)addr - 3;
	unsigned int named = 0, more = 0;
	size_t n = 0;

	if (descr != &data_descr || !lock_briefly())
		return false;
	put_str(buf, cap, &n, "GLib ");
	for (struct rec *r = *bucket_of(data); r; r = r->next) {
		if (r->data != data || !r->holding)
			continue;
		if (named == 2) {
			more++;
			continue;
		}
		if (named++)
			put_str(buf, cap, &n, "; ");
		put_source(buf, cap, &n, r);
	}
	unlock();
	if (more) {
		put_str(buf, cap, &n, "; and ");
		put_num(buf, cap, &n, more, 10);
		put_str(buf, cap, &n, " more");
	}
	return named > 0;
}

/* A dispatch begins (GLib's g_main_dispatch, under the context lock): the callback may free its data. */
static void cb_ref(gpointer p)
{
	struct rec *r = p;

	lock();
	r->refs++;
	if (r->in_call++ == 0)
		set_holding(r, false);
	unlock();
}

/* The last reference: @r leaves its bucket and the hold ends with the last holder's.  Locked. */
static void unlink_rec(struct rec *r)
{
	struct rec **pp, **mine = NULL;
	unsigned int others = 0;

	for (pp = bucket_of(r->data); *pp; pp = &(*pp)->next) {
		if (*pp == r)
			mine = pp;
		else
			others += (*pp)->data == r->data && (*pp)->holding;
	}
	*mine = r->next;
	if (r->holding && !others)
		debug_object_deactivate(TRACKER(r->data), &data_descr);
	r->holding = false;
}

/* A dispatch ended with the callback still the source's: hold again if the data is still there.  Locked. */
static void dispatch_ended(struct rec *r)
{
	if (holds_of(r->data) ||
	    debug_object_get_state(TRACKER(r->data)) != ODEBUG_STATE_NOTAVAILABLE)
		set_holding(r, true);
}

/*
 * A reference ends.  The last: the source let the callback go (the hold
 * ends, the program's notify runs unless the fixup took the data); the
 * source is not read, GLib may be finalising it.  Any other comes while a
 * dispatch of the source runs and holds the source: GLib's callback_data
 * tells whether the source still has our callback (the dispatch ended)
 * or let it go inside the dispatch (g_source_destroy(), a callback set
 * over ours: GLib cleared the field before this unref, and the
 * dispatch's own unref comes last), and then the record holds no more.
 */
static void cb_unref(gpointer p)
{
	struct rec *r = p;
	bool last;

	lock();
	last = --r->refs == 0;
	if (last) {
		unlink_rec(r);
	} else if (__atomic_load_n(&r->source->callback_data, __ATOMIC_RELAXED) != r) {
		r->let_go = true;
		set_holding(r, false);
	} else if (r->in_call > 0 && --r->in_call == 0 && !r->fixed && !r->let_go) {
		dispatch_ended(r);
	}
	unlock();
	if (!last)
		return;
	if (r->notify && !r->fixed)
		r->notify(r->data);
	free(r);
}

/*
 * What a fixed record hands GLib's dispatch instead of the program's
 * function: nothing touched, of the signature the source type calls
 * (as GLib's own g_source_set_closure() picks one by type; a type GLib
 * does not define gets the GSourceFunc one).  A source that fires on an
 * interval (a timeout, a Unix signal) is kept; one that may be ready at
 * every iteration (an idle, a 0 ms timeout, a watch on a descriptor no
 * one reads, an unknown type) ends at its next dispatch, as if its
 * callback returned G_SOURCE_REMOVE: kept, it would spin the loop and
 * never let a g_main_context_iteration(ctx, FALSE) loop end.  A child
 * watch ends after its one dispatch whatever the callback does.  (A 0 ms
 * timeout is known by g_timeout_add*()'s interval; one the program built
 * with g_timeout_source_new(0) is taken for an interval source.)
 */
static gboolean fixed_keep(gpointer data)
{
	(void)data;
	return G_SOURCE_CONTINUE;
}

static gboolean fixed_end(gpointer data)
{
	(void)data;
	return G_SOURCE_REMOVE;
}

static void fixed_child(GPid pid, gint status, gpointer data)
{
	(void)pid;
	(void)status;
	(void)data;
}

static gboolean fixed_io(GIOChannel *channel, GIOCondition condition, gpointer data)
{
	(void)channel;
	(void)condition;
	(void)data;
	return G_SOURCE_REMOVE;
}

static gboolean fixed_fd(gint fd, GIOCondition condition, gpointer data)
{
	(void)fd;
	(void)condition;
	(void)data;
	return G_SOURCE_REMOVE;
}

/* @s is of @type: by its dispatch (a program's copy relocation may hold the table GLib's sources use). */
static bool is_type(const GSource *s, const GSourceFuncs *type)
{
	return type && s->source_funcs && s->source_funcs->dispatch == type->dispatch;
}

static GSourceFunc fixed_func(const struct rec *r, const GSource *s)
{
	if (is_type(s, real_g_child_watch_funcs))
		return (GSourceFunc)(void (*)(void))fixed_child;
	if (is_type(s, real_g_io_watch_funcs))
		return (GSourceFunc)(void (*)(void))fixed_io;
	if (is_type(s, real_g_unix_fd_source_funcs))
		return (GSourceFunc)(void (*)(void))fixed_fd;
	if ((is_type(s, real_g_timeout_funcs) && !r->spins) || is_type(s, real_g_unix_signal_funcs))
		return fixed_keep;
	return fixed_end;
}

/* GLib asks for the function and data: the program's (dispatch, find_source_by_user_data). */
static void cb_get(gpointer p, GSource *source, GSourceFunc *func, gpointer *data)
{
	struct rec *r = p;

	*func = r->fixed ? fixed_func(r, source) : r->func;
	*data = r->data;
}

static GSourceCallbackFuncs cb_funcs = { cb_ref, cb_unref, cb_get };

/*
 * The data of a source freed while held: every record of it stops
 * holding and is fixed (cb_get), without the program's notify (the
 * memory is being freed).  The sources stay: the program may still
 * remove them by id or destroy them.  No call into GLib (inside free()).
 */
static bool data_fixup_free(void *addr, enum debug_obj_state state)
{
	const void *data = (char *)addr - 3;

	if (state != ODEBUG_STATE_ACTIVE)
		return false;
	lock();
	for (struct rec *r = *bucket_of(data); r; r = r->next) {
		if (r->data != data)
			continue;
		r->fixed = true;
		r->holding = false;
	}
	debug_object_deactivate(addr, &data_descr);
	debug_object_free(addr, &data_descr);
	unlock();
	return true;
}

/* The program's callback on @source through a record, when @data can be held. */
static inline __attribute__((always_inline)) void set_callback(GSource *source, GSourceFunc func,
								gpointer data, GDestroyNotify notify,
								bool spins)
{
	struct rec *r = plausible(data) ? malloc(sizeof(*r)) : NULL;

	if (!r) {
		real_g_source_set_callback(source, func, data, notify);
		return;
	}
	*r = (struct rec){ .func = func, .data = data, .notify = notify,
			   .source = source, .refs = 1, .spins = spins };
	__atomic_fetch_add(&made_sources, 1, __ATOMIC_RELAXED);
	lock();
	if (!holds_of(data))
		hold_begin(data);
	r->holding = true;
	r->next = *bucket_of(data);
	*bucket_of(data) = r;
	unlock();
	real_g_source_set_callback_indirect(source, r, &cb_funcs);
}

static void wrap_g_source_set_callback(GSource *source, GSourceFunc func, gpointer data,
				       GDestroyNotify notify)
{
	set_callback(source, func, data, notify, false);
}

/* What GLib's adding functions do: the callback, the priority, attached to the default context. */
static inline __attribute__((always_inline)) guint add(GSource *source, gint priority, gint dflt, GSourceFunc func, gpointer data,
		 GDestroyNotify notify, bool spins)
{
	guint id;

	if (priority != dflt)
		real_g_source_set_priority(source, priority);
	set_callback(source, func, data, notify, spins);
	id = real_g_source_attach(source, NULL);
	real_g_source_unref(source);
	return id;
}

static guint wrap_g_timeout_add_full(gint prio, guint ms, GSourceFunc f, gpointer data,
				     GDestroyNotify notify)
{
	if (!plausible(data))
		return real_g_timeout_add_full(prio, ms, f, data, notify);
	return add(real_g_timeout_source_new(ms), prio, G_PRIORITY_DEFAULT, f, data, notify,
		   ms == 0);
}

static guint wrap_g_timeout_add(guint ms, GSourceFunc f, gpointer data)
{
	if (!plausible(data))
		return real_g_timeout_add(ms, f, data);
	return add(real_g_timeout_source_new(ms), G_PRIORITY_DEFAULT, G_PRIORITY_DEFAULT, f, data,
		   NULL, ms == 0);
}

static guint wrap_g_timeout_add_seconds_full(gint prio, guint s, GSourceFunc f, gpointer data,
					     GDestroyNotify notify)
{
	if (!plausible(data))
		return real_g_timeout_add_seconds_full(prio, s, f, data, notify);
	return add(real_g_timeout_source_new_seconds(s), prio, G_PRIORITY_DEFAULT, f, data, notify,
		   false);
}

static guint wrap_g_timeout_add_seconds(guint s, GSourceFunc f, gpointer data)
{
	if (!plausible(data))
		return real_g_timeout_add_seconds(s, f, data);
	return wrap_g_timeout_add_seconds_full(G_PRIORITY_DEFAULT, s, f, data, NULL);
}

static guint wrap_g_idle_add_full(gint prio, GSourceFunc f, gpointer data, GDestroyNotify notify)
{
	if (!plausible(data))
		return real_g_idle_add_full(prio, f, data, notify);
	return add(real_g_idle_source_new(), prio, G_PRIORITY_DEFAULT_IDLE, f, data, notify, false);
}

static guint wrap_g_idle_add(GSourceFunc f, gpointer data)
{
	if (!plausible(data))
		return real_g_idle_add(f, data);
	return add(real_g_idle_source_new(), G_PRIORITY_DEFAULT_IDLE, G_PRIORITY_DEFAULT_IDLE, f,
		   data, NULL, false);
}

static guint wrap_g_child_watch_add_full(gint prio, GPid pid, GChildWatchFunc f, gpointer data,
					 GDestroyNotify notify)
{
	if (!plausible(data))
		return real_g_child_watch_add_full(prio, pid, f, data, notify);
	return add(real_g_child_watch_source_new(pid), prio, G_PRIORITY_DEFAULT,
		   (GSourceFunc)(void (*)(void))f, data, notify, false);
}

static guint wrap_g_child_watch_add(GPid pid, GChildWatchFunc f, gpointer data)
{
	if (!plausible(data))
		return real_g_child_watch_add(pid, f, data);
	return wrap_g_child_watch_add_full(G_PRIORITY_DEFAULT, pid, f, data, NULL);
}

static guint wrap_g_io_add_watch_full(GIOChannel *ch, gint prio, GIOCondition cond, GIOFunc f,
				      gpointer data, GDestroyNotify notify)
{
	if (!plausible(data))
		return real_g_io_add_watch_full(ch, prio, cond, f, data, notify);
	return add(real_g_io_create_watch(ch, cond), prio, G_PRIORITY_DEFAULT,
		   (GSourceFunc)(void (*)(void))f, data, notify, false);
}

static guint wrap_g_io_add_watch(GIOChannel *ch, GIOCondition cond, GIOFunc f, gpointer data)
{
	if (!plausible(data))
		return real_g_io_add_watch(ch, cond, f, data);
	return wrap_g_io_add_watch_full(ch, G_PRIORITY_DEFAULT, cond, f, data, NULL);
}

/* What libodebug reads (modules/odebug-module.h): hooks, then the symbols only read or called. */
#define X(name) { #name, (void *)wrap_##name, (void **)&real_##name },
#define C(name) { #name, NULL, (void **)&real_##name },
ODEBUG_MODULE_EXPORT const struct odebug_module odebug_module = {
	.abi = ODEBUG_MODULE_ABI,
	.name = "glib",
	.hooks = (const struct odebug_hook[]){ HOOKS(X) WATCH_HOOKS(X) CALLS(C) WATCH_CALLS(C)
					       TYPES(C) { NULL, NULL, NULL } },
	.describe = data_describe,
	.released = glib_watch_released,
	.services = glib_watch_services,
};
#undef X
#undef C

#ifdef ODEBUG_MODULE_PRELOAD
/* The preloaded variant (the tests): the wrappers under GLib's names. */
#define X(name) extern __typeof__(name) name					\
	__attribute__((alias("wrap_" #name), visibility("default")));
HOOKS(X)
#undef X

static void resolve(void)
{
	for (const struct odebug_hook *h = odebug_module.hooks; h->symbol; h++)
		*h->real = dlsym(RTLD_NEXT, h->symbol);
}
#else
static void resolve(void) {}
#endif

/*
 * Our frames and GLib's (and GObject's, when loaded) left out of reports:
 * a g_free() or a last g_object_unref() is reported at the program's call.
 */
__attribute__((constructor)) static void glib_module_init(void)
{
	static const char *const libs[] = { "g_free", "g_object_unref" };

	resolve();
	debug_objects_skip_module((void *)glib_module_init);
	for (unsigned int i = 0; i < sizeof(libs) / sizeof(libs[0]); i++) {
		void *f = dlsym(RTLD_DEFAULT, libs[i]);

		if (f)
			debug_objects_skip_module(f);
	}
}

/* ODEBUG_MODULE_COUNTS=FILE: the callbacks whose data the module held, appended at exit. */
__attribute__((destructor)) static void glib_module_counts(void)
{
	const char *path = getenv("ODEBUG_MODULE_COUNTS");
	FILE *f;

	if (!path || !*path || !(f = fopen(path, "a")))
		return;
	fprintf(f, "glib: %lu sources with a data pointer held\n", made_sources);
	fclose(f);
}
