/* SPDX-License-Identifier: MIT */
/*
 * builtin-glibc.c - what glibc's own structures say about a built-in
 * object (glibc.h has their layouts): whether memory holds a static
 * initializer, whether a mutex is held and by whom, how many threads a
 * barrier waits for, whether an unlock is checked by glibc; the free
 * check's sync of mutex trackers from those words, and a report's owner
 * line.  Only read, never written (an rwlock's seal, in a word glibc never
 * uses, is builtin.c's).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "builtin.h"

/*
 * A mutex nobody initialised through us: a static initializer (normal,
 * recursive, error-checking or adaptive), zero-filled memory, or one
 * initialised before libodebug started.  Garbage fails this: a kind glibc
 * never writes, or robust-list links on a mutex that is not robust.
 */
bool odebug_glibc_mutex_is_static(void *addr)
{
	int kind = odebug_glibc_mutex_kind(addr);

	if (kind & ~ODEBUG_GLIBC_MUTEX_KIND_BITS)
		return false;
	return (kind & ODEBUG_GLIBC_MUTEX_ROBUST)	/* robust: the list links are in use */ ||
	       odebug_glibc_mutex_unlinked(addr);
}

/*
 * Is the main thread @tid a zombie?  After its pthread_exit() the process
 * goes on and the kernel keeps the leader as a zombie until the last
 * thread ends: tgkill still finds it, but it runs nothing again.  The
 * state in /proc/self/task/TID/stat follows the last ')' (the name may
 * hold one; the numbers after it never do).  Raw calls, a stack buffer;
 * unreadable: not known to be one.
 */
static bool leader_zombie(int tid)
{
	char buf[128];
	const char *p;
	long n;

	n = odebug_read_task_file(tid, "stat", buf, sizeof(buf) - 1);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
}

/*
 * Is thread @tid of this process alive, one that can still run?  tgkill
 * with signal 0 sends nothing; a system call, made only for a holder
 * that looks live (a mutex's owner, a signal stack's or a running
 * thread's).  Every thread but the leader is gone for tgkill once it
 * exited; the leader is asked for its state.
 */
bool odebug_glibc_thread_alive(int tid)
{
	int saved, r, pid;

	if (tid == odebug_builtin_self_tid())
		return true;
	saved = errno;
	pid = getpid();
	r = (int)syscall(SYS_tgkill, pid, tid, 0);
	r = r == 0 || errno == EPERM;
	errno = saved;
	return r && !(tid == pid && leader_zombie(tid));
}

/*
 * Is the mutex held, as its words say?  Also a plausibility test: the
 * memory may no longer be a mutex (one never destroyed, its block reused
 * for other data, then freed or initialised again: the kernel's rule says
 * silence), so only a valid kind, a lock word of that kind (1 or 2 for
 * the normal kinds, the owner's thread id with the waiters bit for robust
 * and priority-inheriting ones, the ceiling plus 1 or 2 for
 * priority-protected ones), a user count glibc raised (__nusers: every
 * lock counts itself until its unlock) and an owner that is a live thread
 * of this process count.  Data that passes all of it is reported as a
 * held mutex: RELIABILITY.md says so.
 */
bool odebug_glibc_mutex_held(const void *addr)
{
	int kind = odebug_glibc_mutex_kind(addr);
	int lock = odebug_glibc_mutex_lock_word(addr);
	int owner = odebug_glibc_mutex_owner_word(addr);
	bool ok;

	if ((kind & ~ODEBUG_GLIBC_MUTEX_KIND_BITS) || !lock || owner <= 0 ||
	    !odebug_glibc_mutex_nusers(addr))
		return false;
	if (kind & ODEBUG_GLIBC_MUTEX_PP)	/* PRIO_PROTECT: the ceiling lives above bit 19 */
		lock &= ODEBUG_GLIBC_MUTEX_PP_LOCK_MASK;
	if (odebug_glibc_lock_is_tid(kind))	/* PI, robust: a thread id */
		ok = true;
	else
		ok = lock == 1 || lock == 2;
	return ok && odebug_glibc_thread_alive(owner);
}

/*
 * Where this mutex's hold is kept: true in its tracker (on the calling
 * thread's stack, process-shared, or origins=1; the header says why),
 * false in glibc's words.  Lock and unlock by the same thread agree.
 */
