/* SPDX-License-Identifier: MIT */
/*
 * depot.c - the stack depot: each distinct stack stored once, named by a
 * 32-bit id that a tracker can afford to carry (origins=1).
 *
 * Stacks are appended to one large mapping reserved at start (MAP_NORESERVE:
 * only what is used becomes resident) and indexed by an open-addressing
 * hash table, as AddressSanitizer's stack depot does.  Lookups and inserts
 * take one spinlock; called with no bucket lock held.
 */
#include <string.h>
#include <sys/mman.h>

#include "table.h"

/*
 * Reserved, not committed.  A stack's id is its offset in units of
 * ID_SCALE bytes (32 bits, kept beside the pool); the index is probed at
 * most PROBES slots from a stack's hash.
 */
#define DEPOT_BYTES	((size_t)256 << 20)
#define INDEX_SLOTS	((size_t)1 << 20)
#define ID_SCALE	8
#define PROBES		256

struct depot_stack {
	uint32_t hash;
	uint32_t depth;
	uintptr_t pcs[];
};

static char *store;		/* stacks, ID_SCALE-aligned, appended */
static size_t used = ID_SCALE;	/* offset 0 means "no stack" */
static uint32_t *slots;		/* offset / 8 of each stack, 0: empty */
static odebug_spinlock_t depot_lock;

bool odebug_depot_init(void)
{
	odebug_spin_init(&depot_lock);
	store = odebug_reserve(DEPOT_BYTES);
	slots = odebug_reserve(INDEX_SLOTS * sizeof(*slots));
	if (store && slots)
		return true;
	if (store)
		odebug_unmap(store, DEPOT_BYTES);
	if (slots)
		odebug_unmap(slots, INDEX_SLOTS * sizeof(*slots));
	store = NULL;
	slots = NULL;
	return false;
}

static uint32_t hash_pcs(void *const *pcs, int n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ (uint64_t)n;
	int i;

	for (i = 0; i < n; i++) {
		h ^= (uint64_t)(uintptr_t)pcs[i];
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 33;
	}
	return (uint32_t)h;
}

static struct depot_stack *at(uint32_t id)
{
	return (struct depot_stack *)(store + (size_t)id * ID_SCALE);
}

/**
 * odebug_depot_save - store @n return addresses; returns their id, 0 if full
 */
uint32_t odebug_depot_save(void *const *pcs, int n)
{
	uint32_t hash = hash_pcs(pcs, n), id = 0;
	size_t i, probes, need;

	if (!store || n <= 0)
		return 0;
	need = sizeof(struct depot_stack) + (size_t)n * sizeof(uintptr_t);
	odebug_guard_enter();
	odebug_spin_lock(&depot_lock);
	/* Bounded probing: a crowded index loses origins, never hangs. */
	for (i = hash & (INDEX_SLOTS - 1), probes = 0; probes < PROBES;
	     i = (i + 1) & (INDEX_SLOTS - 1), probes++) {
		struct depot_stack *s;

		if (!slots[i]) {
			if (used + need > DEPOT_BYTES || used / ID_SCALE > UINT32_MAX)
				break;	/* full: no origin for this one */
			s = (struct depot_stack *)(store + used);
			s->hash = hash;
			s->depth = (uint32_t)n;
			memcpy(s->pcs, pcs, (size_t)n * sizeof(uintptr_t));
			id = slots[i] = (uint32_t)(used / ID_SCALE);
			used += need;
			break;
		}
		s = at(slots[i]);
		if (s->hash == hash && s->depth == (uint32_t)n &&
		    !memcmp(s->pcs, pcs, (size_t)n * sizeof(uintptr_t))) {
			id = slots[i];
			break;
		}
	}
	odebug_spin_unlock(&depot_lock);
	odebug_guard_exit();
	return id;
}

/* The stack named @id: its frames in *@pcs; returns how many. */
int odebug_depot_get(uint32_t id, const uintptr_t **pcs)
{
	struct depot_stack *s;

	if (!id || !store)
		return 0;
	s = at(id);	/* immutable once published under the lock */
	*pcs = s->pcs;
	return (int)s->depth;
}

/* fork(): held across it, like the bucket locks. */
void odebug_depot_lock(void)
{
	if (store)
		odebug_spin_lock(&depot_lock);
}

void odebug_depot_unlock(void)
{
	if (store)
		odebug_spin_unlock(&depot_lock);
}
