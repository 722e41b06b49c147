/* SPDX-License-Identifier: MIT */
/*
 * table.h - the table layer: trackers (tracker.h, the word and its
 * transitions), the table and its buckets, the pool, the descriptors, the
 * stack depot, thread stacks as learned, and the checkers' registry
 * (registry.h).  It calls only the base.
 */
#ifndef ODEBUG_TABLE_LAYER_H
#define ODEBUG_TABLE_LAYER_H

#include "base.h"
#include "registry.h"

/* "pool.c": trackers, in one mapping reserved at start */
bool odebug_pool_init(void);
void odebug_pool_fini(void);
bool odebug_pool_fill(void);
#include "tracker.h"


/*
 * With origins=1, the depot ids of a tracker's init and activate stacks,
 * beside the pool (NULL otherwise): trackers stay 16 bytes without them.
 */
enum odebug_origin { ODEBUG_ORIGIN_INIT, ODEBUG_ORIGIN_ACTIVATE };
extern ODEBUG_HIDDEN uint32_t (*odebug_origins)[2];

static inline uint32_t odebug_tracker_origin(const struct odebug_tracker *t,
					     enum odebug_origin which)
{
	return odebug_origins ? odebug_origins[odebug_tracker_index(t)][which] : 0;
}

static inline void odebug_tracker_set_origin(const struct odebug_tracker *t,
					     enum odebug_origin which, uint32_t id)
{
	if (odebug_origins)
		odebug_origins[odebug_tracker_index(t)][which] = id;
}
struct odebug_tracker *odebug_pool_alloc(void);
void odebug_pool_free(struct odebug_tracker *t);
void odebug_pool_recycle(struct odebug_tracker *t);
void odebug_pool_count(bool alloc);
void odebug_pool_lock(void);
void odebug_pool_unlock(void);
void odebug_pool_stats(struct debug_objects_stats *s);
void odebug_pool_restore(const struct debug_objects_stats *s);


/*
 * "pool.c": this thread's one FREED tracker left linked by a lockless
 * free (object-free.c), unlinked at the next one or at the thread's exit.
 */
extern ODEBUG_HIDDEN ODEBUG_TLS uint32_t odebug_last_freed;
void odebug_reclaim_freed(uint32_t index);
void odebug_reclaim_last_freed(void);


/* "descr.c": the descriptor registry; descriptors whose module may be gone */
int odebug_descr_note_slow(const struct debug_obj_descr *d);
int odebug_descr_slot(const struct debug_obj_descr *d);


/* "descr.c": print_stats=1's counts per type */
void odebug_types_reported(const struct debug_obj_descr *d);
void odebug_types_forget(const struct debug_obj_descr *d);
extern ODEBUG_HIDDEN ODEBUG_TLS const struct debug_obj_descr *odebug_descr_last;
extern ODEBUG_HIDDEN ODEBUG_TLS int odebug_descr_last_slot;
extern ODEBUG_HIDDEN ODEBUG_TLS unsigned int odebug_descr_last_epoch;
extern ODEBUG_HIDDEN unsigned int odebug_descr_epoch;

/*
 * The slot of @d, registered when a tracker is made: two compares, unless
 * the descriptor changed or a module was unloaded since (another module's
 * descriptor may now have @d's address).  -1 when the registry is full:
 * not tracked.
 */
static inline int odebug_descr_note(const struct debug_obj_descr *d)
{
	if (unlikely(odebug_descr_last != d ||
		     odebug_descr_last_epoch != __atomic_load_n(&odebug_descr_epoch, __ATOMIC_RELAXED)))
		return odebug_descr_note_slow(d);
	return odebug_descr_last_slot;
}

/* A module was unloaded: every thread's cached descriptor is checked again. */
static inline void odebug_descr_forget(void)
{
	__atomic_add_fetch(&odebug_descr_epoch, 1, __ATOMIC_RELAXED);
}
void odebug_descr_resolve(struct odebug_snapshot *o);

/* "depot.c": stacks stored once, named by 32-bit ids */
bool odebug_depot_init(void);
uint32_t odebug_depot_save(void *const *pcs, int n);
int odebug_depot_get(uint32_t id, const uintptr_t **pcs);
void odebug_depot_lock(void);
void odebug_depot_unlock(void);
uintptr_t odebug_stack_top(void);	/* "stack.c" */

/* "stack.c": thread stacks */
void odebug_stack_init(void);
bool odebug_on_stack(uintptr_t addr, uintptr_t *stack_base);
void odebug_stack_prepare(void);
void odebug_stack_learn(void);
void odebug_stack_learn_main(void);
void odebug_stack_forget(void);
bool odebug_on_any_stack(uintptr_t addr);
void odebug_stack_note_main(void);
void odebug_stack_mark(uintptr_t addr);

#endif /* ODEBUG_TABLE_LAYER_H */
