/* SPDX-License-Identifier: MIT */
/*
 * builtin.c - the built-in types' descriptors and state logic, used by the
 * interposers in preload/ (pthread-*.c, sem.c, threads.c).
 *
 * Held, read-held and waited-on objects are ACTIVE, so the free check, the
 * reports, suppressions, origins and statistics apply unchanged.
 *
 * A mutex's hold lives in glibc's own words (__lock, __owner), not in its
 * tracker: an uncontended lock only reads the tracker (to know the mutex
 * is tracked and not destroyed) and an unlock only reads the mutex, so
 * neither writes a line another core reads.  Where the table must know
 * (init, destroy, a misuse report, the free check of live memory) the
 * tracker is first synced from the mutex (odebug_builtin_mutex_sync(), and
 * odebug_builtin_sync_range() under the free check's bucket lock), then
 * the engine decides as for any object.  Three kinds of mutex keep the
 * hold in the tracker instead ("tracked" mode, odebug_glibc_tracked_mode()): one on the
 * locking thread's stack (its memory is dead when the exit and
 * returned-frame checks look), a process-shared one (its words show other
 * processes' holds; only this process's are checked) and every mutex with
 * origins=1 (the locker's stack is recorded at the lock).  Their lock and
 * unlock are one compare-and-swap of the tracker's word, without the
 * bucket lock (fast_step()), as a rwlock's writer's.  An rwlock's read
 * holds are glibc's too (__readers), synced where the table decides
 * (rwlock_sync(), the free check's sync); a tracked-mode rwlock's readers,
 * waits and wakes are one bucket lock each; the rest
 * goes through the public calls, whose reports use the kernel's words
 * ("init active", "destroy active", "activate destroyed", "free active").
 * The ends of holds (unlocks, a condition variable's wait, a dead owner)
 * are builtin-unlock.c's.
 *
 * glibc's own structures answer what the table cannot know: whether a
 * mutex is locked and by whom (__lock, __owner), whether memory holds a
 * static initializer, how many threads a barrier waits for (glibc.h).
 * Only read, never written, but for one word glibc never uses: an rwlock's
 * seal (builtin.h, rwlock-seal.c), which lets a read lock skip the table.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "builtin.h"
#include "report-format.h"

ODEBUG_HOT int odebug_builtin_on;

/*
 * Trackers made for built-in objects stop at half of pool_max in use: a
 * program with millions of mutexes must leave room for its annotations.
 * (pool_max as the start left it: a limit on address space lowers it.)
 */
ODEBUG_HOT uint64_t odebug_mutex_key;
ODEBUG_HOT uint64_t odebug_rwlock_key;

static int forked;	/* in a fork() child: locks held at the fork may be re-initialised */

/* This thread's id, cached (glibc's mutex __owner holds the same). */
int odebug_builtin_self_tid(void)
{
	if (unlikely(!odebug_tls.self_tid))
		odebug_tls.self_tid = odebug_gettid();
	return odebug_tls.self_tid;
}

static bool over_limit(void)
{
	static int said;

	if (likely(odebug_load(&odebug_trackers_out) < odebug_opt.pool_max / 2))
		return false;
	if (!__atomic_exchange_n(&said, 1, __ATOMIC_ACQ_REL))
		odebug_message("built-in objects use half of pool_max trackers: "
			       "new mutexes, locks, semaphores and holds are not tracked from now on",
			       (char *)NULL);
	return true;
}

/* The bound, for lib/checks/held/held.c's trackers too. */
bool odebug_builtin_full(void)
{
	return over_limit();
}

/* --- fixups: they keep the table true to the object; never touch it --- */

/* Re-initialised while held or waited on: glibc is about to reset it. */
static bool fixup_init(void *addr, enum debug_obj_state state)
{
	(void)state;
	return odebug_builtin_step(addr, NULL, BUILTIN_RESET, 0) != ODEBUG_STATE_NOTAVAILABLE;
}

static void init_quiet(void *addr, const struct debug_obj_descr *d);

/*
 * Used but never initialised (reported as "activate not available"): track
 * it now, so that it is reported once and its later use is checked.
 */
