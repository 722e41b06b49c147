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
 *
 * Like the kernel's per-CPU pools, each thread that tracks objects keeps a
 * small cache of free trackers, refilled and drained in batches of 32, so
 * the shared pool lock is taken once per batch rather than per object.  A
 * thread's cache goes back to the pool when the thread exits.  The
 * statistics of a running thread are folded in when its net count moves
 * by 32, or every 65536 operations (count_op()).
 */
#include <errno.h>
#include <limits.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "table.h"

#define BATCH 32

static odebug_spinlock_t pool_lock;
ODEBUG_HOT struct odebug_tracker *odebug_pool_base;	/* index 0 is never used */
uint32_t (*odebug_origins)[2];		/* per tracker, origins=1 only */
static uint32_t free_head;		/* free list, linked through hnext */
static unsigned long free_listed;	/* trackers on the free list */
/*
 * The first index handed out: 0 is none, and 1-3 stay unused so that the
 * batches of 32 that threads take (16 bytes each) are whole cache lines.
 * An object keeps its tracker across free and init (table.c's FREED), so
 * two threads whose batches shared a line would share it for good.
 */
#define FIRST	4
static unsigned long bump = FIRST;	/* next never-used index */
static unsigned long carved = FIRST;	/* indexes below this are available */
static unsigned long limit = FIRST;	/* reserved: indexes below this exist */
ODEBUG_HOT unsigned long odebug_pool_reserved;	/* the same, for lockless bounds checks */
static unsigned long min_free, max_used;
static bool ready;			/* pool_lock is initialised */

/*
 * Hand-outs and returns, folded in from each thread's own counts now and
 * then (count_op(), and at thread exit), so threads do not fight over the
 * line.
 */
static unsigned long allocated __attribute__((aligned(64)));
static unsigned long freed;

/*
 * Trackers that hold a tracked object: handed out and not given back, and
 * not FREED (a debug_object_free()d tracker stays linked, untracked, until
 * it is revived or reclaimed).  Trackers in threads' caches are not out.
 * Changed by one atomic add per tracker handed out, given back, made FREED
 * or revived, each before the tracker is linked or after it stops holding
 * its object, so zero means nothing is tracked: all a free() needs to know
 * to skip its check.  The built-in types' bound reads it too.
 */
unsigned long odebug_trackers_out __attribute__((aligned(64)));

static void out_add(long n)
{
	__atomic_add_fetch(&odebug_trackers_out, (unsigned long)n, __ATOMIC_RELAXED);
}

/* This thread's cache: 0 count and no key means "not caching yet". */
struct cache {
	uint32_t head;
	uint32_t count;
	bool registered;
	unsigned int allocs, frees;	/* not yet folded into the totals */
	int peak;			/* highest allocs - frees since the last fold */
};
static ODEBUG_TLS struct cache cache;
static pthread_key_t cache_key;
static bool cache_key_ok;

/* Held with the guard set, like every lock of ours (signal handlers). */
void odebug_pool_lock(void)
{
	odebug_guard_enter();
	odebug_spin_lock(&pool_lock);
}

void odebug_pool_unlock(void)
{
	odebug_spin_unlock(&pool_lock);
	odebug_guard_exit();
}

static unsigned long global_free(void)
{
	return odebug_load(&free_listed) + (odebug_load(&carved) - odebug_load(&bump));
}

/* Take one tracker from the shared pool; the pool lock is held. */
static struct odebug_tracker *take(void)
{
	struct odebug_tracker *t = NULL;

	if (free_head) {
		t = &odebug_pool_base[free_head];
		free_head = odebug_tracker_next(t);
		odebug_store(&free_listed, free_listed - 1);
	} else if (bump < carved) {
		t = &odebug_pool_base[bump];
		odebug_store(&bump, bump + 1);
	}
	return t;
}

/* Give one back; the pool lock is held. */
static void give(struct odebug_tracker *t)
{
	odebug_tracker_set_next(t, free_head);
	free_head = (uint32_t)(t - odebug_pool_base);
	odebug_store(&free_listed, free_listed + 1);
}

/*
 * The peaks at @used trackers in use: pool_max_used, and pool_min_free as
 * the pool stands now.  The pool lock is held.
 */
static void note_peak(unsigned long used)
{
	if ((long)used <= 0)
		return;
	if (used > odebug_load(&max_used))
		odebug_stat_max(&max_used, used);
	if (carved - FIRST >= used && carved - FIRST - used < min_free)
		odebug_store(&min_free, carved - FIRST - used);
}

/*
 * Add this thread's counts to the totals; keep the high-water marks.  The
 * peak is the folded total before this thread's window plus the highest
 * net count the window reached, so a burst that rises and falls between
 * two folds still counts (exact in one thread, within FOLD_NET per other
 * thread otherwise).
 */
