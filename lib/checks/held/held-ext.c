/* SPDX-License-Identifier: MIT */
/*
 * held-ext.c - the records and trackers of held-ext.h's families, and
 * their part of the free check: is it still held (the family asks libc
 * or the kernel), the holder line, the fixup.
 *
 * The records are the store's (held-store.h): key and key2 are the
 * family's key and thread id.  A tracker at the
 * held address plus the family's number is ACTIVE while a record of the
 * family holds the address, changed outside the lock by the built-in
 * types' steps, which never report (as lib/checks/held/held.c's settle()).
 */
#define _GNU_SOURCE
#include "builtin.h"
#include "held-ext.h"
#include "held-store.h"

#define BATCH		16

/* A thread id as the store's key2. */
static uint64_t tid_key(int tid)
{
	return (uint32_t)tid;
}

/* The family files' view of a store record. */
static struct odebug_xhold view(const struct odebug_hold *h)
{
	return (struct odebug_xhold){ .addr = h->addr, .len = h->len, .key = (uintptr_t)h->key,
				      .fn = h->fn, .tid = (int)(uint32_t)h->key2,
				      .family = h->family, .flags = h->flags, .gen = h->gen };
}

static const struct odebug_held_ext_ops *ops_of(int family)
{
	switch (family) {
	case ODEBUG_HELD_STDIO: return &odebug_held_stdio_ops;
	case ODEBUG_HELD_SIGSTACK: return &odebug_held_sigstack_ops;
	case ODEBUG_HELD_TSTACK: return &odebug_held_tstack_ops;
	default: return NULL;	/* records only: no tracker */
	}
}

static int family_of(const struct debug_obj_descr *d)
{
	int f;

	for (f = ODEBUG_HELD_STDIO; f <= ODEBUG_HELD_TSTACK; f++)
		if (ops_of(f)->descr == d)
			return f;
	return 0;
}

/* Is @h this process's, not one inherited over fork()? */
bool odebug_xhold_current(const struct odebug_xhold *h)
{
	return h->gen == odebug_load(&odebug_hold_gen);
}

static struct odebug_hold *find(int family, uintptr_t key, int tid)
{
	return odebug_hold_find(family, key, tid_key(tid));
}

/* The tracker made ACTIVE or INACTIVE, never reporting (held.c). */
static void apply(uintptr_t addr, int family, bool want)
{
	odebug_held_track((void *)(addr + (uintptr_t)family), ops_of(family)->descr, NULL, want);
}

static bool holds(uintptr_t addr, int family)
{
	unsigned int n;

	odebug_hold_lock();
	n = odebug_hold_holding(family, addr, 0);
	odebug_hold_unlock();
	return n > 0;
}

/* The tracker agrees with the records (held.c's odebug_held_settle()). */
static void settle(uintptr_t addr, int family)
{
	if (addr && ops_of(family))
		odebug_held_settle(addr, family, holds, apply);
}

/* held-ext.h: after the tracker went without the records (a thread's exit check). */
void odebug_xhold_settle(int family, uintptr_t addr)
{
	if (odebug_load(&odebug_holds))
		settle(addr, family);
}

/* (@family, @key, @tid) holds [@addr, @addr + @len) now, in place of what it held. */
void odebug_xhold_set(int family, uintptr_t key, int tid, uintptr_t addr, size_t len,
		      uintptr_t fn)
{
	struct odebug_hold *h;
	uintptr_t old = 0;

	if (!odebug_holds_mapped())
		return;
	odebug_hold_lock();
	h = find(family, key, tid);
	if (h && h->addr != addr)
		old = h->addr;
	if (h)
		odebug_hold_drop(h);
	h = odebug_hold_add(family, key, tid_key(tid), addr);
	if (h) {
		h->len = len;
		h->fn = fn;
	}
	odebug_hold_unlock();
	settle(old, family);
	if (h)
		settle(addr, family);
}

/* held-ext.h: @r's record made by the first of its two parties, completed by the other. */
void odebug_xhold_meet(const struct odebug_xhold *r, uint8_t side)
{
	struct odebug_hold *h;
	bool added = false;

	if (!odebug_holds_mapped())
		return;
	odebug_hold_lock();
	for (h = odebug_hold_at(*odebug_hold_khead(r->family, r->key)); h;
	     h = odebug_hold_at(h->knext))
		if (h->family == r->family && h->key == r->key && !(h->flags & side) &&
		    h->gen == odebug_hold_gen)
			break;
	if (h) {
		h->flags |= side | r->flags;
		if (r->tid)
			h->key2 = tid_key(r->tid);
	} else if ((h = odebug_hold_add(r->family, r->key, tid_key(r->tid), r->addr))) {
		h->len = r->len;
		h->fn = r->fn;
		h->flags = r->flags | side;
		added = true;
	}
	odebug_hold_unlock();
	if (added)
		settle(r->addr, r->family);
}

