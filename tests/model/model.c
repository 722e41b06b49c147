/* SPDX-License-Identifier: MIT */
/*
 * model.c - the reference model: each function is one table of the spec's
 * §2, row by row, on a flat array of objects.  See model.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "model.h"

void model_init(struct model *m, struct model_obj *objs, size_t cap)
{
	size_t i, j;

	m->objs = objs;
	m->n = 0;
	m->cap = cap;
	m->warnings = 0;
	m->fixups = 0;
	m->check_free = true;
	m->inject_bug = false;
	for (i = 0; i < MOP_MAX; i++)
		for (j = 0; j < MROW_MAX; j++)
			m->cover[i][j] = 0;
	m->user = NULL;
}

static struct model_obj *find(const struct model *m, uintptr_t addr)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (m->objs[i].addr == addr)
			return &m->objs[i];
	return NULL;
}

const struct model_obj *model_find(const struct model *m, const void *addr)
{
	return find(m, (uintptr_t)addr);
}

enum debug_obj_state model_get_state(const struct model *m, const void *addr)
{
	const struct model_obj *o = find(m, (uintptr_t)addr);

	return o ? o->state : ODEBUG_STATE_NOTAVAILABLE;
}

static struct model_obj *track(struct model *m, void *addr,
			       const struct model_descr *d,
			       enum debug_obj_state state)
{
	struct model_obj *o;

	if (m->n == m->cap) {
		fprintf(stderr, "model: more than %zu objects tracked\n", m->cap);
		abort();
	}
	o = &m->objs[m->n++];
	o->addr = (uintptr_t)addr;
	o->descr = d;
	o->state = state;
	o->astate = 0;
	return o;
}

static void untrack(struct model *m, struct model_obj *o)
{
	*o = m->objs[--m->n];
}

/* debug_print_object: counted, never printed here. */
static void warn(struct model *m)
{
	m->warnings++;
}

/* debug_object_fixup: counted when the fixup exists and returns true. */
static bool fixup(struct model *m, model_fixup_fn fn, void *addr,
		  enum debug_obj_state state)
{
	if (fn && fn(m, addr, state)) {
		m->fixups++;
		return true;
	}
	return false;
}

static void cover(struct model *m, enum model_op op, int row)
{
	m->cover[op][row]++;
}

static int row_of(const struct model_obj *o)
{
	return o ? (int)o->state : ODEBUG_STATE_NOTAVAILABLE;
}

/* §2.1: init and init_on_stack (the model has no stacks). */
void model_object_init(struct model *m, void *addr, const struct model_descr *d)
{
	struct model_obj *o = find(m, (uintptr_t)addr);

	cover(m, MOP_INIT, row_of(o));
	if (!o) {
		track(m, addr, d, ODEBUG_STATE_INIT);
		return;
	}
	switch (o->state) {
	case ODEBUG_STATE_NONE:
	case ODEBUG_STATE_INIT:
	case ODEBUG_STATE_INACTIVE:
		o->state = ODEBUG_STATE_INIT;
		return;
	case ODEBUG_STATE_ACTIVE:
		warn(m);
		fixup(m, d->fixup_init, addr, ODEBUG_STATE_ACTIVE);
		return;
	default:	/* DESTROYED */
		warn(m);
		return;
	}
}

/* §2.2, with the seed-compatible path for untracked objects. */
int model_object_activate(struct model *m, void *addr, const struct model_descr *d)
{
	struct model_obj *o = find(m, (uintptr_t)addr);
	bool fixed;

	if (!o) {
		if (d->is_static_object && d->is_static_object(addr)) {
			cover(m, MOP_ACTIVATE, MROW_STATIC);
			track(m, addr, d, ODEBUG_STATE_INIT)->state = ODEBUG_STATE_ACTIVE;
			return 0;
		}
		if (!d->is_static_object && d->fixup_activate) {
			cover(m, MOP_ACTIVATE, MROW_SEED);
			fixed = fixup(m, d->fixup_activate, addr, ODEBUG_STATE_NOTAVAILABLE);
			if (find(m, (uintptr_t)addr))
				return 0;
			warn(m);
			return fixed ? 0 : -EINVAL;
		}
		cover(m, MOP_ACTIVATE, ODEBUG_STATE_NOTAVAILABLE);
		warn(m);
		return fixup(m, d->fixup_activate, addr, ODEBUG_STATE_NOTAVAILABLE) ? 0 : -EINVAL;
	}
	cover(m, MOP_ACTIVATE, row_of(o));
	switch (o->state) {
	case ODEBUG_STATE_NONE:
		return 0;
	case ODEBUG_STATE_INIT:
	case ODEBUG_STATE_INACTIVE:
		o->state = ODEBUG_STATE_ACTIVE;
		return 0;
	case ODEBUG_STATE_ACTIVE:
		warn(m);
		return fixup(m, d->fixup_activate, addr, ODEBUG_STATE_ACTIVE) ? 0 : -EINVAL;
	default:	/* DESTROYED */
		warn(m);
		return -EINVAL;
	}
}