static void fold(void)
{
	unsigned long a, f;
	long net = (long)cache.allocs - (long)cache.frees;
	int peak = cache.peak;

	if (!cache.allocs && !cache.frees)
		return;
	a = odebug_add(&allocated, cache.allocs) + cache.allocs;
	f = odebug_add(&freed, cache.frees) + cache.frees;
	cache.allocs = cache.frees = 0;
	cache.peak = 0;
	if (peak > 0) {
		unsigned long used = (unsigned long)((long)(a - f) - net + peak);
		unsigned long avail = odebug_load(&carved) - FIRST;

		/* A new peak only: most folds take no lock. */
		if (used > odebug_load(&max_used) ||
		    (avail >= used && avail - used < odebug_load(&min_free))) {
			odebug_pool_lock();
			note_peak(used);
			odebug_pool_unlock();
		}
	}
}

/* Give this thread's cached trackers back to the shared pool. */
void odebug_pool_drain_cache(void)
{
	fold();
	odebug_pool_lock();
	while (cache.count) {
		struct odebug_tracker *t = &odebug_pool_base[cache.head];

		cache.head = odebug_tracker_next(t);
		cache.count--;
		give(t);
	}
	odebug_pool_unlock();
}

/*
 * The FREED tracker this thread made last: a thread keeps at most one.
 * Freeing another object reclaims the previous one unless an init revived
 * it meanwhile, so FREED trackers stay bounded (one per thread) even where
 * no free check ever sees their memory (static or stack objects, a build
 * without the free() interposer), while a free followed by an init of the
 * same object, the common case, never pays for an unlink.
 */
ODEBUG_TLS uint32_t odebug_last_freed;

/* Unlink @index if it is still FREED (it may have been revived or reused). */
void odebug_reclaim_freed(uint32_t index)
{
	struct odebug_tracker *t = odebug_tracker_at(index);
	struct odebug_bucket *b;
	uint64_t w = odebug_tracker_word(t);
	bool gone = false;

	if (!odebug_word_freed(w))
		return;
	/* A FREED word is linked in its address's bucket: check it again there. */
	b = odebug_bucket_of(odebug_word_addr(w));
	odebug_bucket_lock(b);
	if (odebug_tracker_word(t) == w) {
		odebug_remove(b, t);
		gone = true;
	}
	odebug_bucket_unlock(b);
	if (gone)
		odebug_pool_recycle(t);
}

/* This thread's FREED tracker, at its exit (cache_flush()) and after the selftest. */
void odebug_reclaim_last_freed(void)
{
	uint32_t index = odebug_last_freed;

	odebug_last_freed = 0;
	if (index)
		odebug_reclaim_freed(index);
}

static void cache_flush(void *unused)
{
	(void)unused;
	odebug_reclaim_last_freed();	/* its FREED tracker, if still FREED */
	/* From now on this thread counts and returns trackers directly. */
	cache.registered = false;
	odebug_pool_drain_cache();
}

/*
 * The smaller of RLIMIT_AS and RLIMIT_DATA (a MAP_NORESERVE mapping counts
 * against both), or ULONG_MAX when neither is set.  Read once, at start.
 */
static unsigned long address_limit(void)
{
	unsigned long lim = ULONG_MAX;
	int saved = errno;
	struct rlimit rl;

	if (!getrlimit(RLIMIT_AS, &rl) && rl.rlim_cur != RLIM_INFINITY)
		lim = rl.rlim_cur;
	if (!getrlimit(RLIMIT_DATA, &rl) && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < lim)
		lim = rl.rlim_cur;
	errno = saved;
	return lim;
}

/* The one line that says what the limit costs. */
static void say_limit(unsigned long lim, unsigned long bytes, unsigned long trackers)
{
	struct odebug_buf b;

	odebug_buf_init(&b, 2);
	odebug_puts(&b, ODEBUG_PREFIX "address space limited to ");
	odebug_put_dec(&b, lim >> 20);
	odebug_puts(&b, " MiB (RLIMIT_AS/RLIMIT_DATA): the tracker pool reserves ");
	odebug_put_dec(&b, (bytes + (1ul << 20) - 1) >> 20);
	odebug_puts(&b, " MiB of it, pool_max=");
	odebug_put_dec(&b, trackers);
	odebug_putc(&b, '\n');
	odebug_flush(&b);
}

/*
 * Reserve pool_max trackers of address space; under a limit on address
 * space, at most a sixteenth of it (pool_max lowered to match, and one
 * line says so), so the program keeps its headroom; where the system
 * refuses (strict overcommit), as much as it allows, down to pool_size.
 */