/* held-ext.h: flags set on the records of (@family, @key). */
unsigned int odebug_xhold_mark(int family, uintptr_t key, uint8_t unless, uint8_t set)
{
	struct odebug_hold *h;
	unsigned int n = 0;

	if (!odebug_load(&odebug_holds))
		return 0;
	odebug_hold_lock();
	for (h = odebug_hold_at(*odebug_hold_khead(family, key)); h; h = odebug_hold_at(h->knext)) {
		if (h->family == family && h->key == key && !(h->flags & unless)) {
			h->flags |= set;
			n++;
		}
	}
	odebug_hold_unlock();
	return n;
}

/* (@family, @key, @tid) holds nothing now. */
void odebug_xhold_end(int family, uintptr_t key, int tid)
{
	struct odebug_hold *h;
	uintptr_t addr = 0;

	if (!odebug_load(&odebug_holds))
		return;
	odebug_hold_lock();
	h = find(family, key, tid);
	if (h)
		addr = odebug_hold_drop(h);
	odebug_hold_unlock();
	settle(addr, family);
}

/*
 * Copies of @family's records (holding @addr unless it is 0), from the
 * @skip-th: by address on its chain, else every record looked at (the
 * dlclose and thread-exit checks).
 */
unsigned int odebug_xhold_list(int family, uintptr_t addr, struct odebug_xhold *out,
			       unsigned int max, unsigned int skip)
{
	const struct odebug_hold *h;
	unsigned int n = 0, seen = 0;
	uint32_t i = 0;

	if (!odebug_load(&odebug_holds))
		return 0;
	odebug_hold_lock();
	h = addr ? odebug_hold_at(*odebug_hold_ahead(addr)) : NULL;
	for (;;) {
		if (!addr)
			h = ++i <= odebug_holds->used ? odebug_hold_at(i) : NULL;
		if (!h || n >= max)
			break;
		if (h->addr && h->family == family && (!addr || h->addr == addr) &&
		    seen++ >= skip)
			out[n++] = view(h);
		if (addr)
			h = odebug_hold_at(h->anext);
	}
	odebug_hold_unlock();
	return n;
}

/* End the record @c was copied from, if it is still that record. */
static void end_copy(const struct odebug_xhold *c)
{
	struct odebug_hold *h;

	odebug_hold_lock();
	h = find(c->family, c->key, c->tid);
	if (h && h->addr == c->addr)
		odebug_hold_drop(h);
	odebug_hold_unlock();
}

/* The records of @family at @addr libc or the kernel confirm; the others end. */
static unsigned int confirmed(int family, uintptr_t addr, struct odebug_xhold *c)
{
	const struct odebug_held_ext_ops *ops = ops_of(family);
	unsigned int n = odebug_xhold_list(family, addr, c, BATCH, 0), i, live = 0;

	for (i = 0; i < n; i++) {
		if (odebug_xhold_current(&c[i]) && ops->live(&c[i]))
			c[live++] = c[i];
		else if (!odebug_xhold_current(&c[i]) || !ops->keep || !ops->keep(&c[i]))
			end_copy(&c[i]);
	}
	return live;
}

/* The registry's released() for these families: true when nothing holds. */
bool odebug_held_ext_released(const struct odebug_snapshot *o)
{
	struct odebug_xhold c[BATCH];
	int family = family_of(o->descr);

	if (!family)
		return false;
	return !confirmed(family, o->addr - (uintptr_t)family, c);
}

/* The registry's describe() for these families. */
bool odebug_held_ext_describe(const struct odebug_snapshot *o, char *buf, size_t cap)
{
	struct odebug_xhold c[BATCH];
	int family = family_of(o->descr);
	struct odebug_buf b;
	unsigned int n;

	if (!family)
		return false;
	n = odebug_xhold_list(family, o->addr - (uintptr_t)family, c, BATCH, 0);
	if (!n)
		return false;
	odebug_buf_init_mem(&b, buf, cap - 1);
	ops_of(family)->describe(&c[0], &b);
	odebug_held_end_line(&b, buf, n - 1);
	return true;
}

/*
 * fixup_free of the three descriptors: each holder still holding is
 * asked to let go (the family's fixup); true when all did.  Every
 * record of the address ends either way: the memory goes now, and its
 * one report is made.
 */
bool odebug_held_ext_fixup(void *t, enum debug_obj_state state)
{
	int family = (int)((uintptr_t)t & 7);
	uintptr_t addr = (uintptr_t)t - (uintptr_t)family;
	struct odebug_xhold c[BATCH];
	unsigned int n, i;
	bool all = true;

	if (state != ODEBUG_STATE_ACTIVE)
		return false;
	n = confirmed(family, addr, c);
	for (i = 0; i < n; i++) {
		if (!ops_of(family)->fixup(&c[i]))
			all = false;
		end_copy(&c[i]);
	}
	while ((n = odebug_xhold_list(family, addr, c, BATCH, 0)))
		for (i = 0; i < n; i++)
			end_copy(&c[i]);
	odebug_builtin_step(t, ops_of(family)->descr, BUILTIN_UNLOCK, 0);
	return all;
}

ODEBUG_CHECKER(held_ext) = {
	.name = "stdio buffers, signal and thread stacks",
	.released = odebug_held_ext_released,
	.describe = odebug_held_ext_describe,
};
