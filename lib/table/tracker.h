/* SPDX-License-Identifier: MIT */
/*
 * tracker.h - the tracker and its lockless protocol, owned by the table
 * (table.c, bucket.c).  A tracker's 64-bit word holds everything a
 * lockless annotation call compares and changes: the object's address,
 * its descriptor's registry slot, a busy bit and the state.  This header
 * is the only place that lays the word out, compares-and-swaps it or
 * stores it; every other file reads a state with odebug_tracker_read()
 * (locked) or odebug_peek() (lockless) and changes it only through the
 * odebug_tracker_*() transitions below (tests/as-built/check-tracker-cas.sh checks).
 *
 * The lockless calls (odebug_peek() and one compare-and-swap: activate,
 * deactivate, free, a mutex's lock and unlock) rest on these invariants:
 * - at most one tracker whose word holds a given address and is not
 *   RETIRED exists at any time, FREED or not: it is made under the
 *   address's bucket lock after a lookup found none (odebug_lookup_any():
 *   a FREED one is revived instead), and marked RETIRED under that lock
 *   before it is unlinked; a tracker in the pool is RETIRED or fresh
 *   (address 0, which no call passes);
 * - FREED (debug_object_free()) is "linked but untracked": odebug_lookup()
 *   and odebug_bucket_each() pass over it, the other lockless calls leave
 *   it to the locked path (it is none of INIT, INACTIVE, ACTIVE), the next
 *   init of the address revives it in place (INIT, by a release store),
 *   and the free check unlinks it silently, its free already counted (as
 *   does the thread's next free, debugobjects.c: one FREED tracker per
 *   thread at most).  A tracker becomes FREED by a CAS, without the
 *   bucket lock (the lockless free: from INIT, INACTIVE or DESTROYED with
 *   busy clear) or under it (the locked free).  So a locked reader may
 *   find FREED in a word it reads after its lookup, or after a CAS of its
 *   own failed: odebug_tracker_read() returns such a word as
 *   ODEBUG_STATE_NOTAVAILABLE (untracked), so no caller sees FREED and no
 *   FREED state reaches a report.  Only the locked path writes a FREED
 *   word, so under the lock it stays FREED;
 * - every change of a linked tracker's word that a lockless call could
 *   race is a compare-and-swap against the word the change was decided
 *   on, under the bucket lock or not; the locked path reads the word again
 *   and decides again when its CAS fails (every transition returns false
 *   then), so no lockless change is lost and the locked path stays
 *   authoritative.  A FREED word is changed by a store (revive, reclaim),
 *   under the lock: no lockless call writes one;
 * - the lockless calls change only INIT, INACTIVE and ACTIVE words (and
 *   the free, DESTROYED ones, to FREED), leave everything else (NONE,
 *   FREED, RETIRED, a misuse, busy set where it matters, a failed CAS,
 *   origins=1) to the locked path, and never touch astate (busy mirrors
 *   astate != 0, both changed under the lock);
 * - a tracked object stops being tracked only by a CAS (to FREED by
 *   debug_object_free, locked or not; under the bucket lock, to RETIRED by
 *   the free check, or, whatever its state, an atomic OR to RETIRED), so a
 *   free and a lockless activate of the object are ordered: either the
 *   activate came first and the free sees ACTIVE and reports, or the free
 *   came first and the activate's CAS fails and the locked path finds the
 *   object untracked;
 * - while the process has one thread the CAS is a cmpxchg without the
 *   lock prefix: only a signal handler can interleave, and only between
 *   instructions.  One thread is glibc's __libc_single_threaded (cleared
 *   by pthread_create()) and odebug_one_thread, which preload/clone.c
 *   sets at the start only where it sees every clone() and
 *   syscall(SYS_clone) and clears before one with CLONE_VM (and before a
 *   dlmopen() into another namespace, whose libc's threads neither flag
 *   counts): a raw-clone thread is not counted in glibc's flag, and the unlocked cmpxchg loses
 *   updates between two cores (tests/unit/tracker-clone.c);
 * - links are written atomically and a new tracker's word before the
 *   release store that links it; a walk without the lock checks each index
 *   against the pool's reservation (never unmapped while on) and stops
 *   after ODEBUG_PEEK_STEPS, since a tracker may be reused under it.
 * tests/torture/race.c hammers both paths on the same objects.
 *
 * Included through table.h, after base.h's mode and re-entry guard.
 */