#define DESCR(var, nm, is_static)					\
	static bool fixup_activate_##var(void *addr, enum debug_obj_state state) \
	{								\
		if (state == ODEBUG_STATE_NOTAVAILABLE)			\
			init_quiet(addr, &var);				\
		return false;						\
	}								\
	const struct debug_obj_descr var = {				\
		.name = nm,						\
		.is_static_object = is_static,				\
		.fixup_init = fixup_init,				\
		.fixup_activate = fixup_activate_##var,			\
	}

DESCR(odebug_mutex_descr, "pthread_mutex", odebug_glibc_mutex_is_static);
DESCR(odebug_rwlock_descr, "pthread_rwlock", odebug_glibc_rwlock_is_static);
DESCR(odebug_spin_descr, "pthread_spinlock", odebug_glibc_always_static);
DESCR(odebug_cond_descr, "pthread_cond", odebug_glibc_cond_is_static);
DESCR(odebug_barrier_descr, "pthread_barrier", odebug_glibc_barrier_is_static);
DESCR(odebug_sem_descr, "sem", odebug_glibc_sem_is_static);

static bool is_builtin(const struct debug_obj_descr *d)
{
	return d == &odebug_mutex_descr || d == &odebug_rwlock_descr ||
	       d == &odebug_spin_descr || d == &odebug_cond_descr ||
	       d == &odebug_barrier_descr || d == &odebug_sem_descr;
}

/* --- the transitions: lockless, or one bucket lock ------------------- */

/*
 * Lock and unlock without the bucket lock (table.c's header): a held
 * mutex or write-locked rwlock is ACTIVE with no reader count, so lock is
 * INIT/INACTIVE to ACTIVE and unlock ACTIVE to INACTIVE, each one
 * compare-and-swap of the tracker's word, which also checks the address,
 * the descriptor and that no reader or waiter is counted (busy).  Returns
 * the state before, or -1 to leave the step to the locked path.
 */
static inline __attribute__((always_inline)) int
fast_step(void *addr, const struct debug_obj_descr *d, enum odebug_builtin_op op)
{
	struct odebug_tracker *t;
	unsigned int state;
	uint64_t w;

	if (unlikely(odebug_opt.origins))
		return -1;
	t = odebug_peek((uintptr_t)addr, &w);
	if (!t || odebug_word_descr(w) != d)
		return -1;
	state = odebug_word_state(w);
	if (op == BUILTIN_USE) {	/* glibc keeps the hold: once INACTIVE, no write */
		if (state == ODEBUG_STATE_INACTIVE || state == ODEBUG_STATE_ACTIVE)
			return (int)state;
		if (state != ODEBUG_STATE_INIT || odebug_word_busy(w))
			return -1;
		return odebug_tracker_move(t, w, ODEBUG_STATE_INACTIVE) ? (int)state : -1;
	}
	switch (state) {
	case ODEBUG_STATE_INIT:
	case ODEBUG_STATE_INACTIVE:
		if (op == BUILTIN_UNLOCK)
			return (int)state;	/* not held: no change */
		if (odebug_word_busy(w))
			return -1;
		return odebug_tracker_move(t, w, ODEBUG_STATE_ACTIVE) ? (int)state : -1;
	case ODEBUG_STATE_ACTIVE:
		if (op == BUILTIN_LOCK)
			return (int)state;	/* a release we missed: no change */
		if (odebug_word_busy(w))
			return -1;
		return odebug_tracker_move(t, w, ODEBUG_STATE_INACTIVE) ? (int)state : -1;
	case ODEBUG_STATE_DESTROYED:
		return (int)state;	/* the locked step changes nothing either */
	default:		/* NONE: a tracker being made */
		return -1;
	}
}

/* Returned by a BUILTIN_DESTROY step that moved the tracker to DESTROYED. */
#define STATE_DESTROYED_NOW (ODEBUG_STATE_FOREIGN + 1)

/* What a step under the bucket lock decides: the state before and after, the active state. */
struct change {
	int state, next;
	unsigned int astate;
};

