/* SPDX-License-Identifier: MIT */
/*
 * builtin.c - the built-in types' descriptors and state logic, used by the
 * interposers in preload/ (pthread-*.c, sem.c, threads.c).
 *
 * Held, read-held and waited-on objects are ACTIVE, so the free check, the
 * reports, suppressions, origins and statistics apply unchanged.  A mutex
 * or rwlock write lock and unlock is one compare-and-swap of the tracker's
 * word, without the bucket lock (fast_step()); the other hot transitions
 * (read locks, wait, wake) are one bucket lock each; the rest
 * goes through the public calls, whose reports use the kernel's words
 * ("init active", "destroy active", "activate destroyed", "free active").
 *
 * glibc's own structures answer what the table cannot know: whether a
 * mutex is locked and by whom (__lock, __owner), whether memory holds a
 * static initializer, how many threads a barrier waits for.  They are only
 * read, never written.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "builtin.h"

int odebug_builtin_on;

/*
 * Trackers made for built-in objects stop at half of pool_max in use: a
 * program with millions of mutexes must leave room for its annotations.
 */
static unsigned long builtin_limit;
static int forked;	/* in a fork() child: locks held at the fork may be re-initialised */
static __thread int self_tid __attribute__((tls_model("initial-exec")));

/* This thread's id, cached (glibc's mutex __owner holds the same). */
int odebug_b_self(void)
{
	if (unlikely(!self_tid))
		self_tid = odebug_gettid();
	return self_tid;
}

static bool over_limit(void)
{
	static int said;

	if (likely(odebug_load(&odebug_trackers_out) < builtin_limit))
		return false;
	if (!__atomic_exchange_n(&said, 1, __ATOMIC_ACQ_REL))
		odebug_message("built-in objects use half of pool_max trackers: "
			       "new mutexes, locks and semaphores are not tracked from now on",
			       (char *)NULL);
	return true;
}

/* --- glibc's structures (x86-64 and the other LP64 layouts, 2.34+) --- */

static const pthread_mutex_t *as_mutex(const void *p) { return p; }

/*
 * A mutex nobody initialised through us: a static initializer (normal,
 * recursive, error-checking or adaptive), zero-filled memory, or one
 * initialised before libodebug started.  Garbage fails this: a kind glibc
 * never writes, or robust-list links on a mutex that is not robust.
 */
static bool mutex_is_static(void *addr)
{
	const pthread_mutex_t *m = as_mutex(addr);
	int kind = m->__data.__kind;

	if (kind & ~0x3f3)
		return false;
	return (kind & 16)	/* robust: the list links are in use */ ||
	       (!m->__data.__list.__prev && !m->__data.__list.__next);
}

/* PTHREAD_RWLOCK_INITIALIZER and its writer-preferring variant, or init'ed. */
static bool rwlock_is_static(void *addr)
{
	const pthread_rwlock_t *rw = addr;
	static const unsigned char zero[7];

	return rw->__data.__flags <= 2 && rw->__data.__shared <= 1 &&
	       !rw->__data.__pad2 && !rw->__data.__pad3 && !rw->__data.__pad4 &&
	       !memcmp(rw->__data.__pad1, zero, sizeof(zero));
}

/* No initializer, and a plain int: any value may be an initialised one. */
static bool always_static(void *addr)
{
	(void)addr;
	return true;
}

/* glibc's struct pthread_barrier: in, current_round, count, shared, out. */
struct glibc_barrier {
	unsigned int in, current_round, count;
	int shared;
	unsigned int out;
};

/*
 * Which arrival of its round a barrier wait is (0: the last, which releases
 * them all), decided under the bucket lock.  Counted by the tracker while
 * it has waiters: glibc's own count (@seen, read before the wait) misses
 * an arrival that has not reached glibc's increment yet, so two threads
 * arriving at once both saw themselves first, and a barrier destroyed
 * right after its last wait was "destroy active" (1 run in 3 of 20,000
 * rounds).  After a round, the next arrival is the first; glibc's count is
 * used only for a tracker that has counted nothing (INIT: just
 * initialised, or tracked again after the free check dropped it while
 * threads waited).
 */
static unsigned int barrier_arrival(void *addr, int state, unsigned int waiting,
				    unsigned int seen)
{
	const struct glibc_barrier *b = addr;
	unsigned int count = __atomic_load_n(&b->count, __ATOMIC_RELAXED), n;

	if (state == ODEBUG_STATE_ACTIVE)
		n = waiting + 1;
	else if (state == ODEBUG_STATE_INACTIVE)
		n = 1;
	else
		n = seen ? seen : count;
	return count && n < count ? n : 0;
}

