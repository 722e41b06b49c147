/* SPDX-License-Identifier: MIT */
/*
 * held.c - memory the kernel and libc hold (held.h): epoll's and POSIX
 * timers' descriptors and events, the query at the free check (is it
 * still held?) for every family, the fixups and the holder line of
 * reports.
 *
 * A record (held-store.h) says: this epoll set (key2) has this descriptor
 * (key) registered with this data value, or this timer (key; key2, its
 * glibc version) was created with this sival_ptr (and is armed or not).
 * The tracker of an address (held-track.c) is ACTIVE while a record of
 * the family holds it (an armed record: a one-shot registration whose
 * event came is not), INACTIVE otherwise.
 *
 * What is a pointer: an 8-aligned value from 64 KiB up, below the top of
 * user space.  No system call asks whether it is mapped (that would cost
 * more than all the bookkeeping): a value that is no pointer (a u64
 * cookie) gets a tracker no free ever covers.  data.fd leaves the upper half of data
 * as it was; fd values not a multiple of 8, or with a zero upper half,
 * fail the test.  A value that passes and is freed is checked against the
 * kernel before a report (odebug_held_released()): the report needs the
 * registration to be in /proc/self/fdinfo of its epoll set with that very
 * value, or the timer to be armed as timer_gettime says.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "builtin.h"
#include "held.h"
#include "held-io.h"
#include "held-ext.h"
#include "held-store.h"

ODEBUG_HOT int odebug_held_on;
unsigned long odebug_held_oneshots;	/* written at each one-shot change: not with ODEBUG_HOT */
ODEBUG_LARGE uint64_t odebug_held_fdbits[ODEBUG_HELD_FDS / 64][2];
ODEBUG_HOT const struct odebug_held_timer_ops *odebug_held_timer_ops;

#define ARMED		ODEBUG_HOLD_ARMED
#define ONESHOT		ODEBUG_HOLD_ONESHOT

static void mark_fd(int fd)
{
	if ((unsigned int)fd < ODEBUG_HELD_FDS &&
	    !(odebug_load(&odebug_held_fdbits[fd / 64][0]) >> (fd % 64) & 1))
		__atomic_fetch_or(&odebug_held_fdbits[fd / 64][0], 1ull << (fd % 64), __ATOMIC_RELAXED);
}

static void unmark_fd(int fd)
{
	if ((unsigned int)fd < ODEBUG_HELD_FDS &&
	    (odebug_load(&odebug_held_fdbits[fd / 64][0]) >> (fd % 64) & 1))
		__atomic_fetch_and(&odebug_held_fdbits[fd / 64][0], ~(1ull << (fd % 64)),
				   __ATOMIC_RELAXED);
}

/* Epoll sets with a registration recorded: odebug_held_fdbits[][1] (above ODEBUG_HELD_FDS, every close looks). */
#define SETBITS(fd)	odebug_held_fdbits[(fd) / 64][1]

static bool is_set(int fd)
{
	return (unsigned int)fd >= ODEBUG_HELD_FDS || (SETBITS(fd) >> (fd % 64) & 1);
}

static void mark_set(int fd)
{
	if ((unsigned int)fd < ODEBUG_HELD_FDS && !(SETBITS(fd) >> (fd % 64) & 1))
		SETBITS(fd) |= 1ull << (fd % 64);
}

static void unmark_set(int fd)
{
	if ((unsigned int)fd < ODEBUG_HELD_FDS)
		SETBITS(fd) &= ~(1ull << (fd % 64));
}

/* Does any armed record of @family hold @addr?  Locked. */
static bool armed_at(int family, uintptr_t addr)
{
	return odebug_hold_holding(family, addr, ARMED) > 0;
}

/* @h's flags become @flags, the one-shot count kept.  Locked. */
static inline __attribute__((always_inline)) void
set_flags(struct odebug_hold *h, unsigned int flags)
{
	bool was = (h->flags & (ARMED | ONESHOT)) == (ARMED | ONESHOT);
	bool now = (flags & (ARMED | ONESHOT)) == (ARMED | ONESHOT);

	if (h->flags == flags)
		return;
	odebug_hold_changed();
	if (was != now)		/* locked: a plain store; epoll_wait only loads it */
		odebug_store(&odebug_held_oneshots, odebug_held_oneshots + (now ? 1ul : -1ul));
	h->flags = (uint8_t)flags;
}