/* BUILTIN_SYNC of an rwlock whose readers glibc keeps: the readers it counts. */
static void sync_readers(const void *addr, struct change *c)
{
	unsigned int n;

	if (c->state == ODEBUG_STATE_DESTROYED || odebug_glibc_rwlock_shared(addr))
		return;
	n = odebug_glibc_rwlock_readers(addr);
	if (n) {
		c->next = ODEBUG_STATE_ACTIVE;
		c->astate = n;
	} else if (c->state == ODEBUG_STATE_ACTIVE && c->astate) {
		c->next = ODEBUG_STATE_INACTIVE;
		c->astate = 0;
	}
}

/* BUILTIN_SYNC of a mutex: held as its words show (process-shared: tracked). */
static void sync_hold(const void *addr, struct change *c)
{
	if (c->state == ODEBUG_STATE_DESTROYED || odebug_glibc_mutex_pshared(addr))
		return;
	if (odebug_glibc_mutex_held(addr))
		c->next = ODEBUG_STATE_ACTIVE;
	else if (c->state == ODEBUG_STATE_ACTIVE)
		c->next = ODEBUG_STATE_INACTIVE;
}

/* LOCK, RDLOCK, WAIT: held; a reader or waiter more is counted. */
static void take(enum odebug_builtin_op op, struct change *c)
{
	if (c->state == ODEBUG_STATE_ACTIVE) {
		if (op != BUILTIN_LOCK)
			c->astate++;
		return;
	}
	if (c->state == ODEBUG_STATE_DESTROYED)
		return;
	c->next = ODEBUG_STATE_ACTIVE;
	c->astate = op != BUILTIN_LOCK;
}

/* UNLOCK, RDUNLOCK, WAKE_ONE, WAKE_ALL: the last one out leaves it INACTIVE. */
static void release(enum odebug_builtin_op op, struct change *c)
{
	if (c->state != ODEBUG_STATE_ACTIVE)
		return;
	if ((op == BUILTIN_RDUNLOCK || op == BUILTIN_WAKE_ONE) && c->astate > 1) {
		c->astate--;
		return;
	}
	c->astate = 0;
	c->next = ODEBUG_STATE_INACTIVE;
}

/* @op's change of a tracker in @c->state (the bucket lock held). */
static void decide(void *addr, const struct debug_obj_descr *d, enum odebug_builtin_op op,
		   unsigned int arg, struct change *c)
{
	switch (op) {
	case BUILTIN_PEEK:
		break;
	case BUILTIN_USE:
		if (c->state == ODEBUG_STATE_INIT)
			c->next = ODEBUG_STATE_INACTIVE;
		break;
	case BUILTIN_SYNC:
	case BUILTIN_DESTROY:
		if (d == &odebug_rwlock_descr)
			sync_readers(addr, c);
		else
			sync_hold(addr, c);
		/* Not held: debug_object_destroy()'s silent case, without its lookup. */
		if (op == BUILTIN_DESTROY &&
		    (c->next == ODEBUG_STATE_INIT || c->next == ODEBUG_STATE_INACTIVE)) {
			c->next = ODEBUG_STATE_DESTROYED;
			c->astate = 0;
		}
		break;
	case BUILTIN_LOCK:
	case BUILTIN_RDLOCK:
	case BUILTIN_WAIT:
		take(op, c);
		break;
	case BUILTIN_ARRIVE:	/* @arg: glibc's count of arrivals with ours, 0: the last */
		if (c->state == ODEBUG_STATE_DESTROYED)
			break;
		c->astate = odebug_glibc_barrier_arrival(addr, c->state, c->astate, arg);
		c->next = c->astate ? ODEBUG_STATE_ACTIVE : ODEBUG_STATE_INACTIVE;
		break;
	case BUILTIN_UNLOCK:
	case BUILTIN_RDUNLOCK:
	case BUILTIN_WAKE_ONE:
	case BUILTIN_WAKE_ALL:
		release(op, c);
		break;
	case BUILTIN_RESET:
		if (c->state == ODEBUG_STATE_DESTROYED)
			break;
		c->astate = 0;
		c->next = ODEBUG_STATE_INIT;
		break;
	}
}

/*
 * Write @c to @t, whose word was @w.  False when a lockless lock or
 * unlock changed the word meanwhile: the caller decides again.
 */