bool odebug_glibc_tracked_mode(const void *addr)
{
	uintptr_t base;

	return unlikely(odebug_opt.origins) ||
	       odebug_glibc_mutex_pshared(addr) ||
	       odebug_on_stack((uintptr_t)addr, &base);
}

/*
 * PTHREAD_RWLOCK_INITIALIZER and its writer-preferring variant, or init'ed.
 * __pad2 may hold a seal of ours (builtin.h) of any key: the bytes were an
 * rwlock read-locked before (released and reused, or copied by realloc()).
 */
bool odebug_glibc_rwlock_is_static(void *addr)
{
	uint64_t pad2 = odebug_glibc_rwlock_seal_word(addr);

	return odebug_glibc_rwlock_pads_clear(addr) && (!pad2 || odebug_rwlock_seal_shaped(pad2));
}

/* No initializer, and a plain int: any value may be an initialised one. */
bool odebug_glibc_always_static(void *addr)
{
	(void)addr;
	return true;
}

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
unsigned int odebug_glibc_barrier_arrival(void *addr, int state, unsigned int waiting,
				    unsigned int seen)
{
	const struct odebug_glibc_barrier *b = addr;
	unsigned int count = __atomic_load_n(&b->count, __ATOMIC_RELAXED), n;

	if (state == ODEBUG_STATE_ACTIVE)
		n = waiting + 1;
	else if (state == ODEBUG_STATE_INACTIVE)
		n = 1;
	else
		n = seen ? seen : count;
	return count && n < count ? n : 0;
}

/* The threads a barrier waits for (0: its memory cannot be read); reports. */
unsigned int odebug_glibc_barrier_count(uintptr_t addr)
{
	struct odebug_glibc_barrier b;

	if (odebug_read_mem(&b, (const void *)addr, sizeof(b)) != sizeof(b))
		return 0;
	return b.count;
}

/* No initializer: only pthread_barrier_init (count >= 1) makes one. */
bool odebug_glibc_barrier_is_static(void *addr)
{
	const struct odebug_glibc_barrier *b = addr;

	return b->count && (b->shared == 0 || b->shared == 128);
}

bool odebug_glibc_sem_is_static(void *addr)
{
	const struct odebug_glibc_sem *s = addr;

	return (s->private == 0 || s->private == 128) && !s->pad;
}


/*
 * Who holds the mutex, as glibc sees it: the thread id in the lock word of
 * robust and priority-inheriting mutexes (their __owner says INCONSISTENT
 * after EOWNERDEAD, held all the same), __owner for the others.
 */
int odebug_glibc_mutex_owner(const pthread_mutex_t *m)
{
	if (odebug_glibc_lock_is_tid(odebug_glibc_mutex_kind(m)))
		return odebug_glibc_mutex_lock_word(m) & 0x3fffffff;
	return odebug_glibc_mutex_owner_word(m);
}

/*
 * Does glibc refuse the unlock of a thread that is not the owner (EPERM)?
 * Error-checking, recursive, robust, priority-inheriting and -protecting
 * mutexes: nothing changes.  Normal and adaptive ones are released.
 */
bool odebug_glibc_unlock_checks_owner(const pthread_mutex_t *m)
{
	int kind = odebug_glibc_mutex_kind(m);

	return (kind & 3) == PTHREAD_MUTEX_RECURSIVE_NP ||
	       (kind & 3) == PTHREAD_MUTEX_ERRORCHECK_NP || (kind & (16 | 32 | 64));
}

/*
 * A held mutex unlocked by a thread that does not hold it: "unlock
 * non-owner", reported at the culprit's call with the owner's thread (the
 * report reads it from the words, still the owner's).  Only when the
 * owner is a live thread of this process (odebug_glibc_mutex_held()): a holder that
 * exited, another process's holder of a process-shared mutex, or the
 * parent's thread in a fork() child hand nothing to check.  When glibc
 * releases it, the hold ends (the tracker follows) and the owner's own
 * unlock to come is expected (nonowner.c); when glibc refuses, nothing
 * changes.  False: the caller holds it, or nobody checkable does.
 */

/* --- the free check's sync ------------------------------------------- */

struct sync_range {
	uintptr_t start, end;
	bool copy;	/* read the mutex by a copy: it may be unmapped (exit) */
};