/* Disarm and drop a record; returns its address.  Locked. */
static inline __attribute__((always_inline)) uintptr_t drop(struct odebug_hold *h)
{
	set_flags(h, 0);
	return odebug_hold_drop(h);
}

static const struct debug_obj_descr *descr_of(int family)
{
	return family == ODEBUG_HELD_EPOLL ? &odebug_epoll_descr : &odebug_ptimer_descr;
}

static void apply(uintptr_t addr, int family, bool want)
{
	odebug_held_track((void *)(addr + (uintptr_t)family), descr_of(family), NULL, want);
}

static bool holds(uintptr_t addr, int family)
{
	bool n;

	odebug_hold_lock();
	n = armed_at(family, addr);
	odebug_hold_unlock();
	return n;
}

static void settle(uintptr_t addr, int family)
{
	odebug_held_settle(addr, family, holds, apply);
}

/*
 * settle() when the caller decided @want under the lock, at @v0: the
 * tracker is set, and when no record changed since, that was the last
 * word (any later change is followed by its own settle); else settle()
 * asks again.  The common case takes no lock.  Only called when the
 * address's held-ness changed under the lock: otherwise the tracker
 * already agrees, or a change in between is followed by its own settle.
 */
static inline void settle_from(uintptr_t addr, int family, bool want, unsigned long v0)
{
	apply(addr, family, want);
#ifndef __x86_64__	/* x86: the tracker's step was a locked instruction, a full barrier */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
	if (__atomic_load_n(&odebug_hold_version, __ATOMIC_SEQ_CST) != v0)
		settle(addr, family);
}

/* --- epoll ----------------------------------------------------------- */

/*
 * After a successful epoll_ctl (a DEL whatever its result: a registration
 * the kernel does not know holds nothing).  ADD and MOD end the hold of
 * the registration's old value and take one of the new value if it may be
 * a pointer; MOD arms a one-shot registration again.  The tracker is
 * stepped only where an address's held-ness changed.
 */
void odebug_held_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t data)
{
	uintptr_t old = 0, addr = 0;
	struct odebug_hold *h;
	bool take = op != EPOLL_CTL_DEL && odebug_held_pointer(data), was = true, gone = false;
	unsigned long v0;

	if (!take && !odebug_held_fd_marked(fd))
		return;		/* nothing held before, nothing now */
	if (!odebug_holds_mapped())
		return;
	odebug_hold_lock();
	h = odebug_hold_find(ODEBUG_HELD_EPOLL, (uint64_t)fd, (uint64_t)epfd);
	if (h && (!take || h->addr != data)) {
		bool armed = h->flags & ARMED;

		old = drop(h);
		h = NULL;
		/* Another registration may hold it too. */
		gone = armed && !armed_at(ODEBUG_HELD_EPOLL, old);
	}
	if (take) {
		was = armed_at(ODEBUG_HELD_EPOLL, (uintptr_t)data);
		if (!h)
			h = odebug_hold_add(ODEBUG_HELD_EPOLL, (uint64_t)fd, (uint64_t)epfd,
					    (uintptr_t)data);
		if (h) {
			set_flags(h, events & EPOLLONESHOT ? ARMED | ONESHOT : ARMED);
			addr = h->addr;
			mark_fd(fd);
			mark_fd(epfd);
			mark_set(epfd);
		}
	}
	v0 = odebug_hold_version;
	odebug_hold_unlock();
	if (gone)
		settle_from(old, ODEBUG_HELD_EPOLL, false, v0);
	if (addr && !was)
		settle_from(addr, ODEBUG_HELD_EPOLL, true, v0);
}

/*
 * epoll_wait returned @n events from @epfd: a one-shot registration whose
 * event came is disabled in the kernel until a MOD, and holds nothing.
 * The event names its data value only, so the record is found by address.
 */
void odebug_held_epoll_delivered(int epfd, const void *events, int n)
{
	const struct epoll_event *ev = events;
	int i;

	for (i = 0; i < n && odebug_load(&odebug_holds); i++) {
		uintptr_t addr = (uintptr_t)ev[i].data.u64, hit = 0;
		struct odebug_hold *h;

		if (!odebug_held_pointer(addr))
			continue;
		odebug_hold_lock();
		for (h = odebug_hold_at(*odebug_hold_ahead(addr)); h; h = odebug_hold_at(h->anext)) {
			if (h->addr == addr && h->family == ODEBUG_HELD_EPOLL &&
			    h->key2 == (uint64_t)epfd &&
			    (h->flags & (ARMED | ONESHOT)) == (ARMED | ONESHOT)) {
				set_flags(h, ONESHOT);
				hit = addr;
				break;
			}
		}
		odebug_hold_unlock();
		if (hit)
			settle(hit, ODEBUG_HELD_EPOLL);
	}
}