static bool apply(struct odebug_tracker *t, uint64_t w, const struct change *c,
		  enum odebug_builtin_op op, uint32_t origin)
{
	if (c->next == c->state && c->astate == t->astate)
		return true;
	if (!odebug_tracker_move_busy(t, w, (unsigned int)c->next, c->astate))
		return false;
	t->astate = c->astate;
	if (c->next == ODEBUG_STATE_ACTIVE && c->state != ODEBUG_STATE_ACTIVE && op != BUILTIN_ARRIVE)
		odebug_tracker_set_origin(t, ODEBUG_ORIGIN_ACTIVATE, origin);
	return true;
}

/* The step under the bucket lock: out of line, the lockless one's frame stays small. */
static __attribute__((noinline)) int
step_locked(void *addr, const struct debug_obj_descr *d, enum odebug_builtin_op op, unsigned int arg)
{
	struct odebug_bucket *b = odebug_bucket_of((uintptr_t)addr);
	struct odebug_tracker *t;
	struct change c;
	uint32_t origin = 0;
	uint64_t w;

	if (unlikely(odebug_opt.origins) && (op == BUILTIN_LOCK || op == BUILTIN_RDLOCK || op == BUILTIN_WAIT))
		origin = odebug_origin_here();
	odebug_bucket_lock(b);
	t = odebug_lookup(b, (uintptr_t)addr);
	do {
		c.state = c.next = (int)odebug_tracker_read(t, &w);
		if (c.state == ODEBUG_STATE_NOTAVAILABLE)
			break;
		if (d ? odebug_word_descr(w) != d : !is_builtin(odebug_word_descr(w))) {
			c.state = ODEBUG_STATE_FOREIGN;
			break;
		}
		c.astate = t->astate;
		decide(addr, d, op, arg, &c);
	} while (!apply(t, w, &c, op, origin));
	odebug_bucket_unlock(b);
	if (c.state == ODEBUG_STATE_FOREIGN || (op != BUILTIN_SYNC && op != BUILTIN_DESTROY))
		return c.state;
	/* A sync is asked for the state it leaves (synced_state()), a destroy whether it was done. */
	if (op == BUILTIN_DESTROY && c.next == ODEBUG_STATE_DESTROYED && c.state != ODEBUG_STATE_DESTROYED)
		return STATE_DESTROYED_NOW;
	return c.next;
}

/*
 * Apply @op to the tracker of @addr; @d NULL matches any built-in type.
 * Returns the state before, ODEBUG_STATE_NOTAVAILABLE when untracked, or
 * ODEBUG_STATE_FOREIGN when the address is tracked with another
 * descriptor (a user's annotation of a struct whose first member is the
 * lock): that object is left to its owner.
 */
static inline __attribute__((always_inline)) int
step(void *addr, const struct debug_obj_descr *d, enum odebug_builtin_op op, unsigned int arg)
{
	int state;

	if ((op == BUILTIN_LOCK || op == BUILTIN_UNLOCK || op == BUILTIN_USE) && d) {
		state = fast_step(addr, d, op);
		if (likely(state >= 0))
			return state;
	}
	return step_locked(addr, d, op, arg);
}

/* The same, out of line, for every other caller. */
int odebug_builtin_step(void *addr, const struct debug_obj_descr *d,
			enum odebug_builtin_op op, unsigned int arg)
{
	return step(addr, d, op, arg);
}

/* From now on the free check syncs mutexes and rwlocks (once: no write per object). */
static void mutex_tracked(const struct debug_obj_descr *d)
{
	if ((d == &odebug_mutex_descr || d == &odebug_rwlock_descr) && !odebug_opt.origins &&
	    !odebug_load(&odebug_sync_one))
		odebug_sync_want();
}

/*
 * Does @addr's tracker of @d (a mutex or an rwlock) keep its holds itself
 * (tracked mode: origins=1, a thread's stack, a process-shared rwlock),
 * so that glibc's words are not asked?  The process-shared bits only with
 * @initialised: before an init, untracked memory may be uninitialised.
 */
static bool tracker_exact(void *addr, const struct debug_obj_descr *d, bool initialised)
{
	uintptr_t base;

	return odebug_opt.origins || odebug_on_stack((uintptr_t)addr, &base) ||
	       (initialised && d == &odebug_rwlock_descr && odebug_glibc_rwlock_tracked_mode(addr));
}