/* No initializer: only pthread_barrier_init (count >= 1) makes one. */
static bool barrier_is_static(void *addr)
{
	const struct glibc_barrier *b = addr;

	return b->count && (b->shared == 0 || b->shared == 128);
}

/* glibc's struct new_sem (LP64): value and waiters, private, pad. */
struct glibc_sem {
	unsigned long data;
	int private;
	int pad;
};

static bool sem_is_static(void *addr)
{
	const struct glibc_sem *s = addr;

	return (s->private == 0 || s->private == 128) && !s->pad;
}

/* --- fixups: they keep the table true to the object; never touch it --- */

/* Re-initialised while held or waited on: glibc is about to reset it. */
static bool fixup_init(void *addr, enum debug_obj_state state)
{
	(void)state;
	return odebug_builtin_step(addr, NULL, BOP_RESET, 0) != ODEBUG_STATE_NOTAVAILABLE;
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

DESCR(odebug_mutex_descr, "pthread_mutex", mutex_is_static);
DESCR(odebug_rwlock_descr, "pthread_rwlock", rwlock_is_static);
DESCR(odebug_spin_descr, "pthread_spinlock", always_static);
DESCR(odebug_cond_descr, "pthread_cond", always_static);
DESCR(odebug_barrier_descr, "pthread_barrier", barrier_is_static);
DESCR(odebug_sem_descr, "sem", sem_is_static);

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
fast_step(void *addr, const struct debug_obj_descr *d, enum odebug_bop op)
{
	struct odebug_tracker *t;
	unsigned int state;
	uint64_t w;

	if (unlikely(odebug_opt.origins))
		return -1;
	t = odebug_peek((uintptr_t)addr, &w);
	if (!t || odebug_descr_at(odebug_word_slot(w)) != d)
		return -1;
	state = odebug_word_state(w);
	switch (state) {
	case ODEBUG_STATE_INIT:
	case ODEBUG_STATE_INACTIVE:
		if (op == BOP_UNLOCK)
			return (int)state;	/* not held: no change */
		if (w & ODEBUG_WORD_BUSY)
			return -1;
		return odebug_tracker_cas(t, w, odebug_word_set(w, ODEBUG_STATE_ACTIVE, 0)) ?
		       (int)state : -1;
	case ODEBUG_STATE_ACTIVE:
		if (op == BOP_LOCK)
			return (int)state;	/* a release we missed: no change */
		if (w & ODEBUG_WORD_BUSY)
			return -1;
		return odebug_tracker_cas(t, w, odebug_word_set(w, ODEBUG_STATE_INACTIVE, 0)) ?
		       (int)state : -1;
	case ODEBUG_STATE_DESTROYED:
		return (int)state;	/* the locked step changes nothing either */
	default:		/* NONE: a tracker being made */
		return -1;
	}
}

/* The step under the bucket lock: out of line, the lockless one's frame stays small. */
static __attribute__((noinline)) int
step_locked(void *addr, const struct debug_obj_descr *d, enum odebug_bop op, unsigned int arg)
{
	struct odebug_bucket *b = odebug_bucket_of((uintptr_t)addr);
	struct odebug_tracker *t;
	uint32_t origin = 0;
	unsigned int astate;
	int state, next;
	uint64_t w;

	if (unlikely(odebug_opt.origins) && (op == BOP_LOCK || op == BOP_RDLOCK || op == BOP_WAIT))
		origin = odebug_origin_here();
	odebug_bucket_lock(b);
	t = odebug_lookup(b, (uintptr_t)addr);
	if (!t) {
		odebug_bucket_unlock(b);
		return ODEBUG_STATE_NOTAVAILABLE;
	}
again:
	w = odebug_tracker_word(t);
	if (d ? odebug_descr_at(odebug_word_slot(w)) != d :
		!is_builtin(odebug_descr_at(odebug_word_slot(w)))) {
		odebug_bucket_unlock(b);
		return ODEBUG_STATE_FOREIGN;
	}
	state = next = (int)odebug_word_state(w);
	astate = t->astate;
	switch (op) {
	case BOP_PEEK:
		break;
	case BOP_LOCK:
	case BOP_RDLOCK:
	case BOP_WAIT:
		if (state == ODEBUG_STATE_ACTIVE) {
			if (op != BOP_LOCK)
				astate++;
			break;
		}
		if (state == ODEBUG_STATE_DESTROYED)
			break;
		next = ODEBUG_STATE_ACTIVE;
		astate = op != BOP_LOCK;
		break;
	case BOP_ARRIVE:	/* @arg: glibc's count of arrivals with ours, 0: the last */
		if (state == ODEBUG_STATE_DESTROYED)
			break;
		astate = barrier_arrival(addr, state, astate, arg);
		next = astate ? ODEBUG_STATE_ACTIVE : ODEBUG_STATE_INACTIVE;
		break;
	case BOP_UNLOCK:
	case BOP_RDUNLOCK:
	case BOP_WAKE_ONE:
		if (state != ODEBUG_STATE_ACTIVE)
			break;
		if (op != BOP_UNLOCK && astate > 1) {
			astate--;
			break;
		}
		/* fall through */
	case BOP_WAKE_ALL:
		if (state != ODEBUG_STATE_ACTIVE)
			break;
		astate = 0;
		next = ODEBUG_STATE_INACTIVE;
		break;
	case BOP_RESET:
		if (state == ODEBUG_STATE_DESTROYED)
			break;
		astate = 0;
		next = ODEBUG_STATE_INIT;
		break;
	}
	if (next != state || astate != t->astate) {
		/* A lockless lock or unlock may have changed the word: decide again. */
		if (!odebug_tracker_cas(t, w, odebug_word_set(w, (unsigned int)next, astate)))
			goto again;
		t->astate = astate;
		if (next == ODEBUG_STATE_ACTIVE && state != ODEBUG_STATE_ACTIVE && op != BOP_ARRIVE)
			odebug_tracker_set_origin(t, ODEBUG_ORIGIN_ACTIVATE, origin);
	}
	odebug_bucket_unlock(b);
	return state;
}

/*
 * Apply @op to the tracker of @addr; @d NULL matches any built-in type.
 * Returns the state before, ODEBUG_STATE_NOTAVAILABLE when untracked, or
 * ODEBUG_STATE_FOREIGN when the address is tracked with another
 * descriptor (a user's annotation of a struct whose first member is the
 * lock): that object is left to its owner.
 */
static inline __attribute__((always_inline)) int
step(void *addr, const struct debug_obj_descr *d, enum odebug_bop op, unsigned int arg)
{
	int state;

	if ((op == BOP_LOCK || op == BOP_UNLOCK) && d) {
		state = fast_step(addr, d, op);
		if (likely(state >= 0))
			return state;
	}
	return step_locked(addr, d, op, arg);
}

/* The same, out of line, for every other caller. */
int odebug_builtin_step(void *addr, const struct debug_obj_descr *d,
			enum odebug_bop op, unsigned int arg)
{
	return step(addr, d, op, arg);
}

/* Track @addr as initialised, on-stack when it is (no stack note). */
static void init_quiet(void *addr, const struct debug_obj_descr *d)
{
	uintptr_t base;

	odebug_stack_prepare();
	if (odebug_on_stack((uintptr_t)addr, &base))
		debug_object_init_on_stack(addr, d);
	else
		debug_object_init(addr, d);
}

/*
 * Track a statically initialised object found untracked.  Two threads may
 * find it so at once (the first uses of a PTHREAD_RWLOCK_INITIALIZER lock):
 * debug_object_assert_init() makes the tracker under the bucket lock only
 * if there is still none, where an init would say "init active" once the
 * other thread holds it.  On the stack (one thread's), an on-stack init
 * keeps the stack notice away.
 */
static void track_static(void *addr, const struct debug_obj_descr *d)
{
	uintptr_t base;

	odebug_stack_prepare();
	if (odebug_on_stack((uintptr_t)addr, &base))
		debug_object_init_on_stack(addr, d);
	else
		debug_object_assert_init(addr, d);
}

/* A misuse no public call describes: "<op> <state>", the tracker as it is. */
void odebug_b_misuse(void *addr, const struct debug_obj_descr *d, const char *opname)
{
	struct odebug_bucket *b = odebug_bucket_of((uintptr_t)addr);
	struct odebug_tracker *t;
	struct odebug_snapshot o = {
		.addr = (uintptr_t)addr, .descr = d, .astate = 0,
		.state = ODEBUG_STATE_NOTAVAILABLE,
	};

	odebug_bucket_lock(b);
	t = odebug_lookup(b, (uintptr_t)addr);
	if (t && odebug_tracker_descr(t) == d) {
		o.astate = t->astate;
		o.state = odebug_tracker_state(t);
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
		     enum odebug_bop op, unsigned int arg)
{
	if (over_limit())
		return ODEBUG_STATE_NOTAVAILABLE;
	if (d->is_static_object(addr))
		track_static(addr, d);
	else
		debug_object_activate(addr, d);
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
void odebug_b_init(void *addr, const struct debug_obj_descr *d)
{
	int state = odebug_builtin_step(addr, d, BOP_PEEK, 0);

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
		     as_mutex(addr)->__data.__owner != odebug_b_self()))
			odebug_builtin_step(addr, d, BOP_RESET, 0);
		break;
	default:
		break;
	}
	init_quiet(addr, d);
}

