/* SPDX-License-Identifier: MIT */
/*
 * builtin.h - the built-in object types: every program's pthread mutexes,
 * rwlocks, spinlocks, condition variables, barriers and semaphores, each a
 * struct debug_obj_descr driven by the interposers in preload/.
 *
 * The state of a built-in object is a tracker like any other: held or
 * waited on is ACTIVE (the active state counts readers or waiters), free
 * INIT or INACTIVE, destroyed DESTROYED.  The common transitions take one
 * bucket lock (odebug_builtin_step); everything else, and every report,
 * goes through the public debug_object_* calls.  A mutex's hold and an
 * rwlock's read holds are the exception: glibc's words keep them, and the
 * tracker is synced from them where the table must know (builtin.c's
 * header).
 */
#ifndef ODEBUG_BUILTIN_H
#define ODEBUG_BUILTIN_H

#include <pthread.h>
#include <stdbool.h>

#include "core.h"

/*
 * Which families the options enabled (set once decided on), and STARTED
 * while the mode is ODEBUG_MODE_ON (init.c's set_mode()): an interposer's
 * fast path tests both in the one word it loads anyway.
 */
#define ODEBUG_BUILTIN_PTHREAD	1
#define ODEBUG_BUILTIN_SEM	2
#define ODEBUG_BUILTIN_STARTED	4
extern ODEBUG_HIDDEN int odebug_builtin_on;

extern ODEBUG_HIDDEN const struct debug_obj_descr odebug_mutex_descr, odebug_rwlock_descr,
	odebug_spin_descr, odebug_cond_descr, odebug_barrier_descr, odebug_sem_descr;

static inline bool odebug_builtin_active(int family)
{
	if (likely(!(odebug_load(&odebug_builtin_on) & family)))
		return false;
	return odebug_interposer_ready();
}


/*
 * Returned frames (lib/table/stack.c), at an interposer's entry: did the
 * caller's frames return over an on-stack object?  The caller's stack
 * pointer is odebug_caller_sp() in the exported function itself (a call
 * inside libodebug runs on the dead frame's bytes and would see nothing).
 * The inline path (started: a bit of the word that said the family is
 * on; not under the guard and nothing on the stack below the caller: the
 * fast-path mark, one compare for both) is loads and compares only;
 * anything else tail-calls
 * the cold copy (ODEBUG_INTERPOSER), since GCC gives up shrink-wrapping
 * when a conditional call precedes the real one: the disabled path stays
 * a branch and a tail call, the enabled one pays a load and a compare.
 */
static inline __attribute__((always_inline)) bool odebug_builtin_fast(int on, uintptr_t sp)
{
	return likely((on & ODEBUG_BUILTIN_STARTED) && sp <= odebug_tls.fast_sp);
}
bool odebug_builtin_enter_slow(uintptr_t sp);

/* The out-of-line copy both macros below call: the start, or the returned frames, first. */
#define ODEBUG_INTERPOSER_COLD(ret, fn, nextp, params, args)			\
	static __attribute__((noinline)) ret fn##_cold(ret (*next) nextp,	\
						       ODEBUG_ARGS params, uintptr_t sp) \
	{									\
		if (!odebug_builtin_enter_slow(sp))				\
			return next args;					\
		return fn##_body(next, ODEBUG_ARGS args);			\
	}

/*
 * An interposer @fn for @family whose work is @fn##_body(next, args...)
 * (always inline): disabled, the real call; enabled, the body inline when
 * odebug_builtin_fast(), else @fn##_cold, out of line, which starts
 * libodebug or looks at the returned frames first.
 */
#define ODEBUG_INTERPOSER(family, ret, fn, nextp, params, args)		\
	ODEBUG_INTERPOSER_COLD(ret, fn, nextp, params, args)			\
	static inline __attribute__((always_inline)) ret fn(ret (*next) nextp,	\
							   ODEBUG_ARGS params)	\
	{									\
		int on = odebug_load(&odebug_builtin_on);			\
		uintptr_t sp;							\
										\
		if (likely(!(on & (family))))					\
			return next args;					\
		sp = odebug_caller_sp();					\
		if (unlikely(!odebug_builtin_fast(on, sp)))			\
			return fn##_cold(next, ODEBUG_ARGS args, sp);		\
		return fn##_body(next, ODEBUG_ARGS args);			\
	}