#ifndef ODEBUG_TRACKER_H
#define ODEBUG_TRACKER_H

#if defined(__x86_64__) && defined(__has_include)
#if __has_include(<sys/single_threaded.h>)
#include <sys/single_threaded.h>
#define ODEBUG_LOCAL_CAS 1
#endif
#endif
#ifndef ODEBUG_LOCAL_CAS
#define ODEBUG_LOCAL_CAS 0
#endif

/* No thread but this one can exist (lib/core/thread.c; set by preload/clone.c). */
extern ODEBUG_HIDDEN bool odebug_one_thread;

/*
 * One tracker per tracked address: 16 bytes on LP64 (asserted below).
 * Its word holds all a lockless annotation call compares and changes, so
 * one compare-and-swap both checks the object's identity and makes the
 * transition (table.c's header gives the rules):
 *
 *   bit 63 ........ 16 | 15 ........ 4 |  3   | 2 .. 0
 *       address (48)   | descr slot(12)| busy | state
 *
 * The slot names the descriptor in descr.c's registry; busy is set exactly
 * while astate is not 0; state 7 (RETIRED) marks a tracker unlinked or on
 * its way out, its address kept so the chain it left can still be found.
 */
struct odebug_tracker {
	uint64_t word;				/* address | descr slot | busy | state */
	uint32_t hnext;				/* chain or free list (pool index) */
	unsigned int astate;			/* changed only under the bucket lock */
};

#define ODEBUG_STATE_BITS	7u
#define ODEBUG_WORD_BUSY	8u
#define ODEBUG_WORD_RETIRED	7u		/* a state no tracker in a chain has */
#define ODEBUG_WORD_FREED	6u		/* linked, untracked: debug_object_free()d */
#define ODEBUG_DESCR_SHIFT	4
#define ODEBUG_DESCR_SLOTS	4096u		/* 12 bits */
#define ODEBUG_ADDR_SHIFT	16
#define ODEBUG_ADDR_LIMIT	((uintptr_t)1 << (64 - ODEBUG_ADDR_SHIFT))
_Static_assert(ODEBUG_STATE_MAX <= ODEBUG_WORD_FREED, "states fit below FREED and RETIRED");
_Static_assert(sizeof(void *) != 8 || sizeof(struct odebug_tracker) == 16, "a tracker is 16 bytes");

static inline uint64_t odebug_word(uintptr_t addr, unsigned int slot, enum debug_obj_state state)
{
	return (uint64_t)addr << ODEBUG_ADDR_SHIFT | (uint64_t)slot << ODEBUG_DESCR_SHIFT | state;
}

static inline uintptr_t odebug_word_addr(uint64_t w) { return (uintptr_t)(w >> ODEBUG_ADDR_SHIFT); }
static inline unsigned int odebug_word_slot(uint64_t w)
{
	return (unsigned int)(w >> ODEBUG_DESCR_SHIFT) & (ODEBUG_DESCR_SLOTS - 1);
}
static inline unsigned int odebug_word_state(uint64_t w)
{
	return (unsigned int)(w & ODEBUG_STATE_BITS);
}
/* @w with state @state, and busy set exactly when @busy. */
static inline uint64_t odebug_word_with_state_busy(uint64_t w, unsigned int state, bool busy)
{
	return (w & ~(uint64_t)(ODEBUG_STATE_BITS | ODEBUG_WORD_BUSY)) | state |
	       (busy ? ODEBUG_WORD_BUSY : 0);
}

