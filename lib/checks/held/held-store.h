/* SPDX-License-Identifier: MIT */
/*
 * held-store.h - the one store of hold records, for every held family:
 * who holds which address.  lib/checks/held/held-store.c owns it; the families
 * (held.c's epoll and timers, held-io.c's requests, held-ext.c's
 * streams, stacks, threads and keys) find, add and drop records through
 * it, under its one lock.
 *
 * A record is chained twice, by key (the family's holder: a registered
 * descriptor, a timer id, a request, a stream) and by held address, in
 * one mapping made at the first hold (a process that holds nothing maps
 * nothing), 65536 records at most.  An epoll registration is chained a
 * third time, by its set (key2), in a list linked both ways: closing a
 * set visits that set's registrations (and those of sets whose number
 * hashes alike), never every record, and a registration leaves it in a
 * few stores however many the set has.  Under the lock nothing else is
 * called, and the re-entry guard is set while it is held: a signal
 * handler's close() or timer_settime() on this thread then goes straight
 * to glibc instead of spinning on a lock its own thread holds.
 */
#ifndef ODEBUG_HELD_STORE_H
#define ODEBUG_HELD_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "held.h"
#include "held-io.h"
#include "core.h"
#include "lock.h"

#define ODEBUG_HOLDS_MAX	65536u	/* records; beyond, nothing more is held */
#define ODEBUG_HOLD_HASH_BITS	14

/* The store's families: held.h's and held-ext.h's numbers, and one for held-io.h's two. */
#define ODEBUG_HOLD_IO	3

#define ODEBUG_HOLD_ARMED	1u	/* epoll, timers: holds the value now */
#define ODEBUG_HOLD_ONESHOT	2u	/* epoll: EPOLLONESHOT, its next event ends the hold */

struct odebug_hold {
	uintptr_t addr;		/* the held address (AIO, io_uring: its word); 0: a free record */
	uint64_t key;		/* the holder, hashed: a descriptor, a timer id, a stream... */
	uint64_t key2;		/* and what tells two holders of one key apart (an epoll set,
				 * a timer's glibc version, a thread) */
	uintptr_t fn;		/* a function (a timer's, a thread's, a key's destructor) */
	size_t len;		/* held-ext.h's families: the held bytes */
	uint8_t family, flags;	/* flags: ODEBUG_HOLD_* or the family's own */
	uint16_t gen;		/* fork generation: a child's inherited records are not its own */
	uint32_t knext, anext;	/* chains by key and by address: an index, 0 ends */
	uint32_t snext, sprev;	/* epoll: the list by set (key2), both ways: an index, 0 ends */
} __attribute__((aligned(64)));	/* one cache line */

/* What an AIO or io_uring record has besides (kept apart: the others never touch it). */
struct odebug_hold_io {
	uintptr_t at;		/* the held address as given */
	uint8_t role;		/* enum odebug_held_io_role */
	struct odebug_held_io_req r;
};

struct odebug_holds {
	uint32_t khead[1u << ODEBUG_HOLD_HASH_BITS], ahead[1u << ODEBUG_HOLD_HASH_BITS];
	uint32_t shead[1u << ODEBUG_HOLD_HASH_BITS];	/* epoll registrations by set */
	uint32_t free_list, used;
	struct odebug_hold h[ODEBUG_HOLDS_MAX + 1];	/* by index: h[0] is never used */
	struct odebug_hold_io io[ODEBUG_HOLDS_MAX + 1];	/* touched only by those families */
};

extern ODEBUG_HIDDEN struct odebug_holds *odebug_holds;
extern ODEBUG_HIDDEN odebug_spinlock_t odebug_holds_lock;
extern ODEBUG_HIDDEN uint16_t odebug_hold_gen;		/* this process's: one more in each fork() child */
extern ODEBUG_HIDDEN unsigned long odebug_hold_version;	/* one more at each change of a record (locked) */
/* Records per family, held-ext.h's only (odebug_hold_count_add()). */
extern ODEBUG_HIDDEN unsigned long odebug_hold_count[16];

bool odebug_holds_map(void);
void odebug_holds_full(void);

/* The mapping, made at the first hold; false when it cannot be made. */
static inline bool odebug_holds_mapped(void)
{
	return likely(odebug_load(&odebug_holds)) || odebug_holds_map();
}

static inline void odebug_hold_lock(void)
{
	odebug_guard_enter();
	odebug_spin_lock(&odebug_holds_lock);
}

static inline void odebug_hold_unlock(void)
{
	odebug_spin_unlock(&odebug_holds_lock);
	odebug_guard_exit();
}

static inline uint32_t odebug_hold_hash(uint64_t v)
{
	return (uint32_t)((v * 0x9e3779b97f4a7c15ull) >> (64 - ODEBUG_HOLD_HASH_BITS));
}

static inline uint32_t *odebug_hold_khead(int family, uint64_t key)
{
	return &odebug_holds->khead[odebug_hold_hash(key * 16 + (uint64_t)family)];
}

static inline uint32_t *odebug_hold_ahead(uintptr_t addr)
{
	return &odebug_holds->ahead[odebug_hold_hash(addr)];
}

