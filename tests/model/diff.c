/* SPDX-License-Identifier: MIT */
/*
 * diff.c - the differential engine (see diff.h).
 *
 * Each step runs the operation on the library, recording every fixup call
 * the library makes (descriptor, kind, address, state, nesting depth,
 * warnings made before it, return value), then on the model, recording the
 * same.  The two records, activate's return values, the warnings and fixups
 * counters, the state of every slot and (single thread) the number of
 * trackers in use must then be equal.
 *
 * The fixups are written once (behave()) against either side: they re-enter
 * the library, or the model, the way the kernel's timer and selftest fixups
 * re-enter debugobjects.  Their decisions depend only on the descriptor,
 * the fixup, the object's slot, the state and the nesting depth, so both
 * sides, and every replay, see the same behaviour.  A fixup only touches
 * its own object: then the order in which a released range visits its
 * objects (the library's bucket order, the model's address order) cannot
 * change the outcome, and the records are compared grouped by top-level
 * fixup call, the groups sorted by address.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "odebug.h"
#include "model.h"
#include "diff.h"

#define ARENA_CHUNKS	4
#define CHUNK		4096
#define NSTATIC		8		/* static objects of 32 bytes per thread */
#define STATIC_BYTES	(NSTATIC * 32)
#define NBLOCKS		6
#define MAXSLOTS	64
#define MAXOBJS		256		/* fixups only touch their own slot */
#define MAXAREAS	16
#define MAXCALLS	512
#define MAX_DEPTH	12		/* fixups deeper than this return false */

enum { LIB, MODEL };
enum region { R_ARENA, R_STATIC, R_STACK, R_BLOCK };
enum fixup_kind { FIX_INIT, FIX_ACTIVATE, FIX_DESTROY, FIX_FREE, FIX_ASSERT_INIT, FIX_MAX };

enum descr_id {
	D_BARE,		/* no callbacks at all */
	D_STATIC_BARE,	/* is_static_object only */
	D_FALSE,	/* every fixup, each returns false (seed path) */
	D_TRUE,		/* every fixup, each returns true, repairs nothing */
	D_REPAIR,	/* is_static_object; the kernel selftest's repairs */
	D_TIMER,	/* is_static_object; the kernel's timer_list fixups */
	D_SEED,		/* old timer_list: static objects found by fixup_activate */
	D_DEEP,		/* fixups re-enter the failing call ten levels deep */
	D_MIXED,	/* is_static_object; behaviour chosen by a hash */
	D_FREEONLY,	/* fixup_init and fixup_free only */
};

static const char *const descr_names[DIFF_NDESCR] = {
	"bare", "static_bare", "false", "true", "repair", "timer", "seed",
	"deep", "mixed", "freeonly",
};
static const char *const fix_names[FIX_MAX] = {
	"fixup_init", "fixup_activate", "fixup_destroy", "fixup_free",
	"fixup_assert_init",
};
static const char *const state_names[ODEBUG_STATE_MAX] = {
	"none", "init", "inactive", "active", "destroyed", "untracked",
};
static const char *const op_names[OP_MAX] = {
	"init", "activate", "deactivate", "destroy", "free", "assert_init",
	"active_state", "check_range", "free_block", "realloc_block",
};

/* Which fixups each descriptor has (bit per enum fixup_kind). */
#define ALL_FIXUPS	((1u << FIX_MAX) - 1)
#define TIMER_FIXUPS	(ALL_FIXUPS & ~(1u << FIX_DESTROY))
static const struct { bool is_static; unsigned int fixups; } descr_info[DIFF_NDESCR] = {
	[D_BARE] = { false, 0 },
	[D_STATIC_BARE] = { true, 0 },
	[D_FALSE] = { false, ALL_FIXUPS },
	[D_TRUE] = { false, ALL_FIXUPS },
	[D_REPAIR] = { true, ALL_FIXUPS },
	[D_TIMER] = { true, TIMER_FIXUPS },
	[D_SEED] = { false, TIMER_FIXUPS },
	[D_DEEP] = { false, ALL_FIXUPS },
	[D_MIXED] = { true, ALL_FIXUPS },
	[D_FREEONLY] = { false, (1u << FIX_INIT) | (1u << FIX_FREE) },
};

struct slot {
	uint8_t region, index, home;
	uint16_t off;
};

struct area {
	uint8_t region, index;
	uint32_t off, len;
};

struct block {
	char *p;
	size_t size;
};

struct call {
	uint8_t descr, kind, state, depth;
	bool ret;
	uintptr_t addr;
	unsigned long wdelta;	/* warnings made before it in this step (see seg_base) */
};

struct trace {
	struct call c[MAXCALLS];
	unsigned int n, lost;
};

struct world {
	struct world_config cfg;
	bool mt;
	struct model m;
	struct model_obj mobjs[MAXOBJS];
	struct slot slots[MAXSLOTS];
	unsigned int nslots;
	struct area areas[MAXAREAS];
	unsigned int nareas;
	struct block blocks[NBLOCKS];
	char *statics;			/* this thread's static objects */
	uint32_t stripe_off, stripe_len;	/* this thread's part of a chunk */
	unsigned long step;
	int side, depth;
	bool range_op;			/* the step releases memory */
	unsigned long seg_base;		/* warnings counted from here */
	unsigned long used0;		/* trackers in use at the start */
	struct trace tr[2];
	struct call norm[2][MAXCALLS];
};