/* Before *_destroy: held or waited on is "destroy active". */
void odebug_b_destroy(void *addr, const struct debug_obj_descr *d)
{
	int state = odebug_builtin_step(addr, d, BOP_PEEK, 0);

	if (state != ODEBUG_STATE_FOREIGN && state != ODEBUG_STATE_NOTAVAILABLE)
		debug_object_destroy(addr, d);
}

/*
 * pthread_mutex_destroy: glibc refuses a held mutex (EBUSY), so the table
 * follows glibc's verdict: destroyed only if it was.  @before is the
 * state peeked before the call.
 */
void odebug_b_mutex_destroy(void *addr, int result, int before)
{
	const struct debug_obj_descr *d = &odebug_mutex_descr;

	if (before == ODEBUG_STATE_FOREIGN || before == ODEBUG_STATE_NOTAVAILABLE)
		return;
	if (result == 0 && before == ODEBUG_STATE_ACTIVE)	/* a release we missed */
		odebug_builtin_step(addr, d, BOP_RESET, 0);
	if (result == 0 || before == ODEBUG_STATE_ACTIVE)
		debug_object_destroy(addr, d);
}

/*
 * After a successful lock (@op BOP_LOCK or BOP_RDLOCK).  Already ACTIVE is
 * not reported: glibc just granted the lock, so a release went unseen.
 */