/* The list of epoll set @set's registrations (and of sets that hash alike). */
static inline uint32_t *odebug_hold_shead(uint64_t set)
{
	return &odebug_holds->shead[odebug_hold_hash(set)];
}

/* Is @family's key2 a set whose close ends all its records (epoll)? */
static inline bool odebug_hold_by_set(int family)
{
	return family == ODEBUG_HELD_EPOLL;
}

/* The record of index @i (a chain link), or NULL at the chain's end. */
static inline struct odebug_hold *odebug_hold_at(uint32_t i)
{
	return i ? &odebug_holds->h[i] : NULL;
}

static inline struct odebug_hold_io *odebug_hold_io_of(const struct odebug_hold *h)
{
	return &odebug_holds->io[h - odebug_holds->h];
}

/*
 * A record changed: a family's settle (held.h) that decided before sees
 * it and asks again.  Locked, so a plain increment: the tracker's step
 * that follows the unlock orders it (held.c's settle_from()).
 */
static inline void odebug_hold_changed(void)
{
	odebug_store(&odebug_hold_version, odebug_hold_version + 1);
}

/* Records of @family holding @addr with all of @flags.  Locked. */
static inline unsigned int odebug_hold_holding(int family, uintptr_t addr, unsigned int flags)
{
	const struct odebug_hold *h;
	unsigned int n = 0;

	for (h = odebug_hold_at(*odebug_hold_ahead(addr)); h; h = odebug_hold_at(h->anext))
		n += h->addr == addr && h->family == family && (h->flags & flags) == flags;
	return n;
}

/*
 * Locked, so plain stores: the interposers only load the counts.  Only
 * held-ext.h's families are counted (their interposers' one load); the
 * others' calls go to the store anyway.
 */
static inline void odebug_hold_count_add(int family, long d)
{
	unsigned long *c = &odebug_hold_count[family & 15];

	if (family > ODEBUG_HOLD_IO)
		odebug_store(c, *c + (unsigned long)d);
}

/*
 * The records' operations, inline: epoll_ctl and timer_settime take them
 * at every call.  All locked.
 */

/* The record of (@family, @key, @key2), or NULL. */
static inline struct odebug_hold *odebug_hold_find(int family, uint64_t key, uint64_t key2)
{
	struct odebug_hold *h;

	for (h = odebug_hold_at(*odebug_hold_khead(family, key)); h; h = odebug_hold_at(h->knext))
		if (h->key == key && h->family == family && h->key2 == key2)
			return h;
	return NULL;
}

/*
 * A new record of (@family, @key, @key2) holding @addr, chained, flags
 * clear; NULL when all ODEBUG_HOLDS_MAX are in use.
 */
static inline struct odebug_hold *odebug_hold_add(int family, uint64_t key, uint64_t key2,
						  uintptr_t addr)
{
	struct odebug_holds *s = odebug_holds;
	uint32_t idx, *kh, *ah;
	struct odebug_hold *h;

	if (s->free_list) {
		idx = s->free_list;
		s->free_list = s->h[idx].knext;
	} else if (s->used < ODEBUG_HOLDS_MAX) {
		idx = ++s->used;
	} else {
		odebug_holds_full();
		return NULL;
	}
	odebug_hold_changed();
	odebug_hold_count_add(family, 1);
	kh = odebug_hold_khead(family, key);
	ah = odebug_hold_ahead(addr);
	h = &s->h[idx];
	h->addr = addr;
	h->key = key;
	h->key2 = key2;
	h->fn = 0;
	h->len = 0;
	h->family = (uint8_t)family;
	h->flags = 0;
	h->gen = odebug_hold_gen;
	h->knext = *kh;
	h->anext = *ah;
	*kh = idx;
	*ah = idx;
	h->snext = h->sprev = 0;
	if (odebug_hold_by_set(family)) {
		uint32_t *sh = odebug_hold_shead(key2);

		h->snext = *sh;
		if (*sh)
			s->h[*sh].sprev = idx;
		*sh = idx;
	}
	return h;
}

/* Unchain and free a record; returns its address. */
static inline uintptr_t odebug_hold_drop(struct odebug_hold *h)
{
	struct odebug_holds *s = odebug_holds;
	uint32_t idx = (uint32_t)(h - s->h), *p;
	uintptr_t addr = h->addr;

	odebug_hold_changed();
	odebug_hold_count_add(h->family, -1);
	for (p = odebug_hold_khead(h->family, h->key); *p && *p != idx; p = &s->h[*p].knext)
		;
	if (*p)
		*p = h->knext;
	for (p = odebug_hold_ahead(addr); *p && *p != idx; p = &s->h[*p].anext)
		;
	if (*p)
		*p = h->anext;
	if (odebug_hold_by_set(h->family)) {
		if (h->sprev)
			s->h[h->sprev].snext = h->snext;
		else
			*odebug_hold_shead(h->key2) = h->snext;
		if (h->snext)
			s->h[h->snext].sprev = h->sprev;
	}
	h->addr = 0;
	h->knext = s->free_list;
	s->free_list = idx;
	return addr;
}

#endif /* ODEBUG_HELD_STORE_H */