static char arena[ARENA_CHUNKS * CHUNK] __attribute__((aligned(CHUNK)));
static char statics_mem[DIFF_MAX_THREADS][STATIC_BYTES] __attribute__((aligned(64)));
static __thread struct world *cur_world;
static int check_free_state = -1;	/* unknown, 0 off, 1 on */
static pthread_once_t descrs_once = PTHREAD_ONCE_INIT;

uint64_t diff_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* Even-numbered static objects are "statically initialised". */
static bool is_static(void *addr)
{
	uintptr_t a = (uintptr_t)addr, base = (uintptr_t)statics_mem;

	if (a < base || a >= base + sizeof(statics_mem))
		return false;
	a -= base;
	return a % 32 == 0 && (a / 32) % 2 == 0;
}

static unsigned long lib_warnings(void)
{
	struct debug_objects_stats s;

	debug_objects_get_stats(&s, sizeof(s));
	return s.warnings;
}

static unsigned long side_warnings(struct world *w)
{
	if (w->mt)
		return 0;	/* global counter: not comparable per thread */
	return w->side == LIB ? lib_warnings() : w->m.warnings;
}

/* ---- the two sides, behind one set of calls ---- */

static struct debug_obj_descr lib_descrs[DIFF_NDESCR];
static struct model_descr model_descrs[DIFF_NDESCR];

static bool in_stack(const struct world *w, const void *addr)
{
	const char *p = addr;

	return w->cfg.stack_area && p >= w->cfg.stack_area &&
	       p < w->cfg.stack_area + DIFF_STACK_AREA;
}

static void x_init(struct world *w, int d, void *a)
{
	if (w->side == MODEL)
		model_object_init(&w->m, a, &model_descrs[d]);
	else if (in_stack(w, a))
		debug_object_init_on_stack(a, &lib_descrs[d]);
	else
		debug_object_init(a, &lib_descrs[d]);
}

static int x_activate(struct world *w, int d, void *a)
{
	if (w->side == MODEL)
		return model_object_activate(&w->m, a, &model_descrs[d]);
	return debug_object_activate(a, &lib_descrs[d]);
}

static void x_deactivate(struct world *w, int d, void *a)
{
	if (w->side == MODEL)
		model_object_deactivate(&w->m, a, &model_descrs[d]);
	else
		debug_object_deactivate(a, &lib_descrs[d]);
}

static void x_destroy(struct world *w, int d, void *a)
{
	if (w->side == MODEL)
		model_object_destroy(&w->m, a, &model_descrs[d]);
	else
		debug_object_destroy(a, &lib_descrs[d]);
}

static void x_free(struct world *w, int d, void *a)
{
	if (w->side == MODEL)
		model_object_free(&w->m, a, &model_descrs[d]);
	else
		debug_object_free(a, &lib_descrs[d]);
}

static void x_assert_init(struct world *w, int d, void *a)
{
	if (w->side == MODEL)
		model_object_assert_init(&w->m, a, &model_descrs[d]);
	else
		debug_object_assert_init(a, &lib_descrs[d]);
}

static void x_active_state(struct world *w, int d, void *a, unsigned int e,
			   unsigned int n)
{
	if (w->side == MODEL)
		model_object_active_state(&w->m, a, &model_descrs[d], e, n);
	else
		debug_object_active_state(a, &lib_descrs[d], e, n);
}

static void x_check(struct world *w, const void *a, size_t size)
{
	if (w->side == MODEL)
		model_check_no_obj_freed(&w->m, a, size);
	else
		debug_check_no_obj_freed(a, size);
}

/* ---- the fixups ---- */

static void *slot_addr(const struct world *w, const struct slot *s);

/*
 * A hash of the object's slot (not its address, which changes from run to
 * run with ASLR and malloc), the fixup and the state: D_MIXED's choice.
 */
static unsigned int mix(const struct world *w, const void *a, unsigned int k,
			unsigned int s)
{
	uint64_t h = 0;
	unsigned int i;

	for (i = 0; i < w->nslots; i++)
		if (slot_addr(w, &w->slots[i]) == a)
			h = i + 1;
	h = (h * 0x9E3779B97F4A7C15ull) ^ (k * 131u + s);

	h ^= h >> 29;
	h *= 0xBF58476D1CE4E5B9ull;
	return (unsigned int)(h >> 40);
}

/*
 * What descriptor @d's fixup @k does for the object at @a found in state
 * @s, at nesting depth @depth (1 for a fixup called by an API call made
 * outside any fixup).  Re-entries use the same descriptor.
 */