/* §2.3: never a fixup. */
void model_object_deactivate(struct model *m, void *addr, const struct model_descr *d)
{
	struct model_obj *o = find(m, (uintptr_t)addr);

	(void)d;
	if (!o) {
		cover(m, MOP_DEACTIVATE, ODEBUG_STATE_NOTAVAILABLE);
		warn(m);
		return;
	}
	switch (o->state) {
	case ODEBUG_STATE_NONE:
		cover(m, MOP_DEACTIVATE, ODEBUG_STATE_NONE);
		return;
	case ODEBUG_STATE_INIT:
	case ODEBUG_STATE_INACTIVE:
	case ODEBUG_STATE_ACTIVE:
		if (o->astate == 0 || m->inject_bug) {
			cover(m, MOP_DEACTIVATE, row_of(o));
			o->state = ODEBUG_STATE_INACTIVE;
		} else {
			cover(m, MOP_DEACTIVATE, MROW_ASTATE);
			warn(m);
		}
		return;
	default:	/* DESTROYED */
		cover(m, MOP_DEACTIVATE, row_of(o));
		warn(m);
		return;
	}
}

/* §2.4: silent when untracked. */
void model_object_destroy(struct model *m, void *addr, const struct model_descr *d)
{
	struct model_obj *o = find(m, (uintptr_t)addr);

	cover(m, MOP_DESTROY, row_of(o));
	if (!o)
		return;
	switch (o->state) {
	case ODEBUG_STATE_NONE:
	case ODEBUG_STATE_INIT:
	case ODEBUG_STATE_INACTIVE:
		o->state = ODEBUG_STATE_DESTROYED;
		return;
	case ODEBUG_STATE_ACTIVE:
		warn(m);
		fixup(m, d->fixup_destroy, addr, ODEBUG_STATE_ACTIVE);
		return;
	default:	/* DESTROYED */
		warn(m);
		return;
	}
}

/* §2.5: silent when untracked; an ACTIVE tracker stays for the fixup. */
void model_object_free(struct model *m, void *addr, const struct model_descr *d)
{
	struct model_obj *o = find(m, (uintptr_t)addr);

	cover(m, MOP_FREE, row_of(o));
	if (!o)
		return;
	if (o->state != ODEBUG_STATE_ACTIVE) {
		untrack(m, o);
		return;
	}
	warn(m);
	fixup(m, d->fixup_free, addr, ODEBUG_STATE_ACTIVE);
}

/* §2.6: silent for any tracked state. */
void model_object_assert_init(struct model *m, void *addr, const struct model_descr *d)
{
	struct model_obj *o = find(m, (uintptr_t)addr);

	if (o) {
		cover(m, MOP_ASSERT_INIT, row_of(o));
		return;
	}
	if (d->is_static_object && d->is_static_object(addr)) {
		cover(m, MOP_ASSERT_INIT, MROW_STATIC);
		track(m, addr, d, ODEBUG_STATE_INIT);
		return;
	}
	cover(m, MOP_ASSERT_INIT, ODEBUG_STATE_NOTAVAILABLE);
	warn(m);
	fixup(m, d->fixup_assert_init, addr, ODEBUG_STATE_NOTAVAILABLE);
}

/* §2.7: no fixup. */
void model_object_active_state(struct model *m, void *addr, const struct model_descr *d,
			       unsigned int expect, unsigned int next)
{
	struct model_obj *o = find(m, (uintptr_t)addr);

	(void)d;
	if (o && o->state == ODEBUG_STATE_ACTIVE && o->astate != expect)
		cover(m, MOP_ACTIVE_STATE, MROW_ASTATE);
	else
		cover(m, MOP_ACTIVE_STATE, row_of(o));
	if (!o) {
		warn(m);
		return;
	}
	if (o->state == ODEBUG_STATE_ACTIVE && o->astate == expect) {
		o->astate = next;
		return;
	}
	warn(m);
}

/* The lowest tracked address in [start, end), or NULL. */
static struct model_obj *first_in(struct model *m, uintptr_t start, uintptr_t end)
{
	struct model_obj *best = NULL;
	size_t i;

	for (i = 0; i < m->n; i++)
		if (m->objs[i].addr >= start && m->objs[i].addr < end &&
		    (!best || m->objs[i].addr < best->addr))
			best = &m->objs[i];
	return best;
}

/*
 * §2.8 with libodebug's change: an ACTIVE object is reported once, its
 * tracker's fixup_free called, then whatever is left at its address goes.
 * Objects are visited in address order; the order is not part of the
 * contract (the driver compares fixup calls per object).
 */
void model_check_no_obj_freed(struct model *m, const void *addr, size_t size)
{
	uintptr_t start = (uintptr_t)addr, end = start + size, oaddr;
	struct model_obj *o;

	if (!m->check_free || !size)
		return;
	if (end < start)
		end = UINTPTR_MAX;
	while ((o = first_in(m, start, end)) != NULL) {
		cover(m, MOP_CHECK_FREE, row_of(o));
		if (o->state != ODEBUG_STATE_ACTIVE) {
			untrack(m, o);
			continue;
		}
		oaddr = o->addr;
		warn(m);
		fixup(m, o->descr->fixup_free, (void *)oaddr, ODEBUG_STATE_ACTIVE);
		o = find(m, oaddr);
		if (o)
			untrack(m, o);
	}
}