static __attribute__((noinline)) void lock_slow(void *addr, const struct debug_obj_descr *d,
						 enum odebug_bop op, int state)
{
	int saved = errno;

	if (state == ODEBUG_STATE_NOTAVAILABLE)
		untracked(addr, d, op, 0);
	else	/* DESTROYED */
		debug_object_activate(addr, d);
	errno = saved;
}

void odebug_b_lock(void *addr, const struct debug_obj_descr *d, enum odebug_bop op)
{
	int state = op == BOP_LOCK ? step(addr, d, BOP_LOCK, 0) : step(addr, d, BOP_RDLOCK, 0);

	if (likely(state == ODEBUG_STATE_INIT || state == ODEBUG_STATE_INACTIVE ||
		   state == ODEBUG_STATE_ACTIVE || state == ODEBUG_STATE_FOREIGN))
		return;
	lock_slow(addr, d, op, state);
}

/*
 * Any other use: waits, wakes, barrier arrivals, failed locks (@op
 * BOP_PEEK).  Untracked objects are taken up as static ones; destroyed
 * ones are reported as "@opname destroyed".
 */
void odebug_b_use(void *addr, const struct debug_obj_descr *d, enum odebug_bop op,
		  unsigned int arg, const char *opname)
{
	int state = odebug_builtin_step(addr, d, op, arg);

	if (likely(state != ODEBUG_STATE_NOTAVAILABLE && state != ODEBUG_STATE_DESTROYED))
		return;
	if (state == ODEBUG_STATE_NOTAVAILABLE) {
		if (op != BOP_WAKE_ONE && op != BOP_WAKE_ALL)	/* nobody waits: nothing to track */
			untracked(addr, d, op, arg);
		return;
	}
	if (op == BOP_PEEK)
		debug_object_activate(addr, d);	/* a lock refused: "activate destroyed" */
	else
		odebug_b_misuse(addr, d, opname);
}

/* EOWNERDEAD: the dead owner's hold ends, ours begins. */
void odebug_b_owner_died(void *addr, const struct debug_obj_descr *d)
{
	odebug_builtin_step(addr, d, BOP_RESET, 0);
	odebug_b_lock(addr, d, BOP_LOCK);
}