static bool behave(struct world *w, int d, int k, void *a, enum debug_obj_state s,
		   int depth)
{
	const bool active = s == ODEBUG_STATE_ACTIVE;
	const bool untracked = s == ODEBUG_STATE_NOTAVAILABLE;

	switch (d) {
	case D_FALSE:
		return false;
	case D_TRUE:
		return true;
	case D_REPAIR:
	case D_FREEONLY:	/* lib/start/selftest.c's fixups */
		switch (k) {
		case FIX_INIT:
			if (!active)
				return false;
			x_deactivate(w, d, a);
			x_init(w, d, a);
			return true;
		case FIX_ACTIVATE:
			if (untracked)
				return true;
			if (!active)
				return false;
			x_deactivate(w, d, a);
			x_activate(w, d, a);
			return true;
		case FIX_DESTROY:
			if (!active)
				return false;
			x_deactivate(w, d, a);
			x_destroy(w, d, a);
			return true;
		case FIX_FREE:
			if (!active)
				return false;
			x_deactivate(w, d, a);
			x_free(w, d, a);
			return true;
		default:
			if (!untracked)
				return false;
			x_init(w, d, a);
			return true;
		}
	case D_TIMER:	/* kernel/time/timer.c, with is_static_object */
		switch (k) {
		case FIX_INIT:	/* del_timer_sync + debug_object_init */
			if (!active)
				return false;
			x_deactivate(w, d, a);
			x_init(w, d, a);
			return true;
		case FIX_ACTIVATE:	/* NOTAVAILABLE: timer_setup(stub) */
			if (!untracked)
				return false;	/* ACTIVE: WARN_ON(1) */
			x_init(w, d, a);
			return true;
		case FIX_FREE:
			if (!active)
				return false;
			x_deactivate(w, d, a);
			x_free(w, d, a);
			return true;
		default:	/* assert_init: timer_setup(stub) */
			if (!untracked)
				return false;
			x_init(w, d, a);
			return true;
		}
	case D_SEED:	/* timer_list before is_static_object (2.6-4.6) */
		switch (k) {
		case FIX_INIT:
			if (!active)
				return false;
			x_deactivate(w, d, a);
			x_init(w, d, a);
			return true;
		case FIX_ACTIVATE:
			if (untracked && is_static(a)) {
				x_init(w, d, a);
				x_activate(w, d, a);
			}
			return false;	/* "not a fixup"; or WARN_ON(1) */
		case FIX_FREE:
			if (!active)
				return false;
			x_deactivate(w, d, a);
			x_free(w, d, a);
			return true;
		default:
			if (!untracked)
				return false;
			x_init(w, d, a);
			return !is_static(a);
		}
	case D_DEEP:	/* the same misuse again, ten levels deep */
		if (depth >= 10) {
			switch (k) {
			case FIX_INIT:
				x_deactivate(w, d, a);
				x_init(w, d, a);
				return true;
			case FIX_ACTIVATE:
				if (untracked && is_static(a)) {
					x_init(w, d, a);
					x_activate(w, d, a);
				}
				return false;
			case FIX_DESTROY:
				x_deactivate(w, d, a);
				x_destroy(w, d, a);
				return true;
			case FIX_FREE:
				x_deactivate(w, d, a);
				x_free(w, d, a);
				return true;
			default:
				x_init(w, d, a);
				return true;
			}
		}
		switch (k) {
		case FIX_INIT:
			x_init(w, d, a);
			return depth % 2;
		case FIX_ACTIVATE:
			x_activate(w, d, a);
			return depth % 3 == 0;
		case FIX_DESTROY:
			x_destroy(w, d, a);
			return true;
		case FIX_FREE:
			if (depth % 2)
				x_check(w, a, 1);	/* a free inside a free */
			else
				x_free(w, d, a);
			return false;
		default:
			x_assert_init(w, d, a);
			return false;
		}
	case D_MIXED: {
		unsigned int h = mix(w, a, (unsigned int)k, (unsigned int)s);

		switch (h % 7) {
		case 0:
			return false;
		case 1:
			return true;
		case 2:
			x_deactivate(w, d, a);
			return true;
		case 3:
			x_deactivate(w, d, a);
			x_free(w, d, a);
			return h & 8;
		case 4:
			x_init(w, d, a);
			return false;
		case 5:
			x_activate(w, d, a);
			return true;
		default:
			x_active_state(w, d, a, (h >> 4) & 1, 0);
			x_destroy(w, d, a);
			return h & 16;
		}
	}
	default:
		return false;
	}
}

static bool fixup_entry(struct world *w, int side, int d, int k, void *a,
			enum debug_obj_state s)
{
	struct trace *t;
	struct call *c = NULL;
	bool ret = false;
	int saved_side;