/*
 * The state of @addr's tracker of @d with the hold glibc's words show, as
 * BUILTIN_PEEK would tell it after a sync: one step under the bucket lock.
 */
static int synced_state(void *addr, const struct debug_obj_descr *d, bool initialised)
{
	if (tracker_exact(addr, d, initialised))
		return odebug_builtin_step(addr, d, BUILTIN_PEEK, 0);
	return step_locked(addr, d, BUILTIN_SYNC, 0);
}

/*
 * Before the table decides on a mutex whose hold glibc keeps: its tracker
 * takes the hold the words show (BUILTIN_SYNC).  Not in tracked mode: that
 * tracker is exact, and before an init on the stack the words are
 * whatever the frame held last.  Returns the state it leaves.
 */
int odebug_builtin_mutex_sync(void *addr)
{
	return synced_state(addr, &odebug_mutex_descr, false);
}

/*
 * Track @addr by @track, or on the stack (one thread's) by an on-stack
 * init, which keeps the stack notice away.
 */
static void track_at(void *addr, const struct debug_obj_descr *d,
		     void (*track)(void *, const struct debug_obj_descr *))
{
	uintptr_t base;

	mutex_tracked(d);
	odebug_stack_prepare();
	if (odebug_on_stack((uintptr_t)addr, &base))
		debug_object_init_on_stack(addr, d);
	else
		track(addr, d);
}

/* Track @addr as initialised. */
static void init_quiet(void *addr, const struct debug_obj_descr *d)
{
	track_at(addr, d, debug_object_init);
}

/*
 * Track a statically initialised object found untracked.  Two threads may
 * find it so at once (the first uses of a PTHREAD_RWLOCK_INITIALIZER lock):
 * debug_object_assert_init() makes the tracker under the bucket lock only
 * if there is still none, where an init would say "init active" once the
 * other thread holds it.
 */
static void track_static(void *addr, const struct debug_obj_descr *d)
{
	track_at(addr, d, debug_object_assert_init);
}

/* A misuse no public call describes: "<op> <state>", the tracker as it is. */
void odebug_builtin_misuse(void *addr, const struct debug_obj_descr *d, const char *opname)
{
	struct odebug_bucket *b = odebug_bucket_of((uintptr_t)addr);
	struct odebug_tracker *t;
	struct odebug_snapshot o = {
		.addr = (uintptr_t)addr, .descr = d, .astate = 0,
		.state = ODEBUG_STATE_NOTAVAILABLE,
	};
	enum debug_obj_state state;
	uint64_t w;

	odebug_bucket_lock(b);
	t = odebug_lookup(b, (uintptr_t)addr);
	state = odebug_tracker_read(t, &w);
	if (state != ODEBUG_STATE_NOTAVAILABLE && odebug_word_descr(w) == d) {
		o.astate = t->astate;
		o.state = state;
		o.init_stack = odebug_tracker_origin(t, ODEBUG_ORIGIN_INIT);
		o.activate_stack = odebug_tracker_origin(t, ODEBUG_ORIGIN_ACTIVATE);
	}
	odebug_bucket_unlock(b);
	odebug_report(&o, opname);
}

/*
 * An untracked object in use: a static initializer (or one initialised
 * before we started) is tracked silently; anything else is "activate not
 * available", and the fixup tracks it.  Then the step is made.
 */
static int untracked(void *addr, const struct debug_obj_descr *d,
		     enum odebug_builtin_op op, unsigned int arg, const char *opname)
{
	if (over_limit())
		return ODEBUG_STATE_NOTAVAILABLE;
	if (d->is_static_object(addr)) {
		track_static(addr, d);
	} else if (d == &odebug_cond_descr) {	/* the use's own word: "wait not available" */
		odebug_builtin_absent(addr, d, opname);
		init_quiet(addr, d);
	} else {
		debug_object_activate(addr, d);
	}
	/* Tracking looked up this thread's stack: the mutex's mode may be known now. */
	if (d == &odebug_mutex_descr && (op == BUILTIN_LOCK || op == BUILTIN_USE))
		op = odebug_glibc_tracked_mode(addr) ? BUILTIN_LOCK : BUILTIN_USE;
	else if (d == &odebug_rwlock_descr && (op == BUILTIN_RDLOCK || op == BUILTIN_USE))
		op = odebug_glibc_rwlock_tracked_mode(addr) ? BUILTIN_RDLOCK : BUILTIN_USE;
	return odebug_builtin_step(addr, d, op, arg);
}