/*
 * After close(@fd): registrations of @fd end, and so does every one of
 * the set if @fd was an epoll set.  A descriptor dup()ed before the close
 * keeps the kernel's registration alive (it ends with the last
 * descriptor of the file); its hold ends here all the same: a missed
 * report rather than a false one.
 */
void odebug_held_close(int fd)
{
	uintptr_t addrs[32];
	unsigned int n, i;
	bool set;

	if (!odebug_load(&odebug_holds))
		return;
	do {
		struct odebug_hold *h, *next;

		n = 0;
		odebug_hold_lock();
		unmark_fd(fd);
		set = is_set(fd);
		for (h = odebug_hold_at(*odebug_hold_khead(ODEBUG_HELD_EPOLL, (uint64_t)fd));
		     h && n < 32; h = next) {
			next = odebug_hold_at(h->knext);
			if (h->family == ODEBUG_HELD_EPOLL && h->key == (uint64_t)fd)
				addrs[n++] = drop(h);
		}
		/* An epoll set closed: its own registrations, by the store's list of the set. */
		for (h = set ? odebug_hold_at(*odebug_hold_shead((uint64_t)fd)) : NULL;
		     h && n < 32; h = next) {
			next = odebug_hold_at(h->snext);
			if (h->family == ODEBUG_HELD_EPOLL && h->key2 == (uint64_t)fd)
				addrs[n++] = drop(h);
		}
		if (n < 32)
			unmark_set(fd);
		odebug_hold_unlock();
		for (i = 0; i < n; i++)
			settle(addrs[i], ODEBUG_HELD_EPOLL);
	} while (n == 32);
}

/* --- POSIX timers ---------------------------------------------------- */

/*
 * A SIGEV_THREAD timer whose sival_ptr is no pointer (0, mostly) holds
 * no memory, but its function is held code all the same (held-module.c
 * asks at dlclose): its record's address is a marker no held pointer
 * equals (odd; spread by id, so the address chains stay short), and no
 * tracker is made for it.
 */
static uintptr_t no_value(uint64_t id)
{
	return (uintptr_t)(id << 1) | 1;
}

static bool valued(uintptr_t addr)
{
	return addr && !(addr & 1);
}

/*
 * timer_create succeeded with a value that may be a pointer (held once
 * armed), or @value 0 and a SIGEV_THREAD function @fn.
 */
void odebug_held_timer_create(uint64_t id, int ver, uintptr_t value, uintptr_t fn)
{
	struct odebug_hold *h;
	uintptr_t old = 0;

	if (!odebug_holds_mapped())
		return;
	odebug_hold_lock();
	h = odebug_hold_find(ODEBUG_HELD_TIMER, id, (uint64_t)ver);
	if (h)		/* a deleted timer's id we missed: it is another timer now */
		old = drop(h);
	h = odebug_hold_add(ODEBUG_HELD_TIMER, id, (uint64_t)ver, value ? value : no_value(id));
	if (h)
		h->fn = fn;
	odebug_hold_unlock();
	if (valued(old))
		settle(old, ODEBUG_HELD_TIMER);
}

/*
 * timer_settime succeeded: armed (a non-zero it_value) or disarmed.  The
 * tracker is stepped only when the value's held-ness changed: another
 * armed timer with the same sival_ptr keeps it held.
 */
void odebug_held_timer_set(uint64_t id, int ver, bool armed)
{
	struct odebug_hold *h;
	uintptr_t addr = 0;
	unsigned long v0;

	if (!odebug_load(&odebug_holds))
		return;
	odebug_hold_lock();
	h = odebug_hold_find(ODEBUG_HELD_TIMER, id, (uint64_t)ver);
	if (h && !!(h->flags & ARMED) != armed) {
		set_flags(h, armed ? ARMED : 0);
		if (valued(h->addr) &&
		    odebug_hold_holding(ODEBUG_HELD_TIMER, h->addr, ARMED) == armed)
			addr = h->addr;	/* the first armed, or the last disarmed */
	}
	v0 = odebug_hold_version;
	odebug_hold_unlock();
	if (addr)
		settle_from(addr, ODEBUG_HELD_TIMER, armed, v0);
}