/* @m's words, read safely: false when @addr is not readable. */
static bool mutex_copy(uintptr_t addr, pthread_mutex_t *m)
{
	return odebug_read_mem(m, (const void *)addr, sizeof(*m)) == sizeof(*m);
}

/*
 * An rwlock's tracker takes the readers glibc counts: ACTIVE with that
 * many in the active state, or back to INACTIVE when it counted readers
 * that are gone; a writer's ACTIVE (no count) stays.  @words: the live
 * rwlock or a copy.  False: the word changed under us.
 */
static bool sync_rwlock(struct odebug_tracker *t, uint64_t w, unsigned int state,
			const void *words)
{
	unsigned int n, astate = t->astate, next = state;

	if (odebug_glibc_rwlock_shared(words))
		return true;
	n = odebug_glibc_rwlock_readers(words);
	if (n) {
		next = ODEBUG_STATE_ACTIVE;
		astate = n;
	} else if (state == ODEBUG_STATE_ACTIVE && astate) {
		next = ODEBUG_STATE_INACTIVE;
		astate = 0;
	}
	if (next == state && astate == t->astate)
		return true;
	if (!odebug_tracker_move_busy(t, w, next, astate))
		return false;	/* a lockless writer changed the word: decide again */
	t->astate = astate;
	return true;
}

/*
 * One tracker on a chain the free check is about to walk: a mutex in the
 * range takes the hold its words show (they are live: the memory is not
 * released yet), an rwlock the readers glibc counts.  Process-shared ones keep the tracker's (this process's
 * holds only).  Each change is a compare-and-swap against the word it was
 * decided on, as table.c's header requires of every writer; a lockless
 * BUILTIN_USE may race it, so it decides again.  The walk itself only reads
 * the chains (the tracker is the pool's, writable).
 */
static bool sync_one(const struct odebug_tracker *ct, void *ctx)
{
	struct odebug_tracker *t = (struct odebug_tracker *)ct;
	const struct sync_range *r = ctx;
	unsigned int state, next;
	pthread_mutex_t copy;
	const void *words;
	uintptr_t addr, base;
	uint64_t w;

again:
	state = next = odebug_tracker_read(t, &w);
	if (state == ODEBUG_STATE_NOTAVAILABLE)
		return false;
	addr = odebug_word_addr(w);
	if (addr < r->start || addr >= r->end ||
	    (odebug_word_descr(w) != &odebug_mutex_descr &&
	     odebug_word_descr(w) != &odebug_rwlock_descr))
		return false;
	if (state != ODEBUG_STATE_INIT && state != ODEBUG_STATE_INACTIVE &&
	    state != ODEBUG_STATE_ACTIVE)
		return false;
	words = (const void *)addr;
	/* At exit, a mutex on this thread's stack: the tracker keeps its hold
	 * (tracked mode), and its frame may have returned unseen. */
	if (r->copy && odebug_on_stack(addr, &base))
		return false;
	if (odebug_word_descr(w) == &odebug_rwlock_descr) {
		pthread_rwlock_t rw;

		if (r->copy) {
			if (odebug_read_mem(&rw, words, sizeof(rw)) != sizeof(rw))
				return false;
			words = &rw;
		}
		if (!sync_rwlock(t, w, state, words))
			goto again;
		return false;
	}
	if (r->copy) {
		if (!mutex_copy(addr, &copy))
			return false;
		words = &copy;
	}
	if (odebug_glibc_mutex_pshared(words))
		return false;
	if (odebug_glibc_mutex_held(words))
		next = ODEBUG_STATE_ACTIVE;
	else if (state == ODEBUG_STATE_ACTIVE)
		next = ODEBUG_STATE_INACTIVE;
	if (next != state && !odebug_tracker_move_busy(t, w, next, t->astate))
		goto again;
	return false;
}

void odebug_builtin_sync_slow(struct odebug_bucket *b, uint64_t chains,
			      uintptr_t start, uintptr_t end)
{
	struct sync_range r = { start, end, false };

	odebug_bucket_each(b, chains, sync_one, &r);
}

/* odebug_bucket_take()'s sync: one tracker of the range, live memory. */
void odebug_builtin_sync_one(struct odebug_tracker *t)
{
	struct sync_range r = { 0, UINTPTR_MAX, false };

	sync_one(t, &r);
}