/*
 * The same, for a call that has nothing to do when @quick, a test of its
 * arguments that can be true only while libodebug runs (an rwlock's seal):
 * its fast path is the family's bit, tested in memory, and @quick; the
 * started bit and the fast-path mark are read only when @quick fails.
 * So a quick call makes no returned-frames check: an on-stack object
 * left by a function that returned is found at the caller's next other
 * call (any lock, unlock or free()), and under the guard a quick call
 * does what the cold path would have done there (nothing).  The compare
 * is a third of what a read-lock pair adds.
 */
#define ODEBUG_INTERPOSER_QUICK(family, ret, fn, nextp, params, args, quick)	\
	ODEBUG_INTERPOSER_COLD(ret, fn, nextp, params, args)			\
	static inline __attribute__((always_inline)) ret fn(ret (*next) nextp,	\
							   ODEBUG_ARGS params)	\
	{									\
		uintptr_t sp;							\
										\
		if (likely(!(odebug_load_folded(&odebug_builtin_on) & (family))))	\
			return next args;					\
		if (likely(quick))						\
			return next args;					\
		sp = odebug_caller_sp();					\
		if (unlikely(!odebug_builtin_fast(odebug_load(&odebug_builtin_on), sp))) \
			return fn##_cold(next, ODEBUG_ARGS args, sp);		\
		return fn##_body(next, ODEBUG_ARGS args);			\
	}

/*
 * Does glibc record the calling thread as @addr's owner?  (One load and
 * compare; odebug_tls.self_tid is 0 until odebug_builtin_self_tid() ran.)
 */
static inline bool odebug_mutex_mine(const void *addr)
{
	return odebug_glibc_mutex_owner_word(addr) == odebug_tls.self_tid;
}

/*
 * Each thread's cache of mutexes it locked whose hold glibc keeps (not in
 * tracked mode, builtin.c's header): the tracker, indexed by a hash of the
 * address.  A hit needs the tracker's word to still hold this address, the
 * mutex descriptor and INACTIVE or ACTIVE with nothing busy; table.c's
 * header makes that word unique to the live tracker of the address (a
 * retired or reused tracker fails it, and the pool is never unmapped while
 * on).  So a lock or unlock that hits reads one word of ours and writes
 * nothing.  Filled on a miss (builtin.c); odebug_tls.mcache (base.h).
 */
extern ODEBUG_HIDDEN uint64_t odebug_mutex_key;	/* the mutex descriptor's odebug_settled_key() */

static inline struct odebug_tracker **odebug_mcache_entry(uintptr_t addr)
{
	return &odebug_tls.mcache[(addr * 0x9e3779b97f4a7c15ull) >> (64 - ODEBUG_MCACHE_BITS)];
}

/* The entry of @addr when it holds @addr's tracker INACTIVE (2) or ACTIVE (3), busy clear: one compare. */
static inline struct odebug_tracker *odebug_mutex_cache_hit(const void *addr)
{
	struct odebug_tracker *t = *odebug_mcache_entry((uintptr_t)addr);

	return t && odebug_tracker_settled(t, (uintptr_t)addr, odebug_load(&odebug_mutex_key)) ?
	       t : NULL;
}

/*
 * A hit, and not a mutex re-initialised process-shared since the entry was
 * made (tracked mode: another thread's entry would still match its word).
 */
static inline bool odebug_mutex_cached(const void *addr)
{
	return odebug_mutex_cache_hit(addr) && !odebug_glibc_mutex_pshared(addr);
}

