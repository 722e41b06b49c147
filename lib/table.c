/* SPDX-License-Identifier: MIT */
/*
 * table.c - the tracker table: 16384 buckets hashed by 4 KiB chunk, each
 * with its own spinlock.  All trackers of one chunk share a bucket, so the
 * free check visits exactly one bucket per chunk released.
 */
#include <sched.h>

#include "internal.h"

#define HASH_BITS	14
#define HASH_SIZE	((size_t)1 << HASH_BITS)

static struct odebug_bucket *buckets;
unsigned long odebug_max_chain;

void odebug_stat_max(unsigned long *stat, unsigned long value)
{
	unsigned long old = odebug_load(stat);

	while (value > old &&
	       !__atomic_compare_exchange_n(stat, &old, value, true,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

bool odebug_table_init(void)
{
	size_t i;

	/* Mapped only when enabled: a disabled process pays nothing. */
	buckets = odebug_map(HASH_SIZE * sizeof(*buckets));
	if (!buckets)
		return false;
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

/* The kernel's hash_long(): the golden ratio multiplier, top bits. */
struct odebug_bucket *odebug_bucket_of(uintptr_t addr)
{
	uint64_t chunk = addr >> ODEBUG_CHUNK_SHIFT;

	return &buckets[(chunk * 0x61C8864680B583EBull) >> (64 - HASH_BITS)];
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

void odebug_bucket_lock(struct odebug_bucket *b)
{
	odebug_spin_lock(&b->lock);
}

void odebug_bucket_unlock(struct odebug_bucket *b)
{
	pthread_spin_unlock(&b->lock);
}

/* Find the tracker of @addr; the bucket lock is held. */
struct odebug_tracker *odebug_lookup(struct odebug_bucket *b, uintptr_t addr)
{
	struct odebug_tracker *t;
	unsigned long cnt = 0;

	for (t = b->head; t; t = t->next) {
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
	t->next = b->head;
	__atomic_store_n(&b->head, t, __ATOMIC_RELEASE);
}

void odebug_remove(struct odebug_bucket *b, struct odebug_tracker *t)
{
	struct odebug_tracker **pp;

	for (pp = &b->head; *pp; pp = &(*pp)->next) {
		if (*pp == t) {
			__atomic_store_n(pp, t->next, __ATOMIC_RELEASE);
			return;
		}
	}
}

/* Out of memory: hand every tracker back to the pool. */
void odebug_table_drain(void)
{
	size_t i;

	for (i = 0; i < HASH_SIZE; i++) {
		struct odebug_bucket *b = &buckets[i];
		struct odebug_tracker *t;

		odebug_bucket_lock(b);
		t = b->head;
		__atomic_store_n(&b->head, NULL, __ATOMIC_RELEASE);
		odebug_bucket_unlock(b);
		while (t) {
			struct odebug_tracker *next = t->next;

			odebug_pool_free(t);
			t = next;
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