	if (!w)		/* diff_drop_all(): fixups do nothing */
		return false;
	saved_side = w->side;
	if (saved_side != side) {
		/* A library fixup during the model's turn, or the reverse. */
		fprintf(w->cfg.log ? w->cfg.log : stderr,
			"model: %s fixup called during the %s's turn\n",
			side == LIB ? "library" : "model",
			saved_side == LIB ? "library" : "model");
		abort();
	}
	t = &w->tr[side];
	/*
	 * A released range visits its objects in an order of the library's
	 * own, and an ACTIVE object without fixup_free warns without a
	 * fixup: there, warnings are counted from each top-level fixup on.
	 */
	if (w->depth == 0 && w->range_op)
		w->seg_base = side_warnings(w);
	if (t->n < MAXCALLS) {
		c = &t->c[t->n++];
		c->descr = (uint8_t)d;
		c->kind = (uint8_t)k;
		c->state = (uint8_t)s;
		c->depth = (uint8_t)(w->depth + 1);
		c->addr = (uintptr_t)a;
		c->wdelta = side_warnings(w) - w->seg_base;
	} else {
		t->lost++;
	}
	if (w->depth < MAX_DEPTH) {
		w->depth++;
		ret = behave(w, d, k, a, s, w->depth);
		w->depth--;
	}
	if (c)
		c->ret = ret;
	return ret;
}

#define THUNK(d, k, K)								\
static bool lib_##k##_##d(void *a, enum debug_obj_state s)			\
{ return fixup_entry(cur_world, LIB, d, K, a, s); }				\
static bool mod_##k##_##d(struct model *m, void *a, enum debug_obj_state s)	\
{ return fixup_entry(m->user, MODEL, d, K, a, s); }
#define THUNKS(d)								\
	THUNK(d, init, FIX_INIT) THUNK(d, activate, FIX_ACTIVATE)		\
	THUNK(d, destroy, FIX_DESTROY) THUNK(d, free, FIX_FREE)			\
	THUNK(d, assert_init, FIX_ASSERT_INIT)
THUNKS(0) THUNKS(1) THUNKS(2) THUNKS(3) THUNKS(4)
THUNKS(5) THUNKS(6) THUNKS(7) THUNKS(8) THUNKS(9)

typedef bool (*lib_fixup_fn)(void *, enum debug_obj_state);
#define ROW(d)	{ lib_init_##d, lib_activate_##d, lib_destroy_##d, lib_free_##d, lib_assert_init_##d }
#define MROW(d)	{ mod_init_##d, mod_activate_##d, mod_destroy_##d, mod_free_##d, mod_assert_init_##d }
static const lib_fixup_fn lib_thunks[DIFF_NDESCR][FIX_MAX] = {
	ROW(0), ROW(1), ROW(2), ROW(3), ROW(4), ROW(5), ROW(6), ROW(7), ROW(8), ROW(9),
};
static const model_fixup_fn model_thunks[DIFF_NDESCR][FIX_MAX] = {
	MROW(0), MROW(1), MROW(2), MROW(3), MROW(4), MROW(5), MROW(6), MROW(7), MROW(8), MROW(9),
};

static void setup_descrs(void)
{
	int d;

	for (d = 0; d < DIFF_NDESCR; d++) {
		unsigned int f = descr_info[d].fixups;
		struct debug_obj_descr *l = &lib_descrs[d];
		struct model_descr *m = &model_descrs[d];

		l->name = m->name = descr_names[d];
		l->is_static_object = m->is_static_object =
			descr_info[d].is_static ? is_static : NULL;
#define SET(field, K) do {							\
		l->field = (f & (1u << K)) ? lib_thunks[d][K] : NULL;		\
		m->field = (f & (1u << K)) ? model_thunks[d][K] : NULL;	\
	} while (0)
		SET(fixup_init, FIX_INIT);
		SET(fixup_activate, FIX_ACTIVATE);
		SET(fixup_destroy, FIX_DESTROY);
		SET(fixup_free, FIX_FREE);
		SET(fixup_assert_init, FIX_ASSERT_INIT);
#undef SET
	}
}

/* ---- the world ---- */

static void *slot_addr(const struct world *w, const struct slot *s)
{
	switch (s->region) {
	case R_ARENA:
		return arena + s->off;
	case R_STATIC:
		return w->statics + s->off;
	case R_STACK:
		return w->cfg.stack_area + s->off;
	default:
		return w->blocks[s->index].p + s->off;
	}
}

static char *area_base(const struct world *w, const struct area *a)
{
	switch (a->region) {
	case R_ARENA:
		return arena + a->off;
	case R_STATIC:
		return w->statics;
	case R_STACK:
		return w->cfg.stack_area;
	default:
		return w->blocks[a->index].p;
	}
}

static size_t area_len(const struct world *w, const struct area *a)
{
	return a->region == R_BLOCK ? w->blocks[a->index].size : a->len;
}

void *diff_shared_addr(unsigned int nthreads, unsigned int k)
{
	(void)nthreads;	/* stripe 0 of each chunk: at least 4096/9 bytes */
	return arena + (k % ARENA_CHUNKS) * CHUNK + (k / ARENA_CHUNKS) * 24;
}

void diff_drop_all(void)
{
	struct world *saved = cur_world;

	cur_world = NULL;	/* fixups do nothing */
	debug_check_no_obj_freed((void *)1, SIZE_MAX - 1);
	cur_world = saved;
}