/*
 * An rwlock's seal: a read lock's and a reader's unlock's fast path, which
 * read no word of ours but this one.  glibc's rwlock has a 64-bit word it
 * never uses (__pad2, 0 after an init and in the static initializers); a
 * read lock that found the rwlock's tracker INACTIVE or ACTIVE (a writer),
 * its readers kept in glibc's __readers (not tracked mode: not
 * process-shared, not origins=1, not on the locking thread's stack), writes
 * the address xored with odebug_rwlock_seal there (builtin.c).  A seal
 * holds while the tracker it was made from is settled:
 * - a destroy clears it after the tracker's step (pthread-rwlock.c), and
 *   an init's memset does;
 * - a tracker of the descriptor that leaves the table INACTIVE or ACTIVE
 *   (the memory released without a destroy) changes odebug_rwlock_seal,
 *   and so does a change of the mode (tracker.h's odebug_tracker_left()):
 *   no seal made before matches, and a copy of the rwlock's bytes (a
 *   realloc()) never matched, being another address;
 * - tracked mode stays out: a process-shared init clears the word, and no
 *   rwlock on the stack of a thread alive (stack.c's odebug_on_any_stack())
 *   is sealed, so the stack's owner, whose read holds of it are counted in
 *   the tracker, never meets a seal there.
 * Its high 16 bits are never 0 and never change (a mark), so a seal is
 * never an initializer's word, and the static-initializer test
 * (builtin-glibc.c) takes one of any key for the rwlock's bytes.
 */
extern ODEBUG_HIDDEN uint64_t odebug_rwlock_seal;
extern ODEBUG_HIDDEN uint64_t odebug_rwlock_key;	/* the rwlock descriptor's odebug_settled_key() */

/* Could @w be a seal, of any key?  (Its high 16 bits are the mark's.) */
static inline bool odebug_rwlock_seal_shaped(uint64_t w)
{
	return (w ^ odebug_load(&odebug_rwlock_seal)) >> 48 == 0;
}

static inline uint64_t odebug_rwlock_seal_of(const void *addr)
{
	return (uintptr_t)addr ^ odebug_load(&odebug_rwlock_seal);
}

void odebug_rwlock_unseal(void *addr);
void odebug_rwlock_seals_break(void);
void odebug_rwlock_seals_init(void);

static inline bool odebug_rwlock_sealed(const void *addr)
{
	return (odebug_glibc_rwlock_seal_word(addr) ^ (uintptr_t)addr) ==
	       odebug_load_folded(&odebug_rwlock_seal);
}

/*
 * After a read lock in glibc-keeps-the-readers mode left the tracker
 * INACTIVE or ACTIVE: seal the rwlock (above), if
 * the start allowed seals (glibc.h).  Stored, then the
 * tracker read again, against a destroy or a release between the two
 * (each changes the tracker's word before it clears or breaks seals).
 */
static inline void odebug_rwlock_seal_at(void *addr, bool tracked)
{
	struct odebug_tracker *t;
	unsigned long seal;
	uint64_t w, key;

	if (tracked || !odebug_load(&odebug_glibc_seal_ok) || odebug_glibc_rwlock_shared(addr) ||
	    odebug_on_any_stack((uintptr_t)addr))
		return;
	t = odebug_peek((uintptr_t)addr, &w);
	if (!t || odebug_word_descr(w) != &odebug_rwlock_descr)
		return;
	if (!(key = odebug_load(&odebug_rwlock_key))) {
		key = odebug_settled_key(odebug_word_slot(w));
		odebug_store(&odebug_rwlock_key, key);
		odebug_store(&odebug_left_key, key);	/* its trackers' leaving breaks the seals */
	}
	seal = odebug_rwlock_seal_of(addr);
	if (odebug_glibc_rwlock_seal_word(addr) == seal ||
	    !odebug_tracker_settled(t, (uintptr_t)addr, key))
		return;
	odebug_glibc_rwlock_seal_store(addr, seal);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!odebug_tracker_settled(t, (uintptr_t)addr, key))
		odebug_glibc_rwlock_seal_cas(addr, seal, __ATOMIC_RELAXED);
}