void odebug_held_timer_delete(uint64_t id, int ver)
{
	struct odebug_hold *h;
	uintptr_t addr = 0;

	if (!odebug_load(&odebug_holds))
		return;
	odebug_hold_lock();
	h = odebug_hold_find(ODEBUG_HELD_TIMER, id, (uint64_t)ver);
	if (h)
		addr = drop(h);
	odebug_hold_unlock();
	if (valued(addr))
		settle(addr, ODEBUG_HELD_TIMER);
}

static bool hold_is_live(const struct odebug_hold *h);
static void forget(const struct odebug_hold *c, int family);

/*
 * At dlclose (held-module.c): the first armed timer whose SIGEV_THREAD
 * function lies in [@lo, @hi), its id in *@id and glibc version in
 * *@ver; 0 when none.  Every record is looked at (a rare call).
 * timer_gettime confirms it: a one-shot timer that expired calls its
 * function no more, and its record is disarmed.
 */
uintptr_t odebug_held_timer_fn_in(uintptr_t lo, uintptr_t hi, uint64_t *id, int *ver)
{
	struct odebug_hold c;
	uint32_t j;
	bool found;
	int round;

	if (!odebug_load(&odebug_holds))
		return 0;
	for (round = 0; round < 64; round++) {	/* each round disarms one, unless re-armed */
		found = false;
		odebug_hold_lock();
		for (j = 1; j <= odebug_holds->used && !found; j++) {
			const struct odebug_hold *h = odebug_hold_at(j);

			if (h->addr && h->family == ODEBUG_HELD_TIMER && (h->flags & ARMED) &&
			    h->fn >= lo && h->fn < hi && h->gen == odebug_hold_gen) {
				c = *h;
				found = true;
			}
		}
		odebug_hold_unlock();
		if (!found)
			return 0;
		if (hold_is_live(&c)) {
			*id = c.key;
			*ver = (int)c.key2;
			return c.fn;
		}
		forget(&c, ODEBUG_HELD_TIMER);
		if (valued(c.addr))
			settle(c.addr, ODEBUG_HELD_TIMER);
	}
	return 0;
}

/* The module check's fixup: the timer disarmed, its record with it; false without glibc's calls. */
bool odebug_held_timer_disarm(uint64_t id, int ver)
{
	if (!odebug_held_timer_ops)
		return false;
	odebug_held_timer_ops->disarm(id, ver);
	odebug_held_timer_set(id, ver, false);
	return true;
}

/* --- the free check: still held?  the fixup, the report line ---------- */

#define BATCH 16

/* Copies of the armed records of (@family, @addr); at most BATCH.  Locks. */
static unsigned int snapshot(int family, uintptr_t addr, struct odebug_hold *out)
{
	const struct odebug_hold *h;
	unsigned int n = 0;

	if (!odebug_load(&odebug_holds))
		return 0;
	odebug_hold_lock();
	for (h = odebug_hold_at(*odebug_hold_ahead(addr)); h && n < BATCH;
	     h = odebug_hold_at(h->anext))
		if (h->addr == addr && h->family == family && (h->flags & ARMED))
			out[n++] = *h;
	odebug_hold_unlock();
	return n;
}

/* A decimal or hex number at @p (after spaces); *@end past it. */
static unsigned long number(const char *p, int base, const char **end)
{
	unsigned long v = 0;
	int c;

	while (*p == ' ')
		p++;
	for (;; p++) {
		c = *p;
		if (c >= '0' && c <= '9')
			c -= '0';
		else if (base == 16 && c >= 'a' && c <= 'f')
			c -= 'a' - 10;
		else
			break;
		v = v * (unsigned long)base + (unsigned long)c;
	}
	*end = p;
	return v;
}

/*
 * The kernel's private event bits (fs/eventpoll.c's EP_PRIVATE_BITS): all
 * a one-shot registration keeps once its event came.  Every armed one has
 * EPOLLERR and EPOLLHUP besides (added at each ADD and MOD).
 */
#define EP_PRIVATE_BITS	(EPOLLWAKEUP | EPOLLONESHOT | EPOLLET | EPOLLEXCLUSIVE)

/*
 * One fdinfo line: "tfd: <fd> events: <hex> data: <hex> ...", for @fd
 * and @addr, and armed?  A one-shot registration whose event came (taken
 * through any descriptor of the set) is listed with no event left, and
 * holds nothing.
 */