/* Is the free check on?  Found out once, with a static object. */
bool diff_check_free(void)
{
	static char probe[16];

	if (check_free_state < 0) {
		pthread_once(&descrs_once, setup_descrs);
		debug_object_init(probe, &lib_descrs[D_BARE]);
		debug_check_no_obj_freed(probe, sizeof(probe));
		check_free_state = debug_object_get_state(probe) == ODEBUG_STATE_NOTAVAILABLE;
		debug_object_free(probe, &lib_descrs[D_BARE]);
	}
	return check_free_state;
}

static bool slot_taken(const struct world *w, const struct slot *s)
{
	unsigned int i;

	for (i = 0; i < w->nslots; i++)
		if (w->slots[i].region == s->region && w->slots[i].index == s->index &&
		    w->slots[i].off == s->off)
			return true;
	return false;
}

static void add_slot(struct world *w, uint64_t *rng, int region, int index,
		     unsigned int off)
{
	struct slot *s = &w->slots[w->nslots];
	uint64_t r = diff_rand(rng);

	s->region = (uint8_t)region;
	s->index = (uint8_t)index;
	s->off = (uint16_t)off;
	if (slot_taken(w, s))
		return;
	/* Static objects mostly get descriptors that know static objects. */
	if (region == R_STATIC && r % 4) {
		static const uint8_t statics[] = { D_STATIC_BARE, D_REPAIR, D_TIMER,
						   D_SEED, D_DEEP, D_MIXED };

		s->home = statics[(r >> 8) % sizeof(statics)];
	} else {
		s->home = (uint8_t)((r >> 8) % DIFF_NDESCR);
	}
	w->nslots++;
}

static void add_area(struct world *w, int region, int index, uint32_t off,
		     uint32_t len)
{
	struct area *a = &w->areas[w->nareas++];

	a->region = (uint8_t)region;
	a->index = (uint8_t)index;
	a->off = off;
	a->len = len;
}

static size_t block_size(uint16_t y)
{
	return 64 + y % 2048;
}

struct world *world_new(const struct world_config *cfg)
{
	struct world *w;
	uint64_t rng = cfg->layout_seed;
	unsigned int i, c, nstripes, stripe;
	struct debug_objects_stats st;

	if (!debug_objects_enabled())
		return NULL;
	pthread_once(&descrs_once, setup_descrs);
	w = calloc(1, sizeof(*w));
	if (!w)
		abort();
	w->cfg = *cfg;
	if (!w->cfg.log)
		w->cfg.log = stderr;
	w->mt = cfg->nthreads > 0;
	model_init(&w->m, w->mobjs, MAXOBJS);
	w->m.user = w;
	w->m.inject_bug = cfg->inject_bug;
	cur_world = w;
	debug_objects_get_stats(&st, sizeof(st));
	if (!w->mt && st.pool_used)	/* a failed run left trackers */
		diff_drop_all();
	w->m.check_free = diff_check_free();
	w->statics = statics_mem[w->mt ? cfg->thread : 0];

	/* This thread's stripe of every arena chunk; stripe 0 is shared. */
	nstripes = w->mt ? cfg->nthreads + 1 : 1;
	stripe = w->mt ? cfg->thread + 1 : 0;
	w->stripe_len = CHUNK / nstripes;
	w->stripe_off = stripe * w->stripe_len;

	for (i = 0; i < 24; i++) {
		c = i % ARENA_CHUNKS;
		add_slot(w, &rng, R_ARENA, 0, c * CHUNK + w->stripe_off +
			 (unsigned int)(diff_rand(&rng) % w->stripe_len));
	}
	for (i = 0; i < NSTATIC; i++)
		add_slot(w, &rng, R_STATIC, 0, i * 32);
	add_slot(w, &rng, R_STATIC, 0, 1 * 32 + 8);
	add_slot(w, &rng, R_STATIC, 0, 2 * 32 + 3);
	if (cfg->stack_area)
		for (i = 0; i < 6; i++)
			add_slot(w, &rng, R_STACK, 0,
				 (unsigned int)(diff_rand(&rng) % DIFF_STACK_AREA));
	for (i = 0; i < NBLOCKS; i++) {
		w->blocks[i].size = block_size((uint16_t)diff_rand(&rng));
		w->blocks[i].p = malloc(w->blocks[i].size);
		if (!w->blocks[i].p)
			abort();
		add_slot(w, &rng, R_BLOCK, (int)i, 0);
		add_slot(w, &rng, R_BLOCK, (int)i, 1 + (unsigned int)(diff_rand(&rng) % 63));
	}

	for (c = 0; c < ARENA_CHUNKS; c++)
		add_area(w, R_ARENA, 0, c * CHUNK + w->stripe_off, w->stripe_len);
	if (!w->mt)
		add_area(w, R_ARENA, 0, 0, sizeof(arena));
	add_area(w, R_STATIC, 0, 0, STATIC_BYTES);
	if (cfg->stack_area)
		add_area(w, R_STACK, 0, 0, DIFF_STACK_AREA);
	for (i = 0; i < NBLOCKS; i++)
		add_area(w, R_BLOCK, (int)i, 0, 0);

