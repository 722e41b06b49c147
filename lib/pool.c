/* SPDX-License-Identifier: MIT */
/*
 * pool.c - the tracker pool.
 *
 * Trackers are never malloc'ed.  At start the pool reserves address space
 * for pool_max trackers in one mapping (MAP_NORESERVE: only trackers ever
 * used become resident), so a tracker is named by a 32-bit index, which is
 * what the table's chains store.  Trackers are handed out from a free list
 * of returned ones, then from a "carved" region that grows in steps (at
 * least pool_size, half of all carved so far) before it runs dry, as the
 * kernel's debug_objects_fill_pool() refills its pool.  Nothing is mapped
 * or unmapped after start.
 */
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

static pthread_spinlock_t pool_lock;
struct odebug_tracker *odebug_pool_base;	/* index 0 is never used */
#define base odebug_pool_base
static uint32_t free_head;		/* free list, linked through hnext */
static unsigned long free_listed;	/* trackers on the free list */
static unsigned long bump = 1;		/* next never-used index */
static unsigned long carved = 1;	/* indexes below this are available */
static unsigned long limit = 1;		/* reserved: indexes below this exist */
static unsigned long min_free, max_used;
unsigned long odebug_pool_used;		/* trackers in use; read without the lock */
static unsigned long allocated, freed;	/* hand-outs and returns */
static bool ready;			/* pool_lock is initialised */

void odebug_pool_lock(void)
{
	odebug_spin_lock(&pool_lock);
}

void odebug_pool_unlock(void)
{
	pthread_spin_unlock(&pool_lock);
}

static unsigned long free_count(void)
{
	return free_listed + (carved - bump);
}

/*
 * Reserve pool_max trackers of address space; where the system refuses
 * (strict overcommit), as much as it allows, down to pool_size.
 */
bool odebug_pool_init(void)
{
	unsigned long want = odebug_opt.pool_max + 1;

	pthread_spin_init(&pool_lock, PTHREAD_PROCESS_PRIVATE);
	if (want > UINT32_MAX)
		want = UINT32_MAX;
	for (; want > odebug_opt.pool_size; want /= 2) {
		long p = syscall(SYS_mmap, NULL, want * sizeof(*base),
				 PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

		if (p != -1) {
			base = (struct odebug_tracker *)p;
			/* Trackers are reached at random: fewer TLB misses. */
			madvise(base, want * sizeof(*base), MADV_HUGEPAGE);
			break;
		}
	}
	if (!base)
		return false;
	limit = want;
	carved = 1 + odebug_opt.pool_size;
	if (carved > limit)
		carved = limit;
	min_free = free_count();
	ready = true;
	return true;
}

/* Carve @n more trackers (up to the reservation); the pool lock is held. */
static void carve(unsigned long n)
{
	carved = carved + n < limit ? carved + n : limit;
}

/*
 * Keep at least a quarter of pool_size ready.  Called with no lock held.
 * Returns false only when the pool is empty and cannot grow (pool_max
 * reached).
 */
bool odebug_pool_fill(void)
{
	unsigned long low = odebug_opt.pool_size / 4 + 16;
	bool ok;

	if (likely(odebug_load(&free_listed) + (odebug_load(&carved) - odebug_load(&bump)) >= low))
		return true;
	odebug_pool_lock();
	if (free_count() < low) {
		unsigned long n = (carved - 1) / 2;

		carve(n > odebug_opt.pool_size ? n : odebug_opt.pool_size);
	}
	ok = free_count() > 0;
	odebug_pool_unlock();
	return ok;
}

/* Called with a bucket lock held: takes nothing but the pool lock. */
struct odebug_tracker *odebug_pool_alloc(void)
{
	struct odebug_tracker *t = NULL;

	odebug_pool_lock();
	if (free_head) {
		t = &base[free_head];
		free_head = t->hnext;
		free_listed--;
	} else if (bump < carved) {
		t = &base[bump++];
	}
	if (t) {
		unsigned long f = free_count();

		if (f < min_free)
			min_free = f;
		if (++odebug_pool_used > max_used)
			max_used = odebug_pool_used;
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
	t->hnext = free_head;
	free_head = odebug_tracker_index(t);
	free_listed++;
	odebug_pool_used--;
	freed++;
	odebug_pool_unlock();
}

void odebug_pool_stats(struct debug_objects_stats *s)
{
	if (!ready)	/* disabled: no pool, all zero */
		return;
	odebug_pool_lock();
	s->pool_free = free_count();
	s->pool_min_free = min_free;
	s->pool_used = odebug_pool_used;
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