static bool line_matches(const char *line, int fd, uintptr_t addr)
{
	const char *p, *dp;

	if (strncmp(line, "tfd:", 4) || number(line + 4, 10, &p) != (unsigned long)fd)
		return false;
	dp = strstr(p, " events:");
	if (dp && !(number(dp + 8, 16, &p) & ~(unsigned long)EP_PRIVATE_BITS))
		return false;
	dp = strstr(p, " data:");
	return dp && number(dp + 6, 16, &p) == addr;
}

/*
 * Is @fd registered in epoll set @epfd with data @addr?  The set's
 * /proc/self/fdinfo lists each registration on a line of its own.  Raw
 * system calls and a small stack buffer, lines joined across refills.
 * Not opened: a set descriptor that is closed (a close not seen:
 * close_range, a signal handler's inside libodebug) holds nothing; for
 * want of a descriptor or memory (the process at its limit) there is no
 * answer, and so no report, since the record may be of a registration
 * gone unseen; otherwise (no /proc) the record is believed.  errno is
 * the caller's still.
 */
static bool in_fdinfo(int epfd, int fd, uintptr_t addr)
{
	char path[24] = "fdinfo/", line[160], buf[1024];
	struct odebug_buf b;
	size_t ll = 0;
	ssize_t r, i;
	bool found = false;
	int f, saved = errno;

	odebug_buf_init_mem(&b, path + 7, sizeof(path) - 8);
	odebug_put_dec(&b, (unsigned long)epfd);
	path[7 + b.len] = '\0';
	f = odebug_open_proc(path);
	if (f < 0) {
		found = errno != EMFILE && errno != ENFILE && errno != ENOMEM &&
			!(syscall(SYS_fcntl, epfd, F_GETFD) < 0 && errno == EBADF);
		errno = saved;
		return found;
	}
	while (!found && (r = syscall(SYS_read, f, buf, sizeof(buf))) > 0) {
		for (i = 0; i < r && !found; i++) {
			if (buf[i] != '\n') {
				if (ll < sizeof(line) - 1)
					line[ll++] = buf[i];
				continue;
			}
			line[ll] = '\0';
			ll = 0;
			found = line_matches(line, fd, addr);
		}
	}
	syscall(SYS_close, f);
	errno = saved;
	return found;
}

/* Does @h still hold its value, as the kernel says now?  No lock held. */
static bool hold_is_live(const struct odebug_hold *h)
{
	if (h->gen != odebug_load(&odebug_hold_gen))
		return false;	/* made before a fork() this process is the child of */
	if (h->family == ODEBUG_HELD_EPOLL)
		return in_fdinfo((int)h->key2, (int)h->key, h->addr);
	return !odebug_held_timer_ops || odebug_held_timer_ops->armed(h->key, (int)h->key2);
}

/* The record of @c as it is now (the lock held), if it is still that hold. */
static struct odebug_hold *again(const struct odebug_hold *c)
{
	struct odebug_hold *h = odebug_hold_find(c->family, c->key, c->key2);

	return h && h->addr == c->addr ? h : NULL;
}

/* The hold @c (of a snapshot) ended: epoll's record goes, a timer's is disarmed. */
static void forget(const struct odebug_hold *c, int family)
{
	struct odebug_hold *h;

	odebug_hold_lock();
	h = again(c);
	if (h && family == ODEBUG_HELD_EPOLL)
		drop(h);
	else if (h)
		set_flags(h, 0);
	odebug_hold_unlock();
}

/*
 * At the free check, before "free active" is reported for a held type's
 * tracker: ask the kernel.  Holds it denies (an expired one-shot timer, a
 * registration that went with a close we did not see, one inherited over
 * fork) end now; true when none is left, and the free check then drops
 * the tracker silently.  Anything but an epoll set's or a timer's: false.
 */
static bool held_released(const struct odebug_snapshot *o)
{
	struct odebug_hold c[BATCH];
	unsigned int n, i, live = 0;
	int family;

	if (o->descr != &odebug_epoll_descr && o->descr != &odebug_ptimer_descr)
		return false;
	family = o->descr == &odebug_epoll_descr ? ODEBUG_HELD_EPOLL : ODEBUG_HELD_TIMER;
	n = snapshot(family, o->addr - (uintptr_t)family, c);
	for (i = 0; i < n; i++) {
		if (hold_is_live(&c[i])) {
			live++;
			continue;
		}
		forget(&c[i], family);
	}
	return !live;
}

