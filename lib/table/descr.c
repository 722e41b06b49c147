/* SPDX-License-Identifier: MIT */
/*
 * descr.c - the descriptor registry, and descriptors whose module may be
 * gone.
 *
 * A tracker holds no pointer to its descriptor, only the 12-bit slot of
 * the descriptor here (the tracker's word has no room for more: tracker.h),
 * so every descriptor used to make a tracker is registered, once; a slot,
 * once taken, names the same descriptor address for the life of the
 * process.  Past 4096 descriptors, objects of new ones are not tracked
 * (one line says so).  The table is 256 KiB of zero pages; a key's first
 * 64 probes stay in its first page, so that a program with a few
 * descriptors makes one page of it resident.
 *
 * The registry also answers for descriptors whose module is gone.  When the module that
 * defined the descriptor is dlclose'd, that address is unmapped or, later,
 * holds someone else's bytes; a report that reads descr->name or calls
 * debug_hint, or a free check that calls fixup_free, then crashes or prints
 * garbage.  So each descriptor is registered when its first tracker is
 * made (a per-thread one-entry cache keeps that to a compare on the hot
 * path; every dlclose bumps an epoch that empties the caches, since a
 * module loaded later may put another descriptor at the same address):
 * its name pointer and up to 47 bytes of the name are copied here.
 * Before a descriptor taken from a tracker is read or called, its struct
 * and name are read back with process_vm_readv(), which fails instead of
 * faulting on unmapped memory, and compared with the copy.  A descriptor
 * that cannot be read or no longer matches is gone: the report names the
 * type from the copy and nothing of it is called.  No loader call, no
 * lock but a leaf spinlock on registration, nothing on a free() that finds
 * no active object.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "table.h"
#include "lock.h"

#define SLOTS		ODEBUG_DESCR_SLOTS	/* distinct descriptors kept */
#define NAME_COPY	48
#define PROBES		(SLOTS + 4096 / sizeof(struct odebug_descr_entry))

/* An entry (table.h): the key, the name pointer, the name's first 47 bytes. */
_Static_assert(sizeof(((struct odebug_descr_entry *)0)->copy) == NAME_COPY, "one layout");

ODEBUG_LARGE struct odebug_descr_entry odebug_descr_entries[SLOTS] __attribute__((aligned(4096)));
static odebug_spinlock_t insert_lock;
static bool full_said;
ODEBUG_TLS const struct debug_obj_descr *odebug_descr_last;
ODEBUG_TLS int odebug_descr_last_slot;
ODEBUG_TLS unsigned int odebug_descr_last_epoch;
unsigned int odebug_descr_epoch;	/* bumped by every dlclose (odebug_descr_forget) */

static size_t hash_of(const struct debug_obj_descr *d)
{
	return (size_t)(((uintptr_t)d >> 3) * 0x9E3779B97F4A7C15ull >> 52) & (SLOTS - 1);
}

/* The @i-th slot probed for @d: the first page's 64 first (types.h). */
static size_t slot_of(size_t h, size_t i)
{
	return odebug_probe(h, i, 4096 / sizeof(struct odebug_descr_entry), SLOTS);
}

static struct odebug_descr_entry *find(const struct debug_obj_descr *d)
{
	size_t i, s, h = hash_of(d);

	for (i = 0; i < PROBES; i++) {
		const struct debug_obj_descr *k;

		s = slot_of(h, i);
		k = __atomic_load_n(&odebug_descr_entries[s].descr, __ATOMIC_ACQUIRE);

		if (k == d)
			return &odebug_descr_entries[s];
		if (!k)
			return NULL;
	}
	return NULL;
}

/* @d's slot, or -1 when no tracker of it was ever made (stats-types.c). */
int odebug_descr_slot(const struct debug_obj_descr *d)
{
	struct odebug_descr_entry *e = find(d);

	return e ? (int)(e - odebug_descr_entries) : -1;
}

/*
 * Register @d (live: the caller just passed it in), called where a tracker
 * is made.  Returns its slot, or -1 when the registry is full.
 */