/* --- the events ------------------------------------------------------ */

/*
 * Before *_init: re-initialising a held or waited-on object is "init
 * active" (the fixup then resets the tracker, as glibc resets the object).
 * Not reported: re-initialising a destroyed object (POSIX allows it), and
 * in a fork() child a lock that was held at the fork (allocators do it),
 * unless glibc shows this very thread holding it.
 */
void odebug_builtin_object_init(void *addr, const struct debug_obj_descr *d)
{
	uintptr_t a = (uintptr_t)addr;
	int state;

	if (d == &odebug_mutex_descr)
		odebug_orphan_forget(a);	/* a new mutex owes no unlock */
	/* Most inits are of fresh memory, where the map proves no tracker starts. */
	if (!odebug_range_may_hold(a, a + 1))
		state = ODEBUG_STATE_NOTAVAILABLE;
	else if (d == &odebug_mutex_descr || d == &odebug_rwlock_descr)
		state = synced_state(addr, d, false);
	else
		state = odebug_builtin_step(addr, d, BUILTIN_PEEK, 0);

	switch (state) {
	case ODEBUG_STATE_FOREIGN:
		return;
	case ODEBUG_STATE_NOTAVAILABLE:
		if (over_limit())
			return;
		break;
	case ODEBUG_STATE_DESTROYED:
		debug_object_free(addr, d);
		break;
	case ODEBUG_STATE_ACTIVE:
		if (odebug_load(&forked) &&
		    (d != &odebug_mutex_descr ||
		     odebug_glibc_mutex_owner_word(addr) != odebug_builtin_self_tid()))
			odebug_builtin_step(addr, d, BUILTIN_RESET, 0);
		break;
	default:
		break;
	}
	init_quiet(addr, d);
}

/* Before *_destroy: held or waited on is "destroy active". */
void odebug_builtin_object_destroy(void *addr, const struct debug_obj_descr *d)
{
	int state;

	/* An rwlock that nobody holds: synced and destroyed in one step. */
	if (d == &odebug_rwlock_descr && !tracker_exact(addr, d, true))
		state = step_locked(addr, d, BUILTIN_DESTROY, 0);
	else
		state = odebug_builtin_step(addr, d, BUILTIN_PEEK, 0);

	if (state != ODEBUG_STATE_FOREIGN && state != ODEBUG_STATE_NOTAVAILABLE &&
	    state != STATE_DESTROYED_NOW)
		debug_object_destroy(addr, d);	/* the reports, and tracked mode's change */
}

/*
 * After a successful lock (@op BUILTIN_LOCK or BUILTIN_RDLOCK).  Already ACTIVE is
 * not reported: glibc just granted the lock, so a release went unseen.
 */
static __attribute__((noinline)) void lock_slow(void *addr, const struct debug_obj_descr *d,
						 enum odebug_builtin_op op, int state)
{
	int saved = errno;

	if (state == ODEBUG_STATE_NOTAVAILABLE)
		untracked(addr, d, op, 0, "activate");
	else	/* DESTROYED */
		debug_object_activate(addr, d);
	errno = saved;
}

/*
 * The lock cache (builtin.h): after a mutex's lock in glibc-keeps-the-hold
 * mode, or an rwlock's write lock (whose hold is its tracker's, by
 * compare-and-swap, unless origins=1), left the tracker INACTIVE or
 * ACTIVE, remember it; in tracked mode, forget any entry of this address
 * (its hits would skip the tracker's steps).
 */
static void mcache_update(void *addr, const struct debug_obj_descr *d, bool tracked)
{
	struct odebug_tracker **e = odebug_mcache_entry((uintptr_t)addr), *t;
	uint64_t *key = d == &odebug_mutex_descr ? &odebug_mutex_key : &odebug_rwlock_key;
	uint64_t w;

	if (tracked) {
		if (*e && odebug_word_addr(odebug_tracker_word(*e)) == (uintptr_t)addr)
			*e = NULL;
		return;
	}
	t = odebug_peek((uintptr_t)addr, &w);
	if (!t || odebug_word_descr(w) != d)
		return;
	if (!odebug_load(key))
		odebug_store(key, odebug_settled_key(odebug_word_slot(w)));
	*e = t;
}

