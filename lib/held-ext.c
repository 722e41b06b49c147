/* SPDX-License-Identifier: MIT */
/*
 * held-ext.c - the records and trackers of held-ext.h's families, and
 * their part of the free check: is it still held (the family asks libc
 * or the kernel), the holder line, the fixup.
 *
 * Few records are live at once (streams given a buffer, threads with a
 * signal stack, a stack of their own or a routine running, keys with a
 * destructor), so they sit in one array scanned up to its high-water
 * mark, mapped at the first record; one spinlock guards it, with the
 * re-entry guard set, and nothing is called under it.  A tracker at the
 * held address plus the family's number is ACTIVE while a record of the
 * family holds the address, changed outside the lock by the built-in
 * types' steps, which never report (as lib/held.c's settle()).
 */
#define _GNU_SOURCE
#include <pthread.h>

#include "builtin.h"
#include "held-ext.h"
#include "lock.h"

#define XHOLDS_MAX	4096u
#define BATCH		16

struct xholds {
	uint32_t used;
	struct odebug_xhold h[XHOLDS_MAX];
};

unsigned long odebug_xhold_count[ODEBUG_HELD_ALL];
static struct xholds *X;
static odebug_spinlock_t lock;
static uint16_t gen;

/* In a fork() child: the parent's records are not the child's (the timer family's rule). */
static void fork_child(void)
{
	odebug_store(&gen, (uint16_t)(odebug_load(&gen) + 1));
}

