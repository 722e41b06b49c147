/* SPDX-License-Identifier: MIT */
/*
 * report-state.c - a built-in object's state in a report, in words:
 *
 *   ODEBUG: free active (1 waiter) object: 0x... object type: pthread_cond
 *   ODEBUG: blocked on it: thread 4125 (worker-3)
 *   ODEBUG: free active (held) object: 0x... object type: pthread_mutex
 *   ODEBUG: held by thread 4123 (worker-2)
 *
 * The tracker's active state counts readers, waiters or barrier arrivals;
 * glibc's words name a mutex's or a write-held rwlock's owner.  Which
 * threads wait is known to neither: it is asked of the kernel, which shows
 * in /proc/self/task/TID/syscall the futex word each blocked thread sleeps
 * on.  A thread counted as a waiter but not asleep in the kernel at that
 * moment (between its count and its sleep, or woken and not yet gone) is
 * counted, not named; the report says how many.
 *
 * Called by report.c under the report lock, once per report (before the
 * text or JSON is formatted): the buffers are static, every read is a raw
 * system call (odebug_read_file(), getdents64), nothing allocates.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "builtin.h"
#include "report-format.h"

/* "1 waiter", "2 waiters": @n and the noun, plural when @n is not 1. */
static void put_count(struct odebug_buf *b, unsigned long n, const char *one,
		      const char *many)
{
	odebug_put_dec(b, n);
	odebug_putc(b, ' ');
	odebug_puts(b, n == 1 ? one : many);
}

/* The bytes glibc's functions use as futex words: the whole object. */
static size_t object_size(const struct debug_obj_descr *d)
{
	if (d == &odebug_mutex_descr)
		return sizeof(pthread_mutex_t);
	if (d == &odebug_rwlock_descr)
		return sizeof(pthread_rwlock_t);
	if (d == &odebug_spin_descr)
		return sizeof(pthread_spinlock_t);
	if (d == &odebug_cond_descr)
		return sizeof(pthread_cond_t);
	if (d == &odebug_barrier_descr)
		return sizeof(pthread_barrier_t);
	if (d == &odebug_sem_descr)
		return sizeof(sem_t);
	return 0;
}

/* Is @d a type whose active state counts waiters (cond, sem, barrier)? */
static bool counts_waiters(const struct debug_obj_descr *d)
{
	return d == &odebug_cond_descr || d == &odebug_sem_descr || d == &odebug_barrier_descr;
}

/* A hexadecimal or decimal number at *@p; *@p moves past it. */
static unsigned long parse_num(const char **p)
{
	const char *s = *p;
	unsigned long v = 0;
	int base = 10;

	while (*s == ' ')
		s++;
	if (s[0] == '0' && s[1] == 'x') {
		base = 16;
		s += 2;
	}
	for (;; s++) {
		int d;

		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else
			break;
		v = v * (unsigned long)base + (unsigned long)d;
	}
	*p = s;
	return v;
}

static bool is_futex_call(unsigned long nr)
{
#ifdef SYS_futex_time64
	if (nr == SYS_futex_time64)
		return true;
#endif
#ifdef SYS_futex
	if (nr == SYS_futex)
		return true;
#endif
	return false;
}

/* Is thread @tid asleep in a futex call on a word in [@lo, @hi)? */
static bool blocked_on(int tid, uintptr_t lo, uintptr_t hi)
{
	char line[160];
	const char *p = line;
	unsigned long nr, uaddr;
	long n;

	n = odebug_read_task_file(tid, "syscall", line, sizeof(line) - 1);
	if (n <= 0)
		return false;
	line[n] = '\0';
	if (line[0] < '0' || line[0] > '9')	/* "running", or -1 */
		return false;
	nr = parse_num(&p);
	if (!is_futex_call(nr))
		return false;
	uaddr = parse_num(&p);
	return uaddr >= lo && uaddr < hi;
}

/*
 * Every thread of the process but the caller asleep on a futex word in
 * [@lo, @hi): the first ODEBUG_MAX_BLOCKED named in @s, the rest counted.
 * False when /proc/self/task cannot be read.
 */
static bool scan_blocked(struct report_state *s, uintptr_t lo, uintptr_t hi)
{
	static ODEBUG_LARGE char dents[4096];
	int self = odebug_gettid(), saved = errno;
	long fd = syscall(SYS_openat, AT_FDCWD, "/proc/self/task",
			  O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0) {
		errno = saved;
		return false;
	}
	for (;;) {
		long n = syscall(SYS_getdents64, (int)fd, dents, sizeof(dents)), off;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (off = 0; off < n;) {
			/* struct linux_dirent64: ino 8, off 8, reclen 2, type 1, name */
			unsigned short reclen;
			const char *name = dents + off + 19;
			const char *end = name;
			unsigned long tid;

			memcpy(&reclen, dents + off + 16, sizeof(reclen));
			off += reclen;
			tid = parse_num(&end);
			if (end == name || *end || (int)tid == self || !tid ||
			    !blocked_on((int)tid, lo, hi))
				continue;
			if (s->nblocked < ODEBUG_MAX_BLOCKED) {
				s->blocked[s->nblocked] = (int)tid;
				odebug_thread_name_of((int)tid, s->blocked_name[s->nblocked]);
				s->nblocked++;
			} else {
				s->blocked_more++;
			}
		}
	}
	syscall(SYS_close, (int)fd);
	errno = saved;
	return true;
}