	debug_objects_get_stats(&st, sizeof(st));
	w->used0 = st.pool_used;
	if (!w->mt && w->used0) {
		fprintf(w->cfg.log, "model: %lu trackers left after dropping all\n",
			w->used0);
		free(w);
		return NULL;
	}
	return w;
}

void world_free(struct world *w)
{
	if (cur_world == w)
		cur_world = NULL;
	free(w);
}

void world_model_totals(const struct world *w, unsigned long *warnings,
			unsigned long *fixups, unsigned long *tracked)
{
	*warnings = w->m.warnings;
	*fixups = w->m.fixups;
	*tracked = w->m.n;
}

void world_cover(const struct world *w, unsigned long *cover)
{
	int i, j;

	for (i = 0; i < MOP_MAX; i++)
		for (j = 0; j < MROW_MAX; j++)
			cover[i * MROW_MAX + j] += w->m.cover[i][j];
}

/* ---- one step ---- */

/* Where a range operation goes: computed once, used by both sides. */
struct plan {
	void *addr;
	int d;
	uintptr_t start;
	size_t size;
	struct block *b;
	char *old, *new_block;
	size_t usable, new_size;
};

static void plan_range(struct world *w, const struct op *op, struct plan *p)
{
	const struct area *a = &w->areas[op->slot % w->nareas];
	size_t len = area_len(w, a), off = op->x % len;
	unsigned int cls = op->arg & 15;

	p->start = (uintptr_t)area_base(w, a) + off;
	if (w->mt)	/* other threads' objects are near: stay inside */
		p->size = op->y % (len - off + 1);
	else if (cls < 6)
		p->size = op->y % 64;
	else if (cls < 11)
		p->size = op->y % 1024;
	else if (cls < 13)
		p->size = op->y;
	else if (cls == 13)
		p->size = 0;
	else if (cls == 14)
		p->size = SIZE_MAX - off;	/* wraps: to the end of memory */
	else
		p->size = (size_t)1 << 40;	/* more chunks than buckets */
}

static int apply(struct world *w, const struct op *op, struct plan *p)
{
	unsigned int e = op->arg & 3, n = (op->arg >> 2) & 3;

	switch (op->kind) {
	case OP_INIT:
		x_init(w, p->d, p->addr);
		return 0;
	case OP_ACTIVATE:
		return x_activate(w, p->d, p->addr);
	case OP_DEACTIVATE:
		x_deactivate(w, p->d, p->addr);
		return 0;
	case OP_DESTROY:
		x_destroy(w, p->d, p->addr);
		return 0;
	case OP_FREE:
		x_free(w, p->d, p->addr);
		return 0;
	case OP_ASSERT_INIT:
		x_assert_init(w, p->d, p->addr);
		return 0;
	case OP_ACTIVE_STATE:
		x_active_state(w, p->d, p->addr, e, n);
		return 0;
	case OP_CHECK_RANGE:
		x_check(w, (void *)p->start, p->size);
		return 0;
	default:
		break;
	}
	/* A block released for real: the library sees free() or realloc(). */
	if (w->side == MODEL) {
		model_check_no_obj_freed(&w->m, p->old, p->usable);
		return 0;
	}
	p->old = p->b->p;
	p->usable = malloc_usable_size(p->old);
#ifndef DIFF_INTERPOSE
	debug_check_no_obj_freed(p->old, p->usable);
#endif
	if (op->kind == OP_FREE_BLOCK) {
		free(p->old);
		p->new_block = malloc(p->new_size);
	} else {
		p->new_block = realloc(p->old, p->new_size);
	}
	if (!p->new_block)
		abort();
	return 0;	/* the block moves after the model's turn */
}

static void put_call(FILE *f, const struct call *c)
{
	fprintf(f, "    %*s%s.%s(%#lx, %s) = %s  [warnings before: %lu]\n",
		2 * (c->depth - 1), "", descr_names[c->descr], fix_names[c->kind],
		(unsigned long)c->addr, state_names[c->state],
		c->ret ? "true" : "false", c->wdelta);
}

/* Fixup calls grouped by top-level call, the groups ordered by address. */
static unsigned int normalise(const struct trace *t, struct call *out)
{
	unsigned int starts[MAXCALLS + 1], order[MAXCALLS];
	unsigned int i, j, ns = 0, n = 0;

	for (i = 0; i < t->n; i++)
		if (i == 0 || t->c[i].depth == 1)
			starts[ns++] = i;
	starts[ns] = t->n;
	for (i = 0; i < ns; i++) {
		unsigned int v = i;

		for (j = i; j > 0 && t->c[starts[order[j - 1]]].addr > t->c[starts[v]].addr; j--)
			order[j] = order[j - 1];
		order[j] = v;
	}
	for (i = 0; i < ns; i++)
		for (j = starts[order[i]]; j < starts[order[i] + 1]; j++)
			out[n++] = t->c[j];
	return n;
}

static bool same_call(const struct call *a, const struct call *b)
{
	return a->descr == b->descr && a->kind == b->kind && a->state == b->state &&
	       a->depth == b->depth && a->ret == b->ret && a->addr == b->addr &&
	       a->wdelta == b->wdelta;
}