/* The array, at the first record (not from free(): the events are interposers'). */
static bool mapped(void)
{
	static int failed;
	struct xholds *m;

	if (likely(odebug_load(&X)))
		return true;
	if (odebug_load(&failed))
		return false;
	m = odebug_map(sizeof(*m));
	if (!m) {
		odebug_store(&failed, 1);
		return false;
	}
	if (__atomic_compare_exchange_n(&X, &(struct xholds *){ NULL }, m, false,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		pthread_atfork(NULL, NULL, fork_child);
	else
		odebug_unmap(m, sizeof(*m));
	return true;
}

static void xlock(void)
{
	odebug_guard_enter();
	odebug_spin_lock(&lock);
}

static void xunlock(void)
{
	odebug_spin_unlock(&lock);
	odebug_guard_exit();
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
	return h->gen == odebug_load(&gen);
}

/* Records of @family holding @addr.  Locked. */
static unsigned int holding(int family, uintptr_t addr)
{
	unsigned int n = 0;
	uint32_t i;

	for (i = 0; i < X->used; i++)
		n += X->h[i].addr == addr && X->h[i].family == family;
	return n;
}

static struct odebug_xhold *find(int family, uintptr_t key, int tid)
{
	uint32_t i;

	for (i = 0; i < X->used; i++)
		if (X->h[i].addr && X->h[i].family == family && X->h[i].key == key &&
		    X->h[i].tid == tid)
			return &X->h[i];
	return NULL;
}

static void drop(struct odebug_xhold *h)
{
	__atomic_fetch_sub(&odebug_xhold_count[h->family], 1, __ATOMIC_RELAXED);
	h->addr = 0;
	while (X->used && !X->h[X->used - 1].addr)
		X->used--;
}

/* The tracker made ACTIVE or INACTIVE, never reporting (held.c). */
static void apply(uintptr_t addr, int family, bool want)
{
	odebug_held_track((void *)(addr + (uintptr_t)family), ops_of(family)->descr, NULL, want);
}

static bool holds(uintptr_t addr, int family)
{
	unsigned int n;

	xlock();
	n = holding(family, addr);
	xunlock();
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
	if (odebug_load(&X))
		settle(addr, family);
}

/* A free record, counted for @family (its caller fills it in); NULL when full.  Locked. */
static struct odebug_xhold *fresh(int family)
{
	uint32_t i;

	if (X->used >= XHOLDS_MAX)
		return NULL;
	for (i = 0; i < X->used && X->h[i].addr; i++)
		;
	if (i == X->used)
		X->used++;
	__atomic_fetch_add(&odebug_xhold_count[family], 1, __ATOMIC_RELAXED);
	return &X->h[i];
}

/* (@family, @key, @tid) holds [@addr, @addr + @len) now, in place of what it held. */
void odebug_xhold_set(int family, uintptr_t key, int tid, uintptr_t addr, size_t len,
		      uintptr_t fn)
{
	static int said;
	struct odebug_xhold *h;
	uintptr_t old = 0;

	if (!mapped())
		return;
	xlock();
	h = find(family, key, tid);
	if (h && h->addr != addr)
		old = h->addr;
	if (!h)
		h = fresh(family);
	if (h)
		*h = (struct odebug_xhold){ .addr = addr, .len = len, .key = key, .fn = fn,
					    .tid = tid, .family = (uint8_t)family,
					    .gen = odebug_load(&gen) };
	xunlock();
	if (!h && !__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
		odebug_message("4096 holds of streams, threads and keys recorded: new ones "
			       "are not checked from now on", (char *)NULL);
	settle(old, family);
	if (h)
		settle(addr, family);
}

/* held-ext.h: @r's record made by the first of its two parties, completed by the other. */
void odebug_xhold_meet(const struct odebug_xhold *r, uint8_t side)
{
	struct odebug_xhold *h = NULL;
	bool added = false;
	uint32_t i;

	if (!mapped())
		return;
	xlock();
	for (i = 0; i < X->used && !h; i++)
		if (X->h[i].addr && X->h[i].family == r->family && X->h[i].key == r->key &&
		    !(X->h[i].flags & side) && X->h[i].gen == odebug_load(&gen))
			h = &X->h[i];
	if (h) {
		h->flags |= side | r->flags;
		if (r->tid)
			h->tid = r->tid;
	} else if ((h = fresh(r->family))) {
		*h = *r;
		h->flags |= side;
		h->gen = odebug_load(&gen);
		added = true;
	}
	xunlock();
	if (added)
		settle(r->addr, r->family);
}

/* held-ext.h: flags set on the records of (@family, @key). */
unsigned int odebug_xhold_mark(int family, uintptr_t key, uint8_t unless, uint8_t set)
{
	unsigned int n = 0;
	uint32_t i;

	if (!odebug_load(&X))
		return 0;
	xlock();
	for (i = 0; i < X->used; i++) {
		struct odebug_xhold *h = &X->h[i];

		if (h->addr && h->family == family && h->key == key && !(h->flags & unless)) {
			h->flags |= set;
			n++;
		}
	}
	xunlock();
	return n;
}

/* (@family, @key, @tid) holds nothing now. */
void odebug_xhold_end(int family, uintptr_t key, int tid)
{
	struct odebug_xhold *h;
	uintptr_t addr = 0;

	if (!odebug_load(&X))
		return;
	xlock();
	h = find(family, key, tid);
	if (h) {
		addr = h->addr;
		drop(h);
	}
	xunlock();
	settle(addr, family);
}

/* Copies of @family's records (holding @addr unless it is 0), from the @skip-th. */
unsigned int odebug_xhold_list(int family, uintptr_t addr, struct odebug_xhold *out,
			       unsigned int max, unsigned int skip)
{
	unsigned int n = 0, seen = 0;
	uint32_t i;

	if (!odebug_load(&X))
		return 0;
	xlock();
	for (i = 0; i < X->used && n < max; i++) {
		const struct odebug_xhold *h = &X->h[i];

		if (!h->addr || h->family != family || (addr && h->addr != addr))
			continue;
		if (seen++ >= skip)
			out[n++] = *h;
	}
	xunlock();
	return n;
}

/* End the record @c was copied from, if it is still that record. */
static void end_copy(const struct odebug_xhold *c)
{
	struct odebug_xhold *h;

	xlock();
	h = find(c->family, c->key, c->tid);
	if (h && h->addr == c->addr)
		drop(h);
	xunlock();
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

/* lib/held.c's odebug_held_released() for these families: true when nothing holds. */
bool odebug_held_ext_released(const struct odebug_snapshot *o)
{
	struct odebug_xhold c[BATCH];
	int family = family_of(o->descr);

	if (!family)
		return false;
	return !confirmed(family, o->addr - (uintptr_t)family, c);
}

/* lib/held.c's odebug_held_describe() for these families. */
bool odebug_held_ext_describe(const struct odebug_snapshot *o, char *buf, size_t cap)
{
	struct odebug_xhold c[BATCH];
	int family = family_of(o->descr);
	struct odebug_buf b;
	unsigned int n;

	if (o->descr == &odebug_module_descr)
		return odebug_held_module_describe(buf, cap);
	if (!family)
		return false;
	n = odebug_xhold_list(family, o->addr - (uintptr_t)family, c, BATCH, 0);
	if (!n)
		return false;
	odebug_buf_init_mem(&b, buf, cap - 1);
	ops_of(family)->describe(&c[0], &b);
	if (n > 1) {
		odebug_puts(&b, ", and ");
		odebug_put_dec(&b, n - 1);
		odebug_puts(&b, " more");
	}
	buf[b.len] = '\0';
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
