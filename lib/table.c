/* SPDX-License-Identifier: MIT */
/*
 * table.c - the tracker table.
 *
 * 16384 buckets hashed by 4 KiB chunk, each with its own spinlock: all
 * trackers of one chunk share a bucket, so the free check visits exactly
 * one bucket per chunk released (the kernel's design).  Unlike the kernel's
 * single chain per bucket, a bucket holds 64 short chains: an object's
 * chain is its 64-byte slot within the chunk, rotated by the chunk's hash.
 * Finding an object costs the same whether its page holds one object or
 * sixty-four, and the free check of a small block walks only the chains of
 * the slots it covers.  256 counters per
 * bucket, indexed by more bits of the chunk's hash, count the trackers of
 * the chunks that map to them, so the free check passes over a chunk with
 * no tracker without taking the lock.  Chains link trackers by 32-bit pool
 * index.
 */
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

#define HASH_BITS	14
#define HASH_SIZE	((size_t)1 << HASH_BITS)
#define FILTER_BITS	8
#define FILTER_SIZE	(1 << FILTER_BITS)

struct odebug_bucket *odebug_buckets;
uint32_t (*odebug_heads)[ODEBUG_CHAINS];	/* per bucket, four cache lines */
#define buckets odebug_buckets
#define heads odebug_heads
static uint8_t (*filter)[FILTER_SIZE];		/* per bucket, saturating counts */
unsigned long odebug_max_chain;