/*
 * A writer's lock (@from INACTIVE, @to ACTIVE) or unlock (the reverse) of
 * an rwlock in this thread's cache: the step fast_step() (builtin.c)
 * makes, one compare-and-swap of the tracker's word, without its lookup.
 * The entry's tracker must hold exactly this address, the rwlock
 * descriptor and @from, busy clear; anything else is the slow path's.
 */
static inline bool odebug_rwlock_writer_cached(const void *addr, enum debug_obj_state from,
					       enum debug_obj_state to)
{
	struct odebug_tracker *t = *odebug_mcache_entry((uintptr_t)addr);
	uint64_t key = odebug_load(&odebug_rwlock_key), w;

	if (!t || !key)
		return false;
	w = odebug_tracker_word(t);
	if (w != odebug_settled_word((uintptr_t)addr, key, from))
		return false;
	return odebug_tracker_move(t, w, to);
}

/*
 * How many readers hold (or wait for) an rwlock whose __readers word is
 * @r, as glibc counts them: the one place that decodes it (glibc.h has
 * the layout).
 */
static inline unsigned int odebug_glibc_readers_in(unsigned int r)
{
	return r >> ODEBUG_GLIBC_RWLOCK_READER_SHIFT;
}

/* Does @r count any reader?  One compare, where readers_in() != 0 costs a shift. */
static inline bool odebug_glibc_readers_any(unsigned int r)
{
	return r >= 1u << ODEBUG_GLIBC_RWLOCK_READER_SHIFT;
}

static inline unsigned int odebug_glibc_rwlock_readers(const void *addr)
{
	return odebug_glibc_readers_in(odebug_glibc_rwlock_readers_word(addr));
}

/*
 * A reader's unlock with nothing to check or write: glibc names no writer
 * (its own unlock decides so between a writer's and a reader's), counts
 * readers (the caller's own read hold among them: not "unlock" of an
 * rwlock nobody holds), and the rwlock is sealed, so this thread's read
 * holds of it are glibc's (not tracked mode).  In that mode a reader's
 * unlock changes nothing of ours (odebug_builtin_rwlock_unlock()).
 */
static inline bool odebug_rwlock_read_unlock_quiet(const void *addr)
{
	return !odebug_glibc_rwlock_writer_folded(addr) &&
	       odebug_glibc_readers_any(odebug_glibc_rwlock_readers_folded(addr)) &&
	       odebug_rwlock_sealed(addr);
}

/* What a step does to an object's tracker, under its bucket lock. */
enum odebug_builtin_op {
	BUILTIN_PEEK,	/* nothing: report the state */
	BUILTIN_LOCK,	/* INIT/INACTIVE -> ACTIVE (held by one) */
	BUILTIN_UNLOCK,	/* ACTIVE -> INACTIVE */
	BUILTIN_RDLOCK,	/* -> ACTIVE, one more reader */
	BUILTIN_RDUNLOCK,	/* one reader less; the last -> INACTIVE */
	BUILTIN_WAIT,	/* -> ACTIVE, one more waiter */
	BUILTIN_WAKE_ONE,	/* one waiter less (never below zero) */
	BUILTIN_WAKE_ALL,	/* no waiter left: INACTIVE */
	BUILTIN_ARRIVE,	/* barrier: arg waiters (0: the last arrived, all go) */
	BUILTIN_RESET,	/* -> INIT, no reader or waiter */
	BUILTIN_USE,	/* a mutex locked, its hold kept by glibc: INIT -> INACTIVE */
	BUILTIN_SYNC,	/* a mutex or rwlock: ACTIVE if its words show it held, else not */
	BUILTIN_DESTROY,	/* BUILTIN_SYNC, then INIT/INACTIVE -> DESTROYED */
};
/* Returned by a step on an address tracked with another descriptor. */
#define ODEBUG_STATE_FOREIGN ODEBUG_STATE_MAX

int odebug_builtin_step(void *addr, const struct debug_obj_descr *d,
			enum odebug_builtin_op op, unsigned int arg);