/*
 * Before a mutex unlock.  glibc's __lock is zero when nobody holds it:
 * "unlock" of it is reported, whatever the table says.  Otherwise the
 * hold ends (a lock taken before we started ends silently).
 */
void odebug_b_mutex_unlock(void *addr)
{
	const pthread_mutex_t *m = as_mutex(addr);

	if (unlikely(!__atomic_load_n(&m->__data.__lock, __ATOMIC_RELAXED))) {
		int saved = errno;

		odebug_b_misuse(addr, &odebug_mutex_descr, "unlock");
		errno = saved;
		return;
	}
	/* A recursive mutex relocked by its owner: only the last unlock counts. */
	if ((m->__data.__kind & PTHREAD_MUTEX_RECURSIVE_NP) && m->__data.__count > 1)
		return;
	step(addr, &odebug_mutex_descr, BOP_UNLOCK, 0);
}

/* Before an rwlock unlock: the writer is the one glibc names. */
void odebug_b_rwlock_unlock(void *addr)
{
	const pthread_rwlock_t *rw = addr;
	bool writer = (int)__atomic_load_n(&rw->__data.__cur_writer, __ATOMIC_RELAXED) ==
		      odebug_b_self();

	odebug_builtin_step(addr, &odebug_rwlock_descr, writer ? BOP_UNLOCK : BOP_RDUNLOCK, 0);
}

/*
 * pthread_cond_wait and friends.  glibc releases and retakes the mutex
 * inside, unseen: the hold ends before the call and begins again after.
 * The caller must hold the mutex: glibc's __owner says whether it does.
 */
void odebug_b_cond_wait_begin(void *cond, void *mutex)
{
	const pthread_mutex_t *m = as_mutex(mutex);

	if (unlikely(!__atomic_load_n(&m->__data.__lock, __ATOMIC_RELAXED) ||
		     m->__data.__owner != odebug_b_self()))
		odebug_b_misuse(mutex, &odebug_mutex_descr, "cond_wait non-owner");
	odebug_b_use(cond, &odebug_cond_descr, BOP_WAIT, 0, "wait");
	if (!((m->__data.__kind & PTHREAD_MUTEX_RECURSIVE_NP) && m->__data.__count > 1))
		odebug_builtin_step(mutex, &odebug_mutex_descr, BOP_UNLOCK, 0);
}

/* After the wait (returned, timed out, or cancelled): glibc holds the mutex again. */
void odebug_b_cond_wait_end(void *cond, void *mutex)
{
	int saved = errno;

	odebug_builtin_step(mutex, &odebug_mutex_descr, BOP_LOCK, 0);
	odebug_builtin_step(cond, &odebug_cond_descr, BOP_WAKE_ONE, 0);
	errno = saved;
}

/* --- reports and process life ---------------------------------------- */

/*
 * The owner of a held mutex or write-held rwlock, as glibc records it (0:
 * none shown).  Read with process_vm_readv: the memory may be gone by the
 * time an exit-time report looks.
 */
int odebug_builtin_owner(const struct odebug_snapshot *o)
{
	pthread_mutex_t m;
	pthread_rwlock_t rw;
	struct iovec local, remote = { (void *)o->addr, 0 };

	if (o->state != ODEBUG_STATE_ACTIVE)
		return 0;
	if (o->descr == &odebug_mutex_descr) {
		local = (struct iovec){ &m, sizeof(m) };
		remote.iov_len = sizeof(m);
		if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) != (ssize_t)sizeof(m))
			return 0;
		return m.__data.__lock ? m.__data.__owner : 0;
	}
	if (o->descr == &odebug_rwlock_descr) {
		local = (struct iovec){ &rw, sizeof(rw) };
		remote.iov_len = sizeof(rw);
		if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) != (ssize_t)sizeof(rw))
			return 0;
		return (int)rw.__data.__cur_writer;
	}
	return 0;
}

static void fork_child(void)
{
	odebug_store(&forked, 1);
	self_tid = 0;
}

/* From setup(), once on: which families, the bound, the fork handler. */
void odebug_builtin_init(void)
{
	int on = (odebug_opt.check_pthread ? ODEBUG_BUILTIN_PTHREAD : 0) |
		 (odebug_opt.check_sem ? ODEBUG_BUILTIN_SEM : 0);

	builtin_limit = odebug_opt.pool_max / 2;
	if (!on)
		return;
	pthread_atfork(NULL, NULL, fork_child);
	odebug_store(&odebug_builtin_on, on);
}