/*
 * fixup_free: the memory goes, so nothing may hand it back.  epoll: each
 * registration holding it is deleted (EPOLL_CTL_DEL, the raw call: glibc's
 * is the same system call), so the freed pointer is never delivered; a
 * timer is disarmed, as the kernel's timer fixup does.  The records go
 * with them (a timer's stays, disarmed: the timer still exists).
 */
static bool fixup_free(void *t, enum debug_obj_state state)
{
	int family = (int)((uintptr_t)t & 7);
	uintptr_t addr = (uintptr_t)t - (uintptr_t)family;
	struct odebug_hold c[BATCH];
	unsigned int n, i;

	if (state != ODEBUG_STATE_ACTIVE)
		return false;
	while ((n = snapshot(family, addr, c))) {
		for (i = 0; i < n; i++) {
			if (family == ODEBUG_HELD_EPOLL)
				syscall(SYS_epoll_ctl, (int)c[i].key2, EPOLL_CTL_DEL,
					(int)c[i].key, NULL);
			else if (odebug_held_timer_ops)
				odebug_held_timer_ops->disarm(c[i].key, (int)c[i].key2);
			forget(&c[i], family);
		}
	}
	odebug_builtin_step(t, descr_of(family), BUILTIN_UNLOCK, 0);
	return true;
}

/* A report's hint: a SIGEV_THREAD timer's function, as the kernel names a timer's. */
static void *timer_hint(void *t)
{
	struct odebug_hold c[BATCH];

	if (snapshot(ODEBUG_HELD_TIMER, (uintptr_t)t - ODEBUG_HELD_TIMER, c))
		return (void *)c[0].fn;
	return NULL;
}

const struct debug_obj_descr odebug_epoll_descr = {
	.name = "epoll",
	.is_static_object = odebug_held_any_value,
	.fixup_free = fixup_free,
};

const struct debug_obj_descr odebug_ptimer_descr = {
	.name = "posix_timer",
	.is_static_object = odebug_held_any_value,
	.fixup_free = fixup_free,
	.debug_hint = timer_hint,
};

/*
 * The report's extra line: who holds the value.  Written into @buf (at
 * most @cap bytes, terminated) before the report lock is taken; false for
 * other types or when the hold is gone.
 */
static bool held_describe(const struct odebug_snapshot *o, char *buf, size_t cap)
{
	struct odebug_hold c[BATCH];
	struct odebug_buf b;
	unsigned int n;
	int family;

	if (o->descr != &odebug_epoll_descr && o->descr != &odebug_ptimer_descr)
		return false;
	family = o->descr == &odebug_epoll_descr ? ODEBUG_HELD_EPOLL : ODEBUG_HELD_TIMER;
	n = snapshot(family, o->addr - (uintptr_t)family, c);
	if (!n)
		return false;
	odebug_buf_init_mem(&b, buf, cap - 1);
	if (family == ODEBUG_HELD_EPOLL) {
		odebug_puts(&b, "registered on epoll fd ");
		odebug_put_dec(&b, (unsigned long)c[0].key2);
		odebug_puts(&b, " for fd ");
		odebug_put_dec(&b, (unsigned long)c[0].key);
		odebug_puts(&b, c[0].flags & ONESHOT ? " (EPOLLONESHOT)" : "");
		odebug_puts(&b, ", data.ptr ");
	} else {
		odebug_puts(&b, "timer ");
		odebug_put_hex(&b, (uintptr_t)c[0].key);
		odebug_puts(&b, " armed, sival_ptr ");
	}
	odebug_put_hex(&b, c[0].addr);
	odebug_held_end_line(&b, buf, n - 1);
	return true;
}

/* A holder line's end: ", and @more more" holds, if any; @buf terminated. */
void odebug_held_end_line(struct odebug_buf *b, char *buf, unsigned long more)
{
	if (more) {
		odebug_puts(b, ", and ");
		odebug_put_dec(b, more);
		odebug_puts(b, " more");
	}
	buf[b->len] = '\0';
}

/* Decided on (the registry's init): on, with check_held=1. */
static void held_init(void)
{
	if (!odebug_opt.check_held || odebug_load(&odebug_held_on))
		return;
	odebug_store(&odebug_held_on, 1);
}

ODEBUG_CHECKER(held) = {
	.name = "epoll and timers",
	.init = held_init,
	.released = held_released,
	.describe = held_describe,
};