static void describe(struct world *w, const struct op *op, const char *what,
		     unsigned int nl, unsigned int nm)
{
	FILE *f = w->cfg.log;
	unsigned int i;

	fprintf(f, "model: MISMATCH at step %lu (thread %u): %s\nmodel:   op: ",
		w->step, w->cfg.thread, what);
	op_print(f, op);
	fprintf(f, "model:   library fixup calls (%u, %u lost):\n", nl, w->tr[LIB].lost);
	for (i = 0; i < nl; i++)
		put_call(f, &w->norm[LIB][i]);
	fprintf(f, "model:   model fixup calls (%u, %u lost):\n", nm, w->tr[MODEL].lost);
	for (i = 0; i < nm; i++)
		put_call(f, &w->norm[MODEL][i]);
}

/* Run @op on both sides and compare; @p is planned by the caller. */
static int run_step(struct world *w, const struct op *op, struct plan *p)
{
	struct debug_objects_stats s0, s1;
	unsigned long mw0 = w->m.warnings, mf0 = w->m.fixups;
	int ret[2];
	unsigned int i, nl, nm;
	char what[256];

	w->step++;
	cur_world = w;
	w->range_op = op->kind >= OP_CHECK_RANGE;
	if (!w->mt)
		debug_objects_get_stats(&s0, sizeof(s0));

	w->side = LIB;
	w->tr[LIB].n = w->tr[LIB].lost = 0;
	w->seg_base = w->mt ? 0 : s0.warnings;
	ret[LIB] = apply(w, op, p);
	if (!w->mt)
		debug_objects_get_stats(&s1, sizeof(s1));

	w->side = MODEL;
	w->tr[MODEL].n = w->tr[MODEL].lost = 0;
	w->seg_base = w->mt ? 0 : mw0;
	ret[MODEL] = apply(w, op, p);
	w->side = LIB;
	if (p->new_block) {
		/* Both turns saw the old block's slots; now they move. */
		p->b->p = p->new_block;
		p->b->size = p->new_size;
	}

	nl = normalise(&w->tr[LIB], w->norm[LIB]);
	nm = normalise(&w->tr[MODEL], w->norm[MODEL]);
	what[0] = '\0';
	if (ret[LIB] != ret[MODEL])
		snprintf(what, sizeof(what), "activate returned %d, model %d",
			 ret[LIB], ret[MODEL]);
	else if (nl != nm || w->tr[LIB].lost != w->tr[MODEL].lost)
		snprintf(what, sizeof(what), "%u fixup calls, model %u", nl, nm);
	for (i = 0; !what[0] && i < nl; i++)
		if (!same_call(&w->norm[LIB][i], &w->norm[MODEL][i]))
			snprintf(what, sizeof(what), "fixup call %u differs", i);
	if (!what[0] && !w->mt) {
		long lw = (long)(s1.warnings - s0.warnings), lf = (long)(s1.fixups - s0.fixups);
		long mw = (long)(w->m.warnings - mw0), mf = (long)(w->m.fixups - mf0);

		if (lw != mw || lf != mf)
			snprintf(what, sizeof(what),
				 "warnings +%ld fixups +%ld, model +%ld +%ld", lw, lf, mw, mf);
		else if (s1.pool_used - w->used0 != w->m.n)
			snprintf(what, sizeof(what), "%lu trackers in use, model %zu",
				 s1.pool_used - w->used0, w->m.n);
	}
	for (i = 0; !what[0] && i < w->nslots; i++) {
		void *a = slot_addr(w, &w->slots[i]);
		enum debug_obj_state ls = debug_object_get_state(a);
		enum debug_obj_state ms = model_get_state(&w->m, a);

		if (ls != ms)
			snprintf(what, sizeof(what), "slot %u (%p) is %s, model %s",
				 i, a, state_names[ls], state_names[ms]);
	}
	if (!what[0])
		return 0;
	describe(w, op, what, nl, nm);
	return -1;
}

int world_step(struct world *w, const struct op *op)
{
	struct plan p;
	const struct slot *s;

	memset(&p, 0, sizeof(p));
	if (op->kind >= OP_MAX)
		return 0;
	if (op->kind < OP_CHECK_RANGE) {
		s = &w->slots[op->slot % w->nslots];
		p.addr = slot_addr(w, s);
		p.d = op->descr < DIFF_NDESCR ? op->descr : s->home;
	} else if (op->kind == OP_CHECK_RANGE) {
		plan_range(w, op, &p);
	} else {
		/* check_free off: freed blocks would keep trackers forever */
		if (!w->m.check_free)
			return 0;
		p.b = &w->blocks[op->slot % NBLOCKS];
		p.new_size = block_size(op->y);
	}
	return run_step(w, op, &p);
}

/*
 * With check_free off nothing is dropped by a release: take every object
 * back to untracked through the API instead, as the model says it is.
 */