/* The events, called by the interposers (builtin.c). */
void odebug_builtin_object_init(void *addr, const struct debug_obj_descr *d);
void odebug_builtin_object_destroy(void *addr, const struct debug_obj_descr *d);
void odebug_builtin_lock(void *addr, const struct debug_obj_descr *d, enum odebug_builtin_op op);
void odebug_builtin_use(void *addr, const struct debug_obj_descr *d, enum odebug_builtin_op op,
		  unsigned int arg, const char *opname);
void odebug_builtin_misuse(void *addr, const struct debug_obj_descr *d, const char *opname);
void odebug_builtin_owner_died(void *addr, const struct debug_obj_descr *d);
void odebug_builtin_post(void *addr);	/* sem_post: async-signal-safe, jumps out survived */

/* Mutexes (glibc's structure tells whether and by whom one is held). */
int odebug_builtin_mutex_sync(void *addr);
int odebug_builtin_mutex_peek(void *addr);
void odebug_builtin_mutex_destroy(void *addr, int result, int before);
void odebug_builtin_mutex_unlock(void *addr);
void odebug_builtin_cond_wait_begin(void *cond, void *mutex);
void odebug_builtin_cond_wait_end(void *cond, void *mutex);
int odebug_builtin_self_tid(void);

/* builtin-unlock.c: the end of a hold. */
void odebug_builtin_rwlock_unlock(void *addr);

/*
 * The free check of live memory, under the bucket lock (the checker's
 * sync hooks, registry.h): the trackers of mutexes in [start, end) on
 * @chains take the hold their words show, so "free active" is decided as
 * for any object.  Asked once a mutex whose hold glibc keeps is tracked.
 */
void odebug_builtin_sync_slow(struct odebug_bucket *b, uint64_t chains,
			      uintptr_t start, uintptr_t end);
void odebug_builtin_sync_exit(struct odebug_bucket *b, uint64_t chains);
void odebug_builtin_sync_one(struct odebug_tracker *t);

/* The report: the held mutex's or rwlock's owner, read from glibc. */
int odebug_builtin_owner(const struct odebug_snapshot *o);

/* "builtin-glibc.c": what glibc's structures say (glibc.h) */
bool odebug_glibc_mutex_is_static(void *addr);
bool odebug_glibc_thread_alive(int tid);
bool odebug_glibc_mutex_held(const void *addr);
bool odebug_glibc_tracked_mode(const void *addr);
bool odebug_glibc_rwlock_is_static(void *addr);
bool odebug_glibc_always_static(void *addr);
unsigned int odebug_glibc_barrier_arrival(void *addr, int state, unsigned int waiting,
					  unsigned int seen);
bool odebug_glibc_barrier_is_static(void *addr);
unsigned int odebug_glibc_barrier_count(uintptr_t addr);
bool odebug_glibc_sem_is_static(void *addr);
bool odebug_glibc_mutex_kind_bad(const void *addr);
bool odebug_glibc_cond_is_static(void *addr);
bool odebug_glibc_rwlock_unheld(const void *addr);
bool odebug_glibc_rwlock_tracked_mode(const void *addr);

/* builtin-misuse.c: memory used as an object of the type that holds none. */
void odebug_builtin_absent(void *addr, const struct debug_obj_descr *d, const char *opname);
void odebug_builtin_mutex_refused(void *addr, bool einval);
bool odebug_builtin_mutex_unlock_bad(void *addr);
bool odebug_builtin_rwlock_unlock_unheld(void *addr);
int odebug_glibc_mutex_owner(const pthread_mutex_t *m);
bool odebug_glibc_unlock_checks_owner(const pthread_mutex_t *m);

/* nonowner.c: holds ended by a non-owner's unlock; an owner's name. */
void odebug_orphan_add(uintptr_t addr, int owner);
bool odebug_orphan_take(uintptr_t addr, int tid);
void odebug_orphan_forget(uintptr_t addr);
void odebug_orphan_fork_child(void);
void odebug_thread_name_of(int tid, char name[17]);

bool odebug_builtin_full(void);	/* over the built-in trackers' bound (held.c too) */

#endif /* ODEBUG_BUILTIN_H */