/* The same for report_active_at_exit's walk, over memory maybe gone. */
void odebug_builtin_sync_exit(struct odebug_bucket *b, uint64_t chains)
{
	struct sync_range r = { 0, UINTPTR_MAX, true };

	if (odebug_load(&odebug_sync_one))
		odebug_bucket_each(b, chains, sync_one, &r);
}

/* --- reports and process life ---------------------------------------- */

/*
 * The owner of a held mutex or write-held rwlock, as glibc records it (0:
 * none shown).  Read with odebug_read_mem(): the memory may be gone by the
 * time an exit-time report looks.  Never from memory known dead (a frame
 * that returned, a thread's stack at its exit, an unloaded module: the
 * copy of the tracker is all there is), and only an owner that is a live
 * thread of this process (the words of a frame that returned unseen, read
 * at exit, are any bytes).
 */
int odebug_builtin_owner(const struct odebug_snapshot *o)
{
	pthread_mutex_t m;
	pthread_rwlock_t rw;
	int owner = 0;

	if (o->state != ODEBUG_STATE_ACTIVE || o->dead ||
	    (o->flags & (ODEBUG_SNAP_FRAME_GONE | ODEBUG_SNAP_UNLOADED)))
		return 0;
	if (o->descr == &odebug_mutex_descr) {
		if (odebug_read_mem(&m, (const void *)o->addr, sizeof(m)) != sizeof(m))
			return 0;
		owner = odebug_glibc_mutex_lock_word(&m) ? odebug_glibc_mutex_owner(&m) : 0;
	} else if (o->descr == &odebug_rwlock_descr) {
		if (odebug_read_mem(&rw, (const void *)o->addr, sizeof(rw)) != sizeof(rw))
			return 0;
		owner = odebug_glibc_rwlock_writer(&rw);
	}
	return owner > 0 && odebug_glibc_thread_alive(owner) ? owner : 0;
}

/* --- memory that holds no object of the type (builtin-misuse.c) ------- */

/*
 * Are @addr's words no mutex glibc knows?  A kind with a bit glibc never
 * writes, or priority protection with inheritance or robustness (glibc has
 * no such type); glibc refuses those (EINVAL), or takes bits of them for
 * another type.  A destroyed mutex's kind (-1) is one of them.
 */
bool odebug_glibc_mutex_kind_bad(const void *addr)
{
	int kind = odebug_glibc_mutex_kind(addr);

	return (kind & ~ODEBUG_GLIBC_MUTEX_KIND_BITS) ||
	       ((kind & ODEBUG_GLIBC_MUTEX_PP) &&
		(kind & (ODEBUG_GLIBC_MUTEX_PI | ODEBUG_GLIBC_MUTEX_ROBUST)));
}

/*
 * An untracked condition variable: PTHREAD_COND_INITIALIZER (all zero), or
 * what pthread_cond_init() leaves before its first wait (zero but the
 * process-shared and clock bits of __wrefs: one initialised before
 * libodebug started).  Anything else has been waited on unseen or is not
 * a condition variable.
 */
bool odebug_glibc_cond_is_static(void *addr)
{
	return odebug_glibc_cond_unwaited(addr);
}

/*
 * Does nobody hold the rwlock, as its words say?  No reader counted (a
 * reader's own hold counts itself until its unlock), no writer's lock bit
 * and no writer named.  Read before the caller's unlock: a caller that
 * holds it, for reading or writing, always fails this.
 */
bool odebug_glibc_rwlock_unheld(const void *addr)
{
	unsigned int r = odebug_glibc_rwlock_readers_word(addr);

	return !odebug_glibc_readers_in(r) && !(r & ODEBUG_GLIBC_RWLOCK_WRLOCKED) &&
	       !odebug_glibc_rwlock_writer(addr);
}

/*
 * Where an rwlock's read holds are kept: in its tracker (counted) as a
 * tracked-mode mutex's hold, for the same reasons (on the calling thread's
 * stack, process-shared, origins=1); else in glibc's __readers.
 */
bool odebug_glibc_rwlock_tracked_mode(const void *addr)
{
	uintptr_t base;

	return unlikely(odebug_opt.origins) ||
	       odebug_glibc_rwlock_shared(addr) ||
	       odebug_on_stack((uintptr_t)addr, &base);
}