/* More readers than any program has threads: a count gone below zero. */
#define ODEBUG_RWLOCK_READERS_CORRUPT	(1u << 24)

/* The header's words for a held or waited-on object (ACTIVE). */
static void active_words(struct odebug_buf *b, const struct odebug_snapshot *o)
{
	const struct debug_obj_descr *d = o->descr;
	unsigned int count;

	if (d == &odebug_rwlock_descr && o->astate >= ODEBUG_RWLOCK_READERS_CORRUPT) {
		/* An unlock with no reader took glibc's count below zero. */
		odebug_puts(b, "read-held, glibc's reader count corrupt: ");
		odebug_put_dec(b, o->astate);
	} else if (d == &odebug_rwlock_descr && o->astate) {
		odebug_puts(b, "read-held by ");
		put_count(b, o->astate, "thread", "threads");
	} else if (d == &odebug_rwlock_descr) {
		odebug_puts(b, "write-held");
	} else if (d == &odebug_barrier_descr) {
		count = o->dead ? 0 : odebug_glibc_barrier_count(o->addr);
		odebug_put_dec(b, o->astate);
		if (count) {
			odebug_puts(b, " of ");
			odebug_put_dec(b, count);
		}
		odebug_puts(b, o->astate == 1 && count <= 1 ? " thread waiting" : " threads waiting");
	} else if (counts_waiters(d)) {
		put_count(b, o->astate, "waiter", "waiters");
	} else {
		odebug_puts(b, "held");
	}
}

/* What is known of a held lock's holder, when glibc's words name none. */
static const char *holder_unknown(const struct odebug_snapshot *o)
{
	const struct debug_obj_descr *d = o->descr;

	if (d == &odebug_spin_descr)
		return "held; a spinlock does not record which thread holds it";
	if (d == &odebug_rwlock_descr && o->astate)
		return "read-held; glibc does not record which threads hold the read locks";
	if (o->dead || (o->flags & (ODEBUG_SNAP_FRAME_GONE | ODEBUG_SNAP_UNLOADED)))
		return "held; its memory is gone, so its holder cannot be read";
	return "held; glibc's words name no live thread of this process as its "
	       "holder (it exited holding it, or belongs to another process)";
}

/**
 * odebug_report_state - a built-in object's state, in words, for a report
 * @o:		the tracker as it was
 * @owner:	the holder glibc's words name (odebug_builtin_owner()), 0: none
 * @s:		filled in
 *
 * Returns false, @s empty, for a type that is not built in.
 */
bool odebug_report_state(const struct odebug_snapshot *o, int owner, struct report_state *s)
{
	size_t size = object_size(o->descr);
	bool gone = o->dead || (o->flags & (ODEBUG_SNAP_FRAME_GONE | ODEBUG_SNAP_UNLOADED));
	struct odebug_buf b;

	memset(s, 0, sizeof(*s));
	if (!size)
		return false;
	s->owner = owner;
	if (owner)
		odebug_thread_name_of(owner, s->owner_name);
	odebug_buf_init_mem(&b, s->words, sizeof(s->words) - 1);
	switch (o->state) {
	case ODEBUG_STATE_ACTIVE:
		active_words(&b, o);
		if (!owner && !counts_waiters(o->descr))
			s->holder_note = holder_unknown(o);
		break;
	case ODEBUG_STATE_INIT:
	case ODEBUG_STATE_INACTIVE:
		odebug_puts(&b, counts_waiters(o->descr) ? "no waiters" : "not held");
		break;
	default:	/* destroyed, not available: the header's state says it all */
		break;
	}
	s->words[b.len] = '\0';
	/* Who sleeps on it: only while its memory is the object's. */
	if (o->state != ODEBUG_STATE_ACTIVE || gone)
		return true;
	s->scanned = scan_blocked(s, o->addr, o->addr + size);
	s->scan_failed = !s->scanned;
	if (counts_waiters(o->descr) && o->astate > (unsigned int)(s->nblocked + s->blocked_more))
		s->not_blocked = o->astate - (unsigned int)(s->nblocked + s->blocked_more);
	s->waiters = counts_waiters(o->descr);
	return true;
}

/* "where it was locked": what origins=1 would show of a built-in object; NULL: not one. */
const char *odebug_report_origin_words(const struct debug_obj_descr *d)
{
	if (d == &odebug_mutex_descr || d == &odebug_rwlock_descr || d == &odebug_spin_descr)
		return "where it was initialised and locked";
	if (counts_waiters(d))
		return "where it was initialised and waited on";
	return NULL;
}