int odebug_descr_note_slow(const struct debug_obj_descr *d)
{
	unsigned int epoch = __atomic_load_n(&odebug_descr_epoch, __ATOMIC_RELAXED);
	struct odebug_descr_entry *e;
	size_t i, s, h = hash_of(d);

	e = find(d);
	/*
	 * The name tells another module's descriptor at a reused address; ours
	 * never move, and not reading their names keeps our read-only data
	 * untouched once given back (trim.c).
	 */
	if (e && (odebug_self_holds(d) ||
		  (e->name == d->name && !strncmp(e->copy, d->name, NAME_COPY - 1))))
		goto out;
	odebug_guard_enter();
	odebug_spin_lock(&insert_lock);
	e = find(d);
	for (i = 0; !e && i < PROBES; i++)
		if (!odebug_descr_entries[s = slot_of(h, i)].descr)
			e = &odebug_descr_entries[s];
	if (e) {
		/* A new descriptor, or another module's at the same address. */
		e->name = d->name;
		strncpy(e->copy, d->name, NAME_COPY - 1);
		e->copy[NAME_COPY - 1] = '\0';
		__atomic_store_n(&e->descr, d, __ATOMIC_RELEASE);
	}
	odebug_spin_unlock(&insert_lock);
	odebug_guard_exit();
	if (!e && !__atomic_exchange_n(&full_said, true, __ATOMIC_RELAXED))
		odebug_message("over 4096 descriptors: objects of those beyond are not tracked",
			       (char *)NULL);
out:
	odebug_descr_last = d;
	odebug_descr_last_epoch = epoch;
	odebug_descr_last_slot = e ? (int)(e - odebug_descr_entries) : -1;
	return odebug_descr_last_slot;
}

/**
 * odebug_descr_resolve - may this snapshot's descriptor be read and called?
 *
 * Sets @o->name to the name to print, and @o->dead when the descriptor's
 * module is gone (nothing of it may be called).  A descriptor never
 * registered (a caller's, for an untracked object) is only checked for
 * being mapped.
 */
void odebug_descr_resolve(struct odebug_snapshot *o)
{
	static const char unknown[] = "(unloaded module)";
	struct debug_obj_descr now;
	const struct odebug_descr_entry *e = find(o->descr);
	char name[NAME_COPY];
	size_t got = 0;

	if (!(got = odebug_read_mem(&now, o->descr, sizeof(now))) != 0 || got != sizeof(now)) {
		o->name = e ? e->copy : unknown;
		o->dead = true;
		return;
	}
	if (!e) {
		o->name = now.name && (got = odebug_read_mem(name, now.name, 1)) != 0 ? now.name : unknown;
		o->dead |= o->name == unknown;
		return;
	}
	/* The name may end just before an unmapped page: compare what was read. */
	if (now.name != e->name || !(got = odebug_read_mem(name, now.name, NAME_COPY - 1)) != 0 ||
	    strncmp(name, e->copy, got < strlen(e->copy) + 1 ? got : strlen(e->copy) + 1)) {
		o->name = e->copy;
		o->dead = true;
		return;
	}
	o->name = now.name;
}

/* print_stats=1's counts per descriptor (tracker.h's odebug_types_note()). */
ODEBUG_LARGE struct odebug_type_count odebug_type_counts[ODEBUG_DESCR_SLOTS];

/* A tracker of descriptor @slot entered (+1) or left (-1) the table. */
void odebug_types_count(unsigned int slot, int delta)
{
	struct odebug_type_count *c = &odebug_type_counts[slot & (ODEBUG_DESCR_SLOTS - 1)];
	long now = __atomic_add_fetch(&c->now, delta, __ATOMIC_RELAXED);
	long most = __atomic_load_n(&c->most, __ATOMIC_RELAXED);

	while (now > most &&
	       !__atomic_compare_exchange_n(&c->most, &most, now, true, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED))
		;
}

/* A report of an object of @d (report.c), with print_stats=1. */
void odebug_types_reported(const struct debug_obj_descr *d)
{
	int slot = odebug_descr_slot(d);

	if (slot >= 0)
		__atomic_add_fetch(&odebug_type_counts[slot].reports, 1, __ATOMIC_RELAXED);
}

/* The selftest's objects are not the program's: its rows go. */
void odebug_types_forget(const struct debug_obj_descr *d)
{
	int slot = odebug_descr_slot(d);

	if (slot >= 0)
		memset(&odebug_type_counts[slot], 0, sizeof(odebug_type_counts[slot]));
}
