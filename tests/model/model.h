/* SPDX-License-Identifier: MIT */
/*
 * model.h - a reference model of the debugobjects state table.
 *
 * The model is meant to be obviously correct rather than fast: a flat array
 * of objects searched linearly, no hashing, no pool, no locks.  Each
 * operation is a direct transcription of one table of
 * /work/shared/spec/kernel-debugobjects.md §2, plus libodebug's two
 * documented changes (include/odebug.h): the free-range check reports an
 * ACTIVE object once, calls its tracker's fixup_free, then drops whatever
 * tracker is left at the address; and a descriptor without
 * is_static_object but with fixup_activate gets fixup_activate
 * (NOTAVAILABLE) before an untracked activate is reported, and the report
 * is made only if the object is still untracked afterwards.
 *
 * Fixups receive the model, so that they can re-enter it, as the library's
 * fixups re-enter the library.
 */
#ifndef ODEBUG_MODEL_H
#define ODEBUG_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "odebug.h"

struct model;

typedef bool (*model_fixup_fn)(struct model *m, void *addr,
			       enum debug_obj_state state);

/* The model's struct debug_obj_descr: fixups take the model. */
struct model_descr {
	const char *name;
	bool (*is_static_object)(void *addr);
	model_fixup_fn fixup_init;
	model_fixup_fn fixup_activate;
	model_fixup_fn fixup_destroy;
	model_fixup_fn fixup_free;
	model_fixup_fn fixup_assert_init;
};

struct model_obj {
	uintptr_t addr;
	const struct model_descr *descr;	/* the one it was tracked with */
	enum debug_obj_state state;
	unsigned int astate;
};

/* Which row of which table an operation took: coverage, for the record. */
enum model_op {
	MOP_INIT, MOP_ACTIVATE, MOP_DEACTIVATE, MOP_DESTROY, MOP_FREE,
	MOP_ASSERT_INIT, MOP_ACTIVE_STATE, MOP_CHECK_FREE, MOP_MAX
};
/* Rows: the states, NOTAVAILABLE meaning untracked, plus the extra rows. */
enum model_row {
	MROW_STATIC = ODEBUG_STATE_MAX,	/* untracked, is_static_object true */
	MROW_SEED,			/* untracked, seed-style fixup_activate */
	MROW_ASTATE,			/* astate != 0 (deactivate, active_state) */
	MROW_MAX
};

struct model {
	struct model_obj *objs;		/* objs[0..n) are tracked */
	size_t n, cap;
	unsigned long warnings, fixups;
	bool check_free;		/* the check_free option */
	/* Deliberate divergence, to prove the differential test can fail. */
	bool inject_bug;
	unsigned long cover[MOP_MAX][MROW_MAX];
	void *user;			/* for the fixups */
};

/* @objs: room for @cap objects; tracking more than that aborts. */
void model_init(struct model *m, struct model_obj *objs, size_t cap);

void model_object_init(struct model *m, void *addr, const struct model_descr *d);
int model_object_activate(struct model *m, void *addr, const struct model_descr *d);
void model_object_deactivate(struct model *m, void *addr, const struct model_descr *d);
void model_object_destroy(struct model *m, void *addr, const struct model_descr *d);
void model_object_free(struct model *m, void *addr, const struct model_descr *d);
void model_object_assert_init(struct model *m, void *addr, const struct model_descr *d);
void model_object_active_state(struct model *m, void *addr, const struct model_descr *d,
			       unsigned int expect, unsigned int next);
void model_check_no_obj_freed(struct model *m, const void *addr, size_t size);

/* NOTAVAILABLE when untracked, as debug_object_get_state. */
enum debug_obj_state model_get_state(const struct model *m, const void *addr);
const struct model_obj *model_find(const struct model *m, const void *addr);

#endif