void odebug_builtin_lock(void *addr, const struct debug_obj_descr *d, enum odebug_builtin_op op)
{
	bool tracked = true;
	int state;

	if (d == &odebug_mutex_descr) {
		tracked = odebug_glibc_tracked_mode(addr);
		if (!tracked)
			op = BUILTIN_USE;	/* glibc's words keep the hold: nothing to write */
	} else if (d == &odebug_rwlock_descr && op == BUILTIN_RDLOCK) {
		tracked = odebug_glibc_rwlock_tracked_mode(addr);
		if (!tracked)
			op = BUILTIN_USE;	/* glibc's __readers keeps the read hold */
	}
	if (op == BUILTIN_USE)
		state = step(addr, d, BUILTIN_USE, 0);
	else if (op == BUILTIN_LOCK)
		state = step(addr, d, BUILTIN_LOCK, 0);
	else
		state = step(addr, d, BUILTIN_RDLOCK, 0);

	if (unlikely(state != ODEBUG_STATE_INIT && state != ODEBUG_STATE_INACTIVE &&
		     state != ODEBUG_STATE_ACTIVE && state != ODEBUG_STATE_FOREIGN)) {
		lock_slow(addr, d, op, state);
		if (d == &odebug_mutex_descr)
			tracked = odebug_glibc_tracked_mode(addr);	/* the stack may be known now */
		else if (op == BUILTIN_USE)
			tracked = odebug_glibc_rwlock_tracked_mode(addr);
	}
	if (d == &odebug_mutex_descr)
		mcache_update(addr, d, tracked);
	else if (d == &odebug_rwlock_descr && op != BUILTIN_LOCK)
		odebug_rwlock_seal_at(addr, tracked);
	else if (d == &odebug_rwlock_descr)
		mcache_update(addr, d, odebug_opt.origins);
}

/*
 * Any other use: waits, wakes, barrier arrivals, failed locks (@op
 * BUILTIN_PEEK).  Untracked objects are taken up as static ones; destroyed
 * ones are reported as "@opname destroyed".
 */
void odebug_builtin_use(void *addr, const struct debug_obj_descr *d, enum odebug_builtin_op op,
		  unsigned int arg, const char *opname)
{
	int state = odebug_builtin_step(addr, d, op, arg);

	if (likely(state != ODEBUG_STATE_NOTAVAILABLE && state != ODEBUG_STATE_DESTROYED))
		return;
	if (state == ODEBUG_STATE_NOTAVAILABLE) {
		if (op != BUILTIN_WAKE_ONE && op != BUILTIN_WAKE_ALL)
			untracked(addr, d, op, arg, opname);
		else if (!d->is_static_object(addr))	/* nobody waits: only memory that is none */
			untracked(addr, d, BUILTIN_PEEK, 0, opname);
		return;
	}
	if (op == BUILTIN_PEEK)
		debug_object_activate(addr, d);	/* a lock refused: "activate destroyed" */
	else
		odebug_builtin_misuse(addr, d, opname);
}

/*
 * sem_post() is async-signal-safe: a handler may interrupt it at any
 * instruction and leave by siglongjmp, and any thread may post again.
 * So nothing of ours (a bucket lock, the guard, the report lock, the
 * start lock) may be held where an asynchronous signal can be taken.  A
 * post with nothing to change (nobody waits: INIT or INACTIVE, or not a
 * semaphore of ours) is one lockless read of the tracker's word; the rest
 * (a waiter to take off, a destroyed semaphore's report, the start) runs
 * with every asynchronous signal blocked, by the raw system call (glibc's
 * wrapper keeps its own two signals open, and may be interposed).
 */
#define SYNC_SIGNALS	((1ull << (SIGSEGV - 1)) | (1ull << (SIGBUS - 1)) | \
			 (1ull << (SIGFPE - 1)) | (1ull << (SIGILL - 1)) | \
			 (1ull << (SIGTRAP - 1)) | (1ull << (SIGSYS - 1)))