/* Set while astate is not 0: a lockless call that needs astate 0 compares it. */
static inline bool odebug_word_busy(uint64_t w)
{
	return (w & ODEBUG_WORD_BUSY) != 0;
}

static inline uint64_t odebug_tracker_word(const struct odebug_tracker *t)
{
	return __atomic_load_n(&t->word, __ATOMIC_ACQUIRE);
}

/*
 * Every change of a linked tracker's word is a compare-and-swap, under the
 * bucket lock or not: false when the word is no longer @old (a lockless
 * call changed it), and the caller reads it again and decides again.
 */
static inline bool odebug_tracker_cas(struct odebug_tracker *t, uint64_t old, uint64_t new)
{
#if ODEBUG_LOCAL_CAS
	/*
	 * One thread: the word changes under us only in a signal handler,
	 * between instructions, so a cmpxchg without the lock prefix is
	 * atomic enough, and it neither locks the line nor drains the store
	 * buffer.  Both flags turn false before a second thread exists.
	 */
	if (odebug_one_thread && __libc_single_threaded) {
		bool ok;

		__asm__ volatile("cmpxchgq %3, %1"
				 : "+a"(old), "+m"(t->word), "=@ccz"(ok)
				 : "r"(new)
				 : "memory");
		return ok;
	}
#endif
	return __atomic_compare_exchange_n(&t->word, &old, new, false,
					   __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

/* descr.c: the registry the word's slot indexes (64 bytes an entry). */
struct odebug_descr_entry {
	const struct debug_obj_descr *descr;	/* the key; NULL: empty */
	const char *name;
	char copy[48];
};
extern ODEBUG_HIDDEN struct odebug_descr_entry odebug_descr_entries[];

/* The descriptor a tracker's slot names (registered before the tracker was made). */
static inline const struct debug_obj_descr *odebug_descr_at(unsigned int slot)
{
	return __atomic_load_n(&odebug_descr_entries[slot & (ODEBUG_DESCR_SLOTS - 1)].descr,
			       __ATOMIC_RELAXED);
}

static inline uintptr_t odebug_tracker_addr(const struct odebug_tracker *t)
{
	return odebug_word_addr(odebug_tracker_word(t));
}

static inline const struct debug_obj_descr *odebug_tracker_descr(const struct odebug_tracker *t)
{
	return odebug_descr_at(odebug_word_slot(odebug_tracker_word(t)));
}

static inline enum debug_obj_state odebug_tracker_state(const struct odebug_tracker *t)
{
	return (enum debug_obj_state)odebug_word_state(odebug_tracker_word(t));
}

static inline unsigned int odebug_tracker_next(const struct odebug_tracker *t)
{
	return __atomic_load_n(&t->hnext, __ATOMIC_RELAXED);
}

/* Chain links are read without the lock too: written atomically. */
static inline void odebug_tracker_set_next(struct odebug_tracker *t, uint32_t next)
{
	__atomic_store_n(&t->hnext, next, __ATOMIC_RELAXED);
}


/* The descriptor a word names. */
static inline const struct debug_obj_descr *odebug_word_descr(uint64_t w)
{
	return odebug_descr_at(odebug_word_slot(w));
}

/*
 * The state of @t, the bucket lock held, its word in *@w for a transition:
 * ODEBUG_STATE_NOTAVAILABLE (untracked) when @t is NULL or a lockless free
 * made it FREED since the lookup.  Every locked reader reads through this,
 * so none sees FREED.
 */
static inline enum debug_obj_state odebug_tracker_read(const struct odebug_tracker *t,
							uint64_t *w)
{
	unsigned int state;

	if (!t)
		return ODEBUG_STATE_NOTAVAILABLE;
	*w = odebug_tracker_word(t);
	state = odebug_word_state(*w);
	return state == ODEBUG_WORD_FREED ? ODEBUG_STATE_NOTAVAILABLE :
	       (enum debug_obj_state)state;
}

/*
 * The transitions: the only writes of a tracker's word outside the table.
 * Each is one compare-and-swap against @w, the word the change was decided
 * on: false when a lockless call changed it since, and the caller reads it
 * again and decides again.
 */

/* To @state, busy kept; no write when the state is @state already. */
static inline bool odebug_tracker_move(struct odebug_tracker *t, uint64_t w,
				       enum debug_obj_state state)
{
	/* No change: the read of @w is where the call takes effect. */
	if (odebug_word_state(w) == state)
		return true;
	return odebug_tracker_cas(t, w, (w & ~(uint64_t)ODEBUG_STATE_BITS) | state);
}

/*
 * To @state with busy set exactly when @astate is not 0, the bucket lock
 * held; the caller stores astate after (a lockless deactivate compares
 * busy, never astate).
 */
static inline bool odebug_tracker_move_busy(struct odebug_tracker *t, uint64_t w,
					    unsigned int state, unsigned int astate)
{
	return odebug_tracker_cas(t, w, odebug_word_with_state_busy(w, state, astate != 0));
}

/*
 * A checker may need to hear when a tracker of one descriptor stops being
 * tracked in any state (the pthread checks: an rwlock's seal, builtin.h,
 * stands for its tracker): odebug_left_key (registry.h) holds that
 * descriptor's settled key, 0 until set.  Every way out of the table
 * (FREED, RETIRED) passes here, after the word changed.
 */
#include "registry.h"

/*
 * print_stats=1's count per type (descr.c; printed by stats-types.c): a tracker of the word
 * @w's descriptor entered (+1) or left (-1) the table.  One predictable
 * branch otherwise.
 */
struct odebug_type_count {
	long now, most;
	unsigned long reports;
};
extern ODEBUG_HIDDEN struct odebug_type_count odebug_type_counts[];	/* descr.c */
void odebug_types_count(unsigned int slot, int delta);
static inline void odebug_types_note(uint64_t w, int delta)
{
	if (unlikely(odebug_opt.print_stats))
		odebug_types_count(odebug_word_slot(w), delta);
}

static inline void odebug_tracker_left(uint64_t w)
{
	const uint64_t low = ((uint64_t)1 << ODEBUG_ADDR_SHIFT) - 1;

	if (odebug_word_state(w) != ODEBUG_WORD_FREED && odebug_word_state(w) != ODEBUG_WORD_RETIRED)
		odebug_types_note(w, -1);

	if (unlikely(((w | 1 | ODEBUG_WORD_BUSY) & low) ==
		     ((odebug_load(&odebug_left_key) | ODEBUG_WORD_BUSY) & low)))
		odebug_checkers_left();
}

/* debug_object_free(): FREED, linked but untracked, busy clear. */
static inline bool odebug_tracker_free(struct odebug_tracker *t, uint64_t w)
{
	if (!odebug_tracker_cas(t, w, odebug_word_with_state_busy(w, ODEBUG_WORD_FREED, false)))
		return false;
	odebug_tracker_left(w);
	return true;
}

/*
 * Claimed for unlinking, the bucket lock held: RETIRED, which no lockless
 * call changes; its free is now the claimer's to count.
 */
static inline bool odebug_tracker_retire(struct odebug_tracker *t, uint64_t w)
{
	if (!odebug_tracker_cas(t, w, w | ODEBUG_WORD_RETIRED))
		return false;
	odebug_tracker_left(w);
	return true;
}

/* Retired whatever its state (the table's unlink and drain): the word before. */
static inline uint64_t odebug_tracker_retire_any(struct odebug_tracker *t)
{
	uint64_t w = __atomic_fetch_or(&t->word, ODEBUG_WORD_RETIRED, __ATOMIC_ACQ_REL);

	odebug_tracker_left(w);
	return w;
}

/* Is @w FREED?  Only the table and the FREED-tracker bound ask. */
static inline bool odebug_word_freed(uint64_t w)
{
	return odebug_word_state(w) == ODEBUG_WORD_FREED;
}

/* Is @w RETIRED (unlinked, or claimed for it)? */
static inline bool odebug_word_retired(uint64_t w)
{
	return odebug_word_state(w) == ODEBUG_WORD_RETIRED;
}

/*
 * A FREED tracker (@w) retired, the bucket lock held: no lockless call
 * writes a FREED word, so a store does.
 */
static inline void odebug_tracker_retire_freed(struct odebug_tracker *t, uint64_t w)
{
	__atomic_store_n(&t->word, w | ODEBUG_WORD_RETIRED, __ATOMIC_RELEASE);
}

/*
 * A tracker from the pool (RETIRED or fresh) gets its object's word before
 * odebug_insert() links it with a release store.
 */
static inline void odebug_tracker_make(struct odebug_tracker *t, uintptr_t addr,
				       unsigned int slot, enum debug_obj_state state)
{
	__atomic_store_n(&t->word, odebug_word(addr, slot, state), __ATOMIC_RELAXED);
	odebug_types_note(odebug_word(addr, slot, state), 1);
}

/*
 * A FREED tracker of the same address tracked again, the bucket lock held:
 * no lockless call writes a FREED word, so a store does, and its release
 * orders the caller's astate and origins before it.
 */
static inline void odebug_tracker_set_tracked(struct odebug_tracker *t, uintptr_t addr,
					      unsigned int slot, enum debug_obj_state state)
{
	__atomic_store_n(&t->word, odebug_word(addr, slot, state), __ATOMIC_RELEASE);
	odebug_types_note(odebug_word(addr, slot, state), 1);
}

/*
 * The half of a settled tracker's word that does not depend on the
 * address (odebug_tracker_settled()), made once per descriptor slot; never
 * 0, which stands for "not known yet" and matches no word.
 */
static inline uint64_t odebug_settled_key(unsigned int slot)
{
	return odebug_word(0, slot, ODEBUG_STATE_ACTIVE);
}

/* The word of @addr's tracker with @key's descriptor slot, in @state, busy clear. */
static inline uint64_t odebug_settled_word(uintptr_t addr, uint64_t key, enum debug_obj_state state)
{
	return ((odebug_word(addr, 0, 0) | key) & ~(uint64_t)ODEBUG_STATE_BITS) | state;
}

/*
 * Without any lock: is @t the tracker of @addr with the descriptor slot
 * of @key (odebug_settled_key()), INACTIVE or ACTIVE, busy clear?  One
 * load and one compare (INACTIVE and ACTIVE differ in the state's low
 * bit): the mutex cache's check.
 */
static inline bool odebug_tracker_settled(const struct odebug_tracker *t, uintptr_t addr,
					  uint64_t key)
{
	_Static_assert((ODEBUG_STATE_INACTIVE | 1) == ODEBUG_STATE_ACTIVE, "one bit apart");
	return (odebug_tracker_word(t) | 1) == (odebug_word(addr, 0, 0) | key);
}

extern ODEBUG_HIDDEN struct odebug_tracker *odebug_pool_base;
/* Indexes below this are mapped (never unmapped while on): lockless reads. */
extern ODEBUG_HIDDEN unsigned long odebug_pool_reserved;

/* Trackers are named by their 32-bit index in the pool; 0 is none. */
static inline struct odebug_tracker *odebug_tracker_at(uint32_t index)
{
	return index ? &odebug_pool_base[index] : NULL;
}

static inline uint32_t odebug_tracker_index(const struct odebug_tracker *t)
{
	return (uint32_t)(t - odebug_pool_base);
}

extern ODEBUG_HIDDEN unsigned long odebug_trackers_out;
void odebug_pool_drain_cache(void);

/* Can anything be tracked?  Zero is exact: the free() fast path. */
static inline bool odebug_tracking_any(void)
{
	return odebug_load(&odebug_trackers_out) != 0;
}

/*
 * The span (bucket.c): every object a tracker has been linked for starts in
 * [lo, hi).  It only grows (under the bucket lock that links the tracker,
 * before the link), so it needs no lock to read: a free() of a block
 * outside it is "nothing here" after one or two compares against a line
 * that stays in cache, however many trackers exist.  hi starts at 1, so a
 * NULL pointer is never outside it; lo starts above every address.  An
 * object tracked by another thread while its memory is freed is a race in
 * the program itself, as for the chunk map (table.c).
 */
struct odebug_span {
	uintptr_t lo, hi;
};
extern ODEBUG_HIDDEN struct odebug_span odebug_span;
void odebug_span_reset(void);

/*
 * Before a tracker for @addr is linked (its bucket lock held): widen the
 * span to cover it.  A load and two compares once it does, which is
 * almost always; another bucket's insert may widen it concurrently, hence
 * the compare-and-swap loops (the span is not a tracker word).
 */
static inline void odebug_span_extend(uintptr_t addr)
{
	uintptr_t lo = odebug_load(&odebug_span.lo), hi = odebug_load(&odebug_span.hi);

	while (addr < lo &&
	       !__atomic_compare_exchange_n(&odebug_span.lo, &lo, addr, true,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	while (addr >= hi &&
	       !__atomic_compare_exchange_n(&odebug_span.hi, &hi, addr + 1, true,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/* Does no object tracked now start at or above @start? */
static inline bool odebug_span_below(uintptr_t start)
{
	return start >= odebug_load_folded(&odebug_span.hi);
}

/* Does no object tracked now start below @end? */
static inline bool odebug_span_above(uintptr_t end)
{
	return end <= odebug_load_folded(&odebug_span.lo);
}

/* Does no object tracked now start in [start, end)? */
static inline bool odebug_span_misses(uintptr_t start, uintptr_t end)
{
	return odebug_span_below(start) || odebug_span_above(end);
}

#include "bucket.h"

/* bucket.c */
bool odebug_buckets_init(void);
void odebug_buckets_fini(void);
void odebug_stat_max(unsigned long *stat, unsigned long value);
extern ODEBUG_HIDDEN unsigned long odebug_max_chain;
/*
 * A visit of the buckets of a range: @chains is the set of the bucket's
 * chains that can hold an object in [start, end), to pass to
 * odebug_bucket_take() or odebug_bucket_each(); called without the bucket
 * lock; returns true to stop.
 */
typedef bool (*odebug_visit_fn)(struct odebug_bucket *b, uint64_t chains,
				uintptr_t start, uintptr_t end, void *ctx);
void odebug_table_visit_all(uint64_t chains, uintptr_t start, uintptr_t end,
			    odebug_visit_fn visit, void *ctx);
void odebug_trackers_put(uint32_t list);
void odebug_tracker_snapshot(struct odebug_snapshot *o, const struct odebug_tracker *t);
bool odebug_tracker_snapshot_active(struct odebug_snapshot *o, struct odebug_tracker *t,
				    bool claim);
void odebug_table_lock_all(void);
void odebug_table_unlock_all(void);

/* table.c (visit and map_may_hold: table-range.c) */
bool odebug_table_init(void);
void odebug_table_fini(void);
void odebug_table_go_huge(void);
/* Many trackers: the table and the pool get huge pages (pool.c). */
#define ODEBUG_HUGE_AT		32768
#ifndef MADV_COLLAPSE
#define ODEBUG_MADV_COLLAPSE	25	/* Linux 6.1; EINVAL before */
#else
#define ODEBUG_MADV_COLLAPSE	MADV_COLLAPSE
#endif
void odebug_table_visit(uintptr_t start, uintptr_t end, odebug_visit_fn visit, void *ctx);
bool odebug_map_may_hold(uintptr_t start, uintptr_t end);

/*
 * Can an object tracked now start in [start, end)?  No lock, no false
 * "no": the span first (two compares), then the table's chunk map and
 * masks (odebug_map_may_hold()).
 */
static inline bool odebug_range_may_hold(uintptr_t start, uintptr_t end)
{
	return !odebug_span_misses(start, end) && odebug_map_may_hold(start, end);
}

/*
 * table.c's chunk map: a byte per 4 KiB chunk below ODEBUG_MAP_LIMIT,
 * nonzero while a tracker of the chunk may exist (RELIABILITY.md); NULL
 * when unmapped.
 */
extern ODEBUG_HIDDEN uint8_t *odebug_chunk_map;
#define ODEBUG_MAP_LIMIT	((uintptr_t)1 << 47)
/* The chunks the map covers: its size, 0 without a map (one compare for both). */
extern ODEBUG_HIDDEN size_t odebug_map_chunks;

/*
 * A chunk's byte in the map has a bit per eighth of the chunk (512 bytes
 * of 4 KiB), set while a tracker may start there (table.c's map_mark()).
 */
#define ODEBUG_EIGHTH_SHIFT	(ODEBUG_CHUNK_SHIFT - 3)

/*
 * The free path's first look, inline, at a nonempty range [start, end):
 * 0 when it lies in one chunk the map leaves unmarked, or in one eighth
 * of a chunk the map does not mark (no object tracked now starts in it),
 * 1 for any other range within one marked chunk (ask
 * odebug_chunk_may_hold()), 2 otherwise (ask odebug_map_may_hold()).  Most
 * blocks of a heap that holds tracked objects elsewhere end at 0, and most
 * small ones beside one too; a block over several eighths is left to the
 * masks, which a chunk dense with trackers needs anyway.
 */
static inline int odebug_chunk_look(uintptr_t start, uintptr_t end)
{
	uintptr_t c = start >> ODEBUG_CHUNK_SHIFT;
	uintptr_t first, last;	/* the eighths of start and end - 1 */
	unsigned int v;

	if (((start ^ (end - 1)) >> ODEBUG_CHUNK_SHIFT) || c >= odebug_load_folded(&odebug_map_chunks))
		return 2;
	v = odebug_load_folded(&odebug_chunk_map[c]);	/* any byte read answers safely */
	if (likely(!v))
		return 0;
	first = start >> ODEBUG_EIGHTH_SHIFT;
	last = (end - 1) >> ODEBUG_EIGHTH_SHIFT;
	/* Within one eighth (most blocks): its bit; else the masks answer. */
	return first != last || (v >> (first & 7) & 1);
}
bool odebug_chunk_may_hold(uintptr_t start, uintptr_t end);
/*
 * The chain head of @addr (table.c's header): its 32-byte cell in its
 * chunk, xored with the shuffle (table.c's shuffle_of_hash()) of the seven
 * hash bits at ODEBUG_KEY_SHIFT.
 */
static inline uint32_t *odebug_chain_head(uintptr_t addr)
{
	uint64_t hash = odebug_chunk_hash(addr);

	unsigned int key = (unsigned int)(hash >> ODEBUG_KEY_SHIFT) & 127;

	return &odebug_buckets[hash >> (64 - ODEBUG_HASH_BITS)]
			.heads[((addr >> 5) ^ key ^ (key >> 2 & 126) ^ (key >> 4 & 126)) & 127];
}

/* Steps a lockless walk takes before it leaves the call to the locked path. */
#define ODEBUG_PEEK_STEPS	8

/*
 * Without any lock: the tracker whose word holds @addr, that word in *@w;
 * NULL when none is found within a few steps.  Only a compare-and-swap
 * with *@w may act on it (table.c's header).
 *
 * A tracker on the chain may be unlinked, returned to the pool and reused
 * for another object while the walk reads it, so the walk may wander off
 * the chain: it stays inside the pool's mapping (indexes are checked
 * against the reservation, never unmapped while on) and stops after
 * ODEBUG_PEEK_STEPS.  What it returns is right by identity, not by
 * position: at most one tracker whose word holds @addr and is not RETIRED
 * exists at any time, and the caller's compare-and-swap fails if the word
 * changed since it was read (table.c's header).
 */
static inline struct odebug_tracker *odebug_peek(uintptr_t addr, uint64_t *w)
{
	unsigned long end = odebug_load(&odebug_pool_reserved);
	unsigned int steps = ODEBUG_PEEK_STEPS;
	uint32_t i = __atomic_load_n(odebug_chain_head(addr), __ATOMIC_ACQUIRE);

	for (; i && i < end && steps; steps--) {
		struct odebug_tracker *t = &odebug_pool_base[i];
		uint64_t word = odebug_tracker_word(t);

		if (odebug_word_addr(word) == addr) {
			if (odebug_word_state(word) == ODEBUG_WORD_RETIRED)
				return NULL;
			*w = word;
			return t;
		}
		i = odebug_tracker_next(t);
	}
	return NULL;
}
/*
 * Before taking @b's lock for @addr: start the misses of its lock line, its
 * chain head and the chain's first tracker together.  The lock is a locked
 * instruction, which waits for every earlier load: without this the three
 * misses of a cold object come one after another.  Prefetches are not
 * waited for; the head is a plain load, checked as odebug_peek() checks it.
 */
#define ODEBUG_PREFETCH_MIN	32768	/* trackers out: 512 KiB of them, beyond L2 */

static inline void odebug_prefetch(struct odebug_bucket *b, uintptr_t addr)
{
	uint32_t i;

	/* A few thousand objects stay in cache: the prefetch would be pure cost. */
	if (odebug_load(&odebug_trackers_out) < ODEBUG_PREFETCH_MIN)
		return;
	__builtin_prefetch(b, 1);
	i = __atomic_load_n(odebug_chain_head(addr), __ATOMIC_RELAXED);
	if (i && i < odebug_load(&odebug_pool_reserved))
		__builtin_prefetch(&odebug_pool_base[i], 1);
}

/* With the bucket lock held: */
struct odebug_tracker *odebug_lookup(struct odebug_bucket *b, uintptr_t addr);
struct odebug_tracker *odebug_lookup_any(struct odebug_bucket *b, uintptr_t addr);
int odebug_release(struct odebug_bucket *b, struct odebug_tracker *t, uint64_t w);
void odebug_revive(struct odebug_tracker *t, uintptr_t addr, unsigned int slot);
void odebug_insert(struct odebug_bucket *b, struct odebug_tracker *t);
void odebug_remove(struct odebug_bucket *b, struct odebug_tracker *t);
typedef void (*odebug_sync_fn)(struct odebug_tracker *t);
/* The free check's sync per tracker, once a checker wants one (registry.h); NULL before. */
static inline odebug_sync_fn odebug_syncer(void)
{
	return odebug_load(&odebug_sync_one);
}

/* The same for the trackers of @chains in [start, end) of live memory, under the bucket lock. */
static inline void odebug_sync_range(struct odebug_bucket *b, uint64_t chains,
				     uintptr_t start, uintptr_t end)
{
	if (unlikely(odebug_load(&odebug_sync_one) != NULL))
		odebug_checkers_sync_range(b, chains, start, end);
}

/* ... and for every tracker of @chains at exit, its memory maybe gone. */
static inline void odebug_sync_exit(struct odebug_bucket *b, uint64_t chains)
{
	if (unlikely(odebug_load(&odebug_sync_one) != NULL))
		odebug_checkers_sync_exit(b, chains);
}
struct odebug_tracker *odebug_bucket_take(struct odebug_bucket *b, uint64_t chains,
					  uintptr_t start, uintptr_t end, odebug_sync_fn sync,
					  uint32_t *taken, unsigned long *visited);
typedef bool (*odebug_tracker_fn)(const struct odebug_tracker *t, void *ctx);
bool odebug_bucket_each(struct odebug_bucket *b, uint64_t chains,
			odebug_tracker_fn fn, void *ctx);
void odebug_table_drain(void);
#endif /* ODEBUG_TRACKER_H */