bool odebug_pool_init(void)
{
	unsigned long want = odebug_opt.pool_max + 1, lim = address_limit();
	unsigned long per = sizeof(*odebug_pool_base) +
			    (odebug_opt.origins ? sizeof(*odebug_origins) : 0);

	odebug_spin_init(&pool_lock);
	if (want > UINT32_MAX)
		want = UINT32_MAX;
	if (lim != ULONG_MAX && want > lim / 16 / per) {
		want = lim / 16 / per;
		if (want < 2 * (odebug_opt.pool_size + FIRST))
			want = 2 * (odebug_opt.pool_size + FIRST);
		if (want < odebug_opt.pool_max + 1) {
			odebug_opt.pool_max = want - 1;
			say_limit(lim, want * per, want - 1);
		} else {
			want = odebug_opt.pool_max + 1;
		}
	}
	for (; want > odebug_opt.pool_size; want /= 2) {
		odebug_pool_base = odebug_reserve(want * sizeof(*odebug_pool_base));
		if (odebug_pool_base) {
			break;
		}
	}
	if (!odebug_pool_base)
		return false;
	if (odebug_opt.origins) {
		odebug_origins = odebug_reserve(want * sizeof(*odebug_origins));
		if (!odebug_origins) {
			odebug_unmap(odebug_pool_base, want * sizeof(*odebug_pool_base));
			odebug_pool_base = NULL;
			return false;
		}
	}
	limit = want;
	odebug_pool_reserved = want;
	carved = FIRST + odebug_opt.pool_size;
	if (carved > limit)
		carved = limit;
	min_free = global_free();
	cache_key_ok = pthread_key_create(&cache_key, cache_flush) == 0;
	ready = true;
	return true;
}

/* A start that failed after the pool was set up: nothing stays mapped. */
void odebug_pool_fini(void)
{
	if (!ready)
		return;
	if (cache_key_ok)
		pthread_key_delete(cache_key);
	cache_key_ok = ready = false;
	if (odebug_origins)
		odebug_unmap(odebug_origins, limit * sizeof(*odebug_origins));
	odebug_unmap(odebug_pool_base, limit * sizeof(*odebug_pool_base));
	odebug_origins = NULL;
	odebug_pool_base = NULL;
	bump = carved = limit = FIRST;
	odebug_pool_reserved = 0;
}

/*
 * Trackers are reached at random: with many of them, huge pages spare TLB
 * misses, for the pool and the table.  Once, at ODEBUG_HUGE_AT trackers
 * carved, outside any lock (two system calls each; the collapse copies
 * what is resident, a few milliseconds); before, a small program would pay
 * a zeroed 2 MiB page for each region its first objects touch.  The pool
 * beyond what is carved gets huge pages as it is touched.
 */
static void go_huge(void)
{
	static int done;
	size_t bytes = limit * sizeof(*odebug_pool_base);

	if (__atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL))
		return;
	if (!madvise(odebug_pool_base, bytes, MADV_HUGEPAGE))
		madvise(odebug_pool_base, odebug_load(&carved) * sizeof(*odebug_pool_base),
			ODEBUG_MADV_COLLAPSE);
	odebug_table_go_huge();
}

/* Carve @n more trackers (up to the reservation); the pool lock is held. */
static void carve(unsigned long n)
{
	odebug_store(&carved, carved + n < limit ? carved + n : limit);
}

/*
 * Keep at least a quarter of pool_size ready, and let this thread cache
 * trackers (its exit hands them back).  Called with no lock held.
 * Returns false only when the pool is empty and cannot grow (pool_max
 * reached).
 */
bool odebug_pool_fill(void)
{
	unsigned long low = odebug_opt.pool_size / 4 + 16;
	bool ok;

	if (unlikely(!cache.registered) && cache_key_ok) {
		cache.registered = true;
		odebug_guard_enter();	/* setspecific may allocate */
		pthread_setspecific(cache_key, (void *)1);
		odebug_guard_exit();
	}
	if (likely(cache.count || global_free() >= low))
		return true;
	odebug_pool_lock();
	if (global_free() < low) {
		unsigned long n = (carved - FIRST) / 2;

		carve(n > odebug_opt.pool_size ? n : odebug_opt.pool_size);
	}
	ok = global_free() > 0;
	odebug_pool_unlock();
	if (unlikely(odebug_load(&carved) >= ODEBUG_HUGE_AT))
		go_huge();
	return ok;
}

/*
 * Fold when this thread's net count (hand-outs minus returns) has moved by
 * FOLD_NET, which keeps pool_used, pool_max_used and pool_min_free within
 * FOLD_NET per thread, or after FOLD_OPS operations.  A thread whose
 * objects come and go in balance then writes no shared line for FOLD_OPS
 * operations: folding every 64 cost two threads a tenth of their
 * throughput.
 */