static void untrack_by_model(struct world *w)
{
	const struct debug_obj_descr *bare = &lib_descrs[D_BARE];

	cur_world = NULL;	/* no fixup can run anyway */
	while (w->m.n) {
		struct model_obj o = w->m.objs[w->m.n - 1];
		void *a = (void *)o.addr;

		if (o.state == ODEBUG_STATE_ACTIVE) {
			if (o.astate)
				debug_object_active_state(a, bare, o.astate, 0);
			debug_object_deactivate(a, bare);
		}
		debug_object_free(a, bare);
		w->m.n--;
	}
	cur_world = w;
}

int world_finish(struct world *w)
{
	struct op op = { OP_CHECK_RANGE, 0, DIFF_HOME, 0, 0, 0 };
	struct debug_objects_stats st;
	struct plan p;
	unsigned int i;
	int rc = 0;

	if (!w->m.check_free)
		untrack_by_model(w);

	/* Every area released: whatever is left is reported and dropped. */
	for (i = 0; i < w->nareas; i++) {
		memset(&p, 0, sizeof(p));
		p.start = (uintptr_t)area_base(w, &w->areas[i]);
		p.size = area_len(w, &w->areas[i]);
		op.slot = (uint8_t)i;
		if (run_step(w, &op, &p))
			rc = -1;
	}
	if (w->m.n) {
		fprintf(w->cfg.log, "model: %zu objects left after releasing every area\n",
			w->m.n);
		rc = -1;
	}
	debug_objects_get_stats(&st, sizeof(st));
	if (!w->mt && st.pool_used != w->used0) {
		fprintf(w->cfg.log, "model: %lu trackers in use after releasing every area\n",
			st.pool_used - w->used0);
		rc = -1;
	}
	for (i = 0; i < NBLOCKS; i++) {
#ifndef DIFF_INTERPOSE
		debug_check_no_obj_freed(w->blocks[i].p, malloc_usable_size(w->blocks[i].p));
#endif
		free(w->blocks[i].p);
		w->blocks[i].p = NULL;
	}
	return rc;
}

/* ---- operations as data ---- */

const char *op_name(int kind)
{
	return kind >= 0 && kind < OP_MAX ? op_names[kind] : "?";
}

void op_random(uint64_t *rng, struct op *op, bool threaded)
{
	static const uint8_t weight[OP_MAX] = {
		[OP_INIT] = 14, [OP_ACTIVATE] = 16, [OP_DEACTIVATE] = 12,
		[OP_DESTROY] = 6, [OP_FREE] = 8, [OP_ASSERT_INIT] = 7,
		[OP_ACTIVE_STATE] = 10, [OP_CHECK_RANGE] = 8,
		[OP_FREE_BLOCK] = 3, [OP_REALLOC_BLOCK] = 3,
	};
	uint64_t r = diff_rand(rng);
	unsigned int total = 0, pick, k;

	(void)threaded;
	for (k = 0; k < OP_MAX; k++)
		total += weight[k];
	pick = (unsigned int)(r % total);
	for (k = 0; pick >= weight[k]; k++)
		pick -= weight[k];
	r >>= 8;
	op->kind = (uint8_t)k;
	op->slot = (uint8_t)r;
	r >>= 8;
	op->descr = (r & 3) == 0 ? (uint8_t)((r >> 2) % DIFF_NDESCR) : DIFF_HOME;
	r >>= 8;
	op->arg = (uint8_t)r;
	if (k == OP_ACTIVE_STATE) {
		/* expect 0 or 1, the likely values; next 0 half the time */
		op->arg = (uint8_t)((r & 1) | ((r & 2) ? 0 : (r & 0xc)));
	}
	r >>= 8;
	op->x = (uint16_t)r;
	op->y = (uint16_t)(r >> 16);
}

void op_decode(const uint8_t *b, struct op *op)
{
	op->kind = (uint8_t)(b[0] % OP_MAX);
	op->slot = b[1];
	op->descr = (b[2] & 0x80) ? (uint8_t)(b[2] % DIFF_NDESCR) : DIFF_HOME;
	op->arg = b[3];
	op->x = (uint16_t)(b[4] | b[5] << 8);
	op->y = (uint16_t)(b[6] | b[7] << 8);
}

void op_print(FILE *f, const struct op *op)
{
	fprintf(f, "%s %u %u %u %u %u\n", op_name(op->kind), op->slot, op->descr,
		op->arg, op->x, op->y);
}

bool op_parse(const char *line, struct op *op)
{
	char name[32];
	unsigned int slot, descr, arg, x, y;
	int k;

	if (sscanf(line, "%31s %u %u %u %u %u", name, &slot, &descr, &arg, &x, &y) != 6)
		return false;
	for (k = 0; k < OP_MAX; k++)
		if (!strcmp(name, op_names[k]))
			break;
	if (k == OP_MAX || slot > 255 || descr > 255 || arg > 255 || x > 65535 || y > 65535)
		return false;
	op->kind = (uint8_t)k;
	op->slot = (uint8_t)slot;
	op->descr = (uint8_t)descr;
	op->arg = (uint8_t)arg;
	op->x = (uint16_t)x;
	op->y = (uint16_t)y;
	return true;
}