void odebug_stat_max(unsigned long *stat, unsigned long value)
{
	unsigned long old = odebug_load(stat);

	while (value > old &&
	       !__atomic_compare_exchange_n(stat, &old, value, true,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield" ::: "memory");
#else
	__asm__ volatile("" ::: "memory");
#endif
}

void odebug_spin_lock_slow(pthread_spinlock_t *lock)
{
	unsigned int spins = 0;

	while (pthread_spin_trylock(lock)) {
		if (++spins < 64)
			cpu_relax();
		else
			sched_yield();
	}
}

bool odebug_table_init(void)
{
	size_t i;
	long p;

	/*
	 * Mapped only when enabled: a disabled process pays nothing.  The
	 * chain heads are reserved, not committed: a bucket's line becomes
	 * resident when its first object is tracked.
	 */
	buckets = odebug_map(HASH_SIZE * sizeof(*buckets));
	p = syscall(SYS_mmap, NULL, HASH_SIZE * (sizeof(*heads) + sizeof(*filter)),
		    PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		    -1, 0);
	if (!buckets || p == -1)
		return false;
	heads = (uint32_t (*)[ODEBUG_CHAINS])p;
	filter = (uint8_t (*)[FILTER_SIZE])(p + HASH_SIZE * sizeof(*heads));
	/* Random access over 8 MiB: huge pages spare a TLB miss per lookup. */
	madvise((void *)p, HASH_SIZE * (sizeof(*heads) + sizeof(*filter)), MADV_HUGEPAGE);
	for (i = 0; i < HASH_SIZE; i++)
		pthread_spin_init(&buckets[i].lock, PTHREAD_PROCESS_PRIVATE);
	return true;
}

size_t odebug_table_size(void)
{
	return HASH_SIZE;
}

struct odebug_bucket *odebug_bucket_at(size_t index)
{
	return &buckets[index];
}

static uint64_t chunk_hash(uintptr_t addr)
{
	return (uint64_t)(addr >> ODEBUG_CHUNK_SHIFT) * 0x61C8864680B583EBull;
}

/* The kernel's hash_long() of the chunk number: the golden ratio, top bits. */
struct odebug_bucket *odebug_bucket_of(uintptr_t addr)
{
	return &buckets[chunk_hash(addr) >> (64 - HASH_BITS)];
}

/* The chunk's counter in its bucket's filter: hash bits below the index. */
static uint8_t *counter_of(struct odebug_bucket *b, uintptr_t chunk)
{
	uint64_t h = chunk_hash(chunk) >> (64 - HASH_BITS - FILTER_BITS);

	return &filter[b - buckets][h & (FILTER_SIZE - 1)];
}

/* Could the bucket hold a tracker of this chunk?  No lock, no false "no". */
bool odebug_bucket_may_hold(struct odebug_bucket *b, uintptr_t chunk)
{
	return __atomic_load_n(counter_of(b, chunk), __ATOMIC_RELAXED) != 0;
}

static void count_in(struct odebug_bucket *b, uintptr_t addr)
{
	uint8_t *c = counter_of(b, addr);

	if (*c != UINT8_MAX)
		__atomic_store_n(c, (uint8_t)(*c + 1), __ATOMIC_RELAXED);
}

/* A saturated counter stays: the chunk is then always walked. */
static void count_out(struct odebug_bucket *b, uintptr_t addr)
{
	uint8_t *c = counter_of(b, addr);

	if (*c != UINT8_MAX && *c)
		__atomic_store_n(c, (uint8_t)(*c - 1), __ATOMIC_RELAXED);
}

/*
 * The chain within the bucket: the 64-byte slot of @addr in its chunk,
 * rotated by bits of the chunk's hash that the bucket index does not use,
 * so the same offset in the different chunks of one bucket spreads out.
 */
unsigned int odebug_chain_of(uintptr_t addr)
{
	unsigned int rot = (unsigned int)(chunk_hash(addr) >> (64 - HASH_BITS - 6));

	return ((unsigned int)(addr >> 6) + rot) & (ODEBUG_CHAINS - 1);
}
#define chain_of odebug_chain_of

/*
 * Every lock of ours is held with the re-entry guard set: a signal handler
 * that calls free() or the API while this thread holds it passes through
 * instead of spinning forever on a lock its own thread holds.
 */
void odebug_bucket_lock(struct odebug_bucket *b)
{
	odebug_guard_enter();
	odebug_spin_lock(&b->lock);
}

void odebug_bucket_unlock(struct odebug_bucket *b)
{
	pthread_spin_unlock(&b->lock);
	odebug_guard_exit();
}

/* Find the tracker of @addr; the bucket lock is held. */
struct odebug_tracker *odebug_lookup(struct odebug_bucket *b, uintptr_t addr)
{
	struct odebug_tracker *t;
	unsigned long cnt = 0;

	if (!b->count)
		return NULL;
	for (t = odebug_tracker_at(heads[b - buckets][chain_of(addr)]); t;
	     t = odebug_tracker_at(t->hnext)) {
		if (t->addr == addr)
			return t;
		cnt++;
	}
	if (cnt > odebug_load(&odebug_max_chain))
		odebug_stat_max(&odebug_max_chain, cnt);
	return NULL;
}

void odebug_insert(struct odebug_bucket *b, struct odebug_tracker *t)
{
	uint32_t *head = &heads[b - buckets][chain_of(t->addr)];

	t->hnext = *head;
	*head = odebug_tracker_index(t);
	__atomic_store_n(&b->count, b->count + 1, __ATOMIC_RELAXED);
	count_in(b, t->addr);
}

void odebug_remove(struct odebug_bucket *b, struct odebug_tracker *t)
{
	uint32_t *pp = &heads[b - buckets][chain_of(t->addr)];
	uint32_t index = odebug_tracker_index(t);

	for (; *pp; pp = &odebug_tracker_at(*pp)->hnext) {
		if (*pp == index) {
			*pp = t->hnext;
			odebug_bucket_forget(b, t);
			return;
		}
	}
}

/* @t has been unlinked from its chain: account for it. */
void odebug_bucket_forget(struct odebug_bucket *b, const struct odebug_tracker *t)
{
	__atomic_store_n(&b->count, b->count - 1, __ATOMIC_RELAXED);
	count_out(b, t->addr);
}

/* Out of memory: hand every tracker back to the pool. */
void odebug_table_drain(void)
{
	size_t i;
	int c;

	for (i = 0; i < HASH_SIZE; i++) {
		struct odebug_bucket *b = &buckets[i];
		uint32_t taken[ODEBUG_CHAINS];

		/* Always locked: an unlocked look at count may be stale. */
		odebug_bucket_lock(b);
		memcpy(taken, heads[i], sizeof(taken));
		memset(heads[i], 0, sizeof(taken));
		memset(filter[i], 0, sizeof(filter[i]));
		b->count = 0;
		odebug_bucket_unlock(b);
		for (c = 0; c < ODEBUG_CHAINS; c++) {
			struct odebug_tracker *t = odebug_tracker_at(taken[c]);

			while (t) {
				struct odebug_tracker *next = odebug_tracker_at(t->hnext);

				odebug_pool_free(t);
				t = next;
			}
		}
	}
}

/* fork(): the child must find no lock held by a thread it does not have. */
void odebug_table_lock_all(void)
{
	size_t i;

	for (i = 0; i < HASH_SIZE; i++)
		odebug_bucket_lock(&buckets[i]);
	odebug_pool_lock();
}

void odebug_table_unlock_all(void)
{
	size_t i;

	odebug_pool_unlock();
	for (i = 0; i < HASH_SIZE; i++)
		odebug_bucket_unlock(&buckets[i]);
}
