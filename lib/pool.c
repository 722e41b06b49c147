/* SPDX-License-Identifier: MIT */
/*
 * pool.c - the tracker pool.
 *
 * Trackers are never malloc'ed: the pool carves them out of slabs mapped
 * with raw mmap system calls, so that tracking an object never re-enters
 * the host's allocator.  The pool is filled before it runs dry, outside any
 * lock, from the operations that may need a tracker (init, activate,
 * assert_init), as the kernel's debug_objects_fill_pool() does.  Slabs are
 * never unmapped: trackers go back to the free list for reuse.
 */
#include <string.h>

#include "internal.h"

static pthread_spinlock_t pool_lock;
static struct odebug_tracker *free_list;
static unsigned long free_count, min_free, max_used;
unsigned long odebug_pool_used;	/* trackers in use; read without the lock */
#define used odebug_pool_used
static unsigned long total;		/* trackers carved from slabs */
static unsigned long allocated, freed;	/* hand-outs and returns */
static int filling;			/* one thread maps at a time */
static bool ready;			/* pool_lock is initialised */

void odebug_pool_lock(void)
{
	odebug_spin_lock(&pool_lock);
}

void odebug_pool_unlock(void)
{
	pthread_spin_unlock(&pool_lock);
}

/* Map a slab of @n trackers (or fewer, up to pool_max) and add it. */
static bool grow(unsigned long n)
{
	struct odebug_tracker *slab, *t;
	unsigned long room = odebug_opt.pool_max - odebug_load(&total);
	size_t bytes;

	if (n > room)
		n = room;
	if (!n)
		return false;
	bytes = (n * sizeof(*slab) + 4095) & ~(size_t)4095;
	n = bytes / sizeof(*slab);
	if (n > room)
		n = room;
	slab = odebug_map(bytes);
	if (!slab)
		return false;
	for (t = slab; t < slab + n - 1; t++)
		t->next = t + 1;
	odebug_pool_lock();
	slab[n - 1].next = free_list;
	free_list = slab;
	free_count += n;
	total += n;
	odebug_pool_unlock();
	return true;
}

bool odebug_pool_init(void)
{
	pthread_spin_init(&pool_lock, PTHREAD_PROCESS_PRIVATE);
	if (!grow(odebug_opt.pool_size))
		return false;
	min_free = free_count;
	ready = true;
	return true;
}

/*
 * Keep at least a quarter of pool_size ready.  Called with no lock held;
 * each slab is half as large as everything mapped so far (at least
 * pool_size), so a million objects cost a few dozen mappings.  Returns
 * false only when the pool is empty and cannot grow (pool_max reached, or
 * the system refused the mapping).
 */
bool odebug_pool_fill(void)
{
	unsigned long low = odebug_opt.pool_size / 4 + 16;
	bool ok = true;

	if (likely(odebug_load(&free_count) >= low))
		return true;
	if (__atomic_exchange_n(&filling, 1, __ATOMIC_ACQUIRE))
		return true;	/* another thread is mapping a slab */
	odebug_guard_enter();
	if (odebug_load(&free_count) < low) {
		unsigned long n = odebug_load(&total) / 2;

		ok = grow(n > odebug_opt.pool_size ? n : odebug_opt.pool_size);
	}
	odebug_guard_exit();
	__atomic_store_n(&filling, 0, __ATOMIC_RELEASE);
	return ok || odebug_load(&free_count) > 0;
}

/* Called with a bucket lock held: takes nothing but the pool lock. */
struct odebug_tracker *odebug_pool_alloc(void)
{
	struct odebug_tracker *t;

	odebug_pool_lock();
	t = free_list;
	if (t) {
		free_list = t->next;
		free_count--;
		if (free_count < min_free)
			min_free = free_count;
		if (++used > max_used)
			max_used = used;
		allocated++;
	}
	odebug_pool_unlock();
	if (t)
		memset(t, 0, sizeof(*t));
	return t;
}

void odebug_pool_free(struct odebug_tracker *t)
{
	odebug_pool_lock();
	t->next = free_list;
	free_list = t;
	free_count++;
	used--;
	freed++;
	odebug_pool_unlock();
}

void odebug_pool_stats(struct debug_objects_stats *s)
{
	if (!ready)	/* disabled: no pool, all zero */
		return;
	odebug_pool_lock();
	s->pool_free = free_count;
	s->pool_min_free = min_free;
	s->pool_used = used;
	s->pool_max_used = max_used;
	s->objs_allocated = allocated;
	s->objs_freed = freed;
	odebug_pool_unlock();
}

/* The selftest leaves the counters as it found them. */
void odebug_pool_restore(const struct debug_objects_stats *s)
{
	odebug_pool_lock();
	min_free = s->pool_min_free;
	max_used = s->pool_max_used;
	allocated = s->objs_allocated;
	freed = s->objs_freed;
	odebug_pool_unlock();
}