#define FOLD_NET	32
#define FOLD_OPS	65536u

static void count_op(unsigned int *counter)
{
	int net;

	++*counter;
	net = (int)(cache.allocs - cache.frees);
	if (net > cache.peak)
		cache.peak = net;
	if (net > FOLD_NET || net < -FOLD_NET || cache.allocs + cache.frees >= FOLD_OPS ||
	    !cache.registered)
		fold();
}

/* Called with a bucket lock held: takes nothing but the pool lock. */
struct odebug_tracker *odebug_pool_alloc(void)
{
	struct odebug_tracker *t;

	if (!cache.count && cache.registered) {
		odebug_pool_lock();
		while (cache.count < BATCH && (t = take())) {
			odebug_tracker_set_next(t, cache.head);
			cache.head = (uint32_t)(t - odebug_pool_base);
			cache.count++;
		}
		odebug_pool_unlock();
	}
	if (cache.count) {
		t = &odebug_pool_base[cache.head];
		cache.head = odebug_tracker_next(t);
		cache.count--;
	} else {
		odebug_pool_lock();
		t = take();
		odebug_pool_unlock();
		if (!t)
			return NULL;
	}
	count_op(&cache.allocs);
	out_add(1);
	/*
	 * No memset: a lockless reader may still be looking at this tracker
	 * (its word is RETIRED, or 0 when fresh); the caller sets the word.
	 */
	t->astate = 0;
	odebug_tracker_set_origin(t, ODEBUG_ORIGIN_INIT, 0);
	odebug_tracker_set_origin(t, ODEBUG_ORIGIN_ACTIVATE, 0);
	return t;
}

/*
 * A tracker made FREED (debug_object_free) or revived (init), staying
 * linked: counted as given back or handed out, with no pool traffic.
 */
void odebug_pool_count(bool alloc)
{
	out_add(alloc ? 1 : -1);
	odebug_guard_enter();
	count_op(alloc ? &cache.allocs : &cache.frees);
	odebug_guard_exit();
}

static void put(struct odebug_tracker *t);

/*
 * May be called without a bucket lock: the guard covers the cache, which a
 * signal handler's free() must not touch halfway through an update.
 */
void odebug_pool_free(struct odebug_tracker *t)
{
	out_add(-1);
	odebug_guard_enter();
	count_op(&cache.frees);
	put(t);
	odebug_guard_exit();
}

/* A FREED tracker unlinked: its free was counted when it became FREED. */
void odebug_pool_recycle(struct odebug_tracker *t)
{
	odebug_guard_enter();
	put(t);
	odebug_guard_exit();
}

static void put(struct odebug_tracker *t)
{
	if (!cache.registered) {	/* no exit hook: nothing to cache */
		odebug_pool_lock();
		give(t);
		odebug_pool_unlock();
	} else {
		odebug_tracker_set_next(t, cache.head);
		cache.head = (uint32_t)(t - odebug_pool_base);
		if (++cache.count >= 2 * BATCH) {
			odebug_pool_lock();
			while (cache.count > BATCH) {
				t = &odebug_pool_base[cache.head];
				cache.head = odebug_tracker_next(t);
				cache.count--;
				give(t);
			}
			odebug_pool_unlock();
		}
	}
}

void odebug_pool_stats(struct debug_objects_stats *s)
{
	unsigned long a, f, folded;

	if (!ready)	/* disabled: no pool, all zero */
		return;
	odebug_pool_lock();
	folded = odebug_load(&allocated) - odebug_load(&freed);
	if (cache.peak > 0)	/* this thread's window, not yet folded */
		note_peak(folded + (unsigned long)cache.peak);
	a = odebug_load(&allocated) + cache.allocs;	/* this thread's too */
	f = odebug_load(&freed) + cache.frees;
	s->pool_used = a - f;
	s->pool_free = carved - FIRST - (a - f);	/* shared, and in thread caches */
	note_peak(s->pool_used);
	s->pool_min_free = min_free;
	s->pool_max_used = odebug_load(&max_used);
	s->objs_allocated = a;
	s->objs_freed = f;
	odebug_pool_unlock();
}

/* The selftest leaves the counters as it found them. */
void odebug_pool_restore(const struct debug_objects_stats *s)
{
	odebug_pool_lock();
	odebug_store(&min_free, s->pool_min_free);
	odebug_store(&max_used, s->pool_max_used);
	odebug_store(&allocated, s->objs_allocated);
	odebug_store(&freed, s->objs_freed);
	cache.allocs = cache.frees = 0;
	cache.peak = 0;
	odebug_pool_unlock();
}