/* Faults stay deliverable: the kernel kills a thread that blocked its own. */
static uint64_t async_signals_block(void)
{
	uint64_t block = ~SYNC_SIGNALS, old = 0;

	syscall(SYS_rt_sigprocmask, SIG_BLOCK, &block, &old, sizeof(block));
	return old;
}

static void async_signals_restore(uint64_t old)
{
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, sizeof(old));
}

/* Lockless: does a post leave this tracker as it is? */
static bool post_changes_nothing(void *addr)
{
	uint64_t w;
	struct odebug_tracker *t = odebug_peek((uintptr_t)addr, &w);
	unsigned int state;

	if (!t)		/* untracked, or a walk that gave up */
		return !odebug_range_may_hold((uintptr_t)addr, (uintptr_t)addr + 1);
	if (odebug_word_descr(w) != &odebug_sem_descr)
		return true;	/* another owner's object (ODEBUG_STATE_FOREIGN) */
	state = odebug_word_state(w);
	return state == ODEBUG_STATE_INIT || state == ODEBUG_STATE_INACTIVE ||
	       odebug_word_freed(w);
}

/* Before sem_post(), with the semaphore family on; errno kept. */
void odebug_builtin_post(void *addr)
{
	uint64_t mask;
	int saved;

	if (odebug_tls.guard)
		return;
	if (likely(odebug_load(&odebug_mode) == ODEBUG_MODE_ON) && post_changes_nothing(addr))
		return;
	saved = errno;
	mask = async_signals_block();
	if (odebug_builtin_active(ODEBUG_BUILTIN_SEM))
		odebug_builtin_use(addr, &odebug_sem_descr, BUILTIN_WAKE_ONE, 0, "post");
	async_signals_restore(mask);
	errno = saved;
}

/*
 * An interposer's cold entry (builtin.h): not started yet, under the
 * guard, or the caller's frames may have returned over an on-stack
 * object.  False: pass the call through.  errno is kept.
 */
bool odebug_builtin_enter_slow(uintptr_t sp)
{
	int saved;

	if (!odebug_interposer_ready())
		return false;
	if (sp > odebug_tls.onstack_low) {
		saved = errno;
		odebug_stack_check_returned(sp);
		errno = saved;
	}
	return true;
}

static void fork_child(void)
{
	odebug_store(&forked, 1);
	odebug_tls.self_tid = 0;
	odebug_orphan_fork_child();
}

/* Decided on (the registry's init): which families, the fork handler. */
static void builtin_init(void)
{
	int on = (odebug_opt.check_pthread ? ODEBUG_BUILTIN_PTHREAD : 0) |
		 (odebug_opt.check_sem ? ODEBUG_BUILTIN_SEM : 0);


	if (!on)
		return;
	odebug_rwlock_seals_init();
	pthread_atfork(NULL, NULL, fork_child);
	__atomic_fetch_or(&odebug_builtin_on, on, __ATOMIC_RELAXED);
}

/* The mode changed (registry.h): the interposers' fast paths follow it. */
static void builtin_mode(bool on)
{
	odebug_rwlock_seals_break();
	if (on)
		__atomic_fetch_or(&odebug_builtin_on, ODEBUG_BUILTIN_STARTED, __ATOMIC_RELEASE);
	else
		__atomic_fetch_and(&odebug_builtin_on, ~ODEBUG_BUILTIN_STARTED, __ATOMIC_RELEASE);
}

/* The report's words for a built-in object: its state, and glibc's holder. */
static bool builtin_state(const struct odebug_snapshot *o, struct report_state *s)
{
	return odebug_report_state(o, odebug_builtin_owner(o), s);
}

ODEBUG_CHECKER(builtin) = {
	.name = "pthread",
	.init = builtin_init,
	.mode = builtin_mode,
	.state = builtin_state,
	.origin_words = odebug_report_origin_words,
	.sync_one = odebug_builtin_sync_one,
	.sync_range = odebug_builtin_sync_slow,
	.sync_exit = odebug_builtin_sync_exit,
	.left = odebug_rwlock_seals_break,
};
