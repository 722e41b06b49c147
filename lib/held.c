/* SPDX-License-Identifier: MIT */
/*
 * held.c - memory the kernel and libc hold (held.h): the families'
 * descriptors, the records of who holds what, the trackers' state, the
 * query at the free check (is it still held?), the fixups and the holder
 * line of reports.
 *
 * A record says: this epoll set has this descriptor registered with this
 * data value, or this timer was created with this sival_ptr (and is armed
 * or not).  Records live in one mapping made at the first hold, chained twice: by
 * key (the registered descriptor, the timer id) and by held address.
 * One spinlock guards them; nothing else is called under it.  The tracker
 * of an address is ACTIVE while a record of the family holds it (an armed
 * record: a one-shot registration whose event came is not), INACTIVE
 * otherwise; it changes outside the spinlock (settle()), by the built-in
 * types' steps, which never report.
 *
 * What is a pointer: an 8-aligned value from 64 KiB up, below the top of
 * user space.  No system call asks whether it is mapped (that would cost
 * more than all the bookkeeping): a value that is no pointer (a u64 cookie) gets a
 * tracker no free ever covers.  data.fd leaves the upper half of data
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
#include "lock.h"

int odebug_held_on;
unsigned long odebug_held_oneshots;
uint64_t odebug_held_fdbits[ODEBUG_HELD_FDS / 64];
const struct odebug_held_timer_ops *odebug_held_timer_ops;

#define HOLDS_MAX	65536u		/* records; beyond, nothing more is held */
#define HASH_BITS	14

#define HOLD_ARMED	1u	/* holds the value now */
#define HOLD_ONESHOT	2u	/* EPOLLONESHOT: its next event ends the hold */

struct hold {
	uintptr_t addr;		/* the held value; 0: a free record */
	uint64_t key;		/* epoll: the registered descriptor; timer: its id */
	uintptr_t fn;		/* timer: the SIGEV_THREAD function (the hint) */
	int owner;		/* epoll: the set's descriptor; timer: the version */
	uint8_t family, flags;
	uint16_t gen;		/* fork generation: a child's inherited holds are not its own */
	uint32_t knext, anext;	/* chains by key and by address: index + 1, 0 ends */
};

struct holds {
	uint32_t khead[1u << HASH_BITS], ahead[1u << HASH_BITS];
	uint32_t free_list, used;
	struct hold h[HOLDS_MAX];
};

static struct holds *H;
static odebug_spinlock_t lock;
static uint16_t gen;
static unsigned long version;	/* one more at each change of a record (locked) */

/*
 * The records' mapping, on the first hold (a process that holds nothing
 * maps nothing): 2.6 MiB reserved, touched as used.  False when it cannot
 * be mapped, and nothing is held.
 */
static bool mapped(void)
{
	static int failed;
	struct holds *m;

	if (likely(odebug_load(&H)))
		return true;
	if (odebug_load(&failed))
		return false;
	m = odebug_map(sizeof(*m));
	if (!m) {
		odebug_store(&failed, 1);
		return false;
	}
	if (!__atomic_compare_exchange_n(&H, &(struct holds *){ NULL }, m, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		odebug_unmap(m, sizeof(*m));
	return true;
}

/*
 * The records' lock, with the re-entry guard set while it is held: a
 * signal handler's close() or timer_settime() on this thread then goes
 * straight to glibc instead of spinning on a lock its own thread holds.
 */
static void hold_lock(void)
{
	odebug_guard_enter();
	odebug_spin_lock(&lock);
}

static void hold_unlock(void)
{
	odebug_spin_unlock(&lock);
	odebug_guard_exit();
}

static uint32_t hash64(uint64_t v)
{
	return (uint32_t)((v * 0x9e3779b97f4a7c15ull) >> (64 - HASH_BITS));
}

static uint32_t *khead(int family, uint64_t key)
{
	return &H->khead[hash64(key * 4 + (uint64_t)family)];
}

static uint32_t *ahead(uintptr_t addr) { return &H->ahead[hash64(addr)]; }

static void mark_fd(int fd)
{
	if ((unsigned int)fd < ODEBUG_HELD_FDS &&
	    !(odebug_load(&odebug_held_fdbits[fd / 64]) >> (fd % 64) & 1))
		__atomic_fetch_or(&odebug_held_fdbits[fd / 64], 1ull << (fd % 64), __ATOMIC_RELAXED);
}

static void unmark_fd(int fd)
{
	if ((unsigned int)fd < ODEBUG_HELD_FDS)
		__atomic_fetch_and(&odebug_held_fdbits[fd / 64], ~(1ull << (fd % 64)),
				   __ATOMIC_RELAXED);
}

/* Epoll sets with a registration recorded (below ODEBUG_HELD_FDS; above, every close looks). */
static uint64_t setbits[ODEBUG_HELD_FDS / 64];

static bool is_set(int fd)
{
	return (unsigned int)fd >= ODEBUG_HELD_FDS || (setbits[fd / 64] >> (fd % 64) & 1);
}

static void mark_set(int fd)
{
	if ((unsigned int)fd < ODEBUG_HELD_FDS)
		setbits[fd / 64] |= 1ull << (fd % 64);
}

static void unmark_set(int fd)
{
	if ((unsigned int)fd < ODEBUG_HELD_FDS)
		setbits[fd / 64] &= ~(1ull << (fd % 64));
}

/* The record of (@family, @key, @owner), or NULL.  Locked. */
static struct hold *find_key(int family, uint64_t key, int owner)
{
	uint32_t i;

	for (i = *khead(family, key); i; i = H->h[i - 1].knext) {
		struct hold *h = &H->h[i - 1];

		if (h->family == family && h->key == key && h->owner == owner)
			return h;
	}
	return NULL;
}

/* Armed records of @family holding @addr.  Locked. */
static unsigned int count_armed(int family, uintptr_t addr)
{
	unsigned int n = 0;
	uint32_t i;

	for (i = *ahead(addr); i; i = H->h[i - 1].anext) {
		const struct hold *h = &H->h[i - 1];

		n += h->addr == addr && h->family == family && (h->flags & HOLD_ARMED);
	}
	return n;
}

static void unchain(uint32_t *head, uint32_t idx, bool by_key)
{
	uint32_t *p = head;

	while (*p && *p != idx)
		p = by_key ? &H->h[*p - 1].knext : &H->h[*p - 1].anext;
	if (*p)
		*p = by_key ? H->h[idx - 1].knext : H->h[idx - 1].anext;
}

/* A record changes: settle_from() of another thread then checks again.  Locked. */
static void changed(void)
{
	__atomic_fetch_add(&version, 1, __ATOMIC_SEQ_CST);
}

/* A new record, chained; NULL when all HOLDS_MAX are in use.  Locked. */
static struct hold *add(int family, uint64_t key, int owner, uintptr_t addr)
{
	static int said;
	struct hold *h;
	uint32_t idx;

	if (H->free_list) {
		idx = H->free_list;
		H->free_list = H->h[idx - 1].knext;
	} else if (H->used < HOLDS_MAX) {
		idx = ++H->used;
	} else {
		if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
			odebug_message("65536 holds recorded: new epoll registrations and "
				       "timers are not checked from now on", (char *)NULL);
		return NULL;
	}
	changed();
	h = &H->h[idx - 1];
	*h = (struct hold){ .addr = addr, .key = key, .owner = owner,
			    .family = (uint8_t)family, .gen = gen };
	h->knext = *khead(family, key);
	*khead(family, key) = idx;
	h->anext = *ahead(addr);
	*ahead(addr) = idx;
	return h;
}

static void disarm(struct hold *h)
{
	changed();
	if ((h->flags & (HOLD_ARMED | HOLD_ONESHOT)) == (HOLD_ARMED | HOLD_ONESHOT))
		__atomic_fetch_sub(&odebug_held_oneshots, 1, __ATOMIC_RELAXED);
	h->flags &= (uint8_t)~HOLD_ARMED;
}

static void arm(struct hold *h)
{
	changed();
	if ((h->flags & (HOLD_ARMED | HOLD_ONESHOT)) == HOLD_ONESHOT)
		__atomic_fetch_add(&odebug_held_oneshots, 1, __ATOMIC_RELAXED);
	h->flags |= HOLD_ARMED;
}

/* Unchain and free a record; returns its address.  Locked. */
static uintptr_t drop(struct hold *h)
{
	uint32_t idx = (uint32_t)(h - H->h) + 1;
	uintptr_t addr = h->addr;

	disarm(h);
	unchain(khead(h->family, h->key), idx, true);
	unchain(ahead(addr), idx, false);
	h->addr = 0;
	h->knext = H->free_list;
	H->free_list = idx;
	return addr;
}

static const struct debug_obj_descr *descr_of(int family)
{
	return family == ODEBUG_HELD_EPOLL ? &odebug_epoll_descr : &odebug_ptimer_descr;
}

/*
 * A held tracker at @t made ACTIVE (@want, a @d object) or INACTIVE, by
 * the built-in types' steps: they never report, and a tracker of another
 * type at that address (FOREIGN) is left alone, unless it is of type @alt,
 * another family that may stand there for the same holder.  A new tracker
 * counts against the built-in types' bound.  No lock held: with origins=1
 * the step records this stack.
 */
void odebug_held_track(void *t, const struct debug_obj_descr *d,
		       const struct debug_obj_descr *alt, bool want)
{
	uintptr_t base;
	int s;

	if (!want) {
		odebug_builtin_step(t, d, BUILTIN_UNLOCK, 0);
		if (alt)
			odebug_builtin_step(t, alt, BUILTIN_UNLOCK, 0);
		return;
	}
	s = odebug_builtin_step(t, d, BUILTIN_LOCK, 0);
	if (s == ODEBUG_STATE_FOREIGN && alt)
		s = odebug_builtin_step(t, alt, BUILTIN_LOCK, 0);
	if (s != ODEBUG_STATE_NOTAVAILABLE || odebug_builtin_full())
		return;
	/* As builtin.c's track_static: made once, even by two threads at once. */
	odebug_stack_prepare();
	if (odebug_on_stack((uintptr_t)t, &base) && d == &odebug_tstack_descr) {
		/*
		 * A thread's own stack block (held-tstack.c): on its stack,
		 * but in no frame, so no returned frame takes it: the lowest
		 * on-stack object stays what it was.
		 */
		uintptr_t low = odebug_onstack_low;

		debug_object_init_on_stack(t, d);
		odebug_onstack_low = low;
	} else if (odebug_on_stack((uintptr_t)t, &base))
		debug_object_init_on_stack(t, d);
	else
		debug_object_assert_init(t, d);
	odebug_builtin_step(t, d, BUILTIN_LOCK, 0);
}

/*
 * Make the tracker of (@family, @addr) agree with the records: @holds
 * (which takes the records' lock) decides, @apply changes the tracker
 * outside that lock, and @holds is asked again; another thread's change in
 * between is seen by whichever of the two checks last, which applies
 * again.  Bounded: under endless churn of one address the last word is
 * the next call's.
 */
void odebug_held_settle(uintptr_t addr, int family, bool (*holds)(uintptr_t addr, int family),
			void (*apply)(uintptr_t addr, int family, bool want))
{
	bool want;
	int i;

	for (i = 0; i < 8; i++) {
		want = holds(addr, family);
		apply(addr, family, want);
		if (holds(addr, family) == want)
			return;
	}
}

static void apply(uintptr_t addr, int family, bool want)
{
	odebug_held_track((void *)(addr + (uintptr_t)family), descr_of(family), NULL, want);
}

static bool holds(uintptr_t addr, int family)
{
	unsigned int n;

	hold_lock();
	n = count_armed(family, addr);
	hold_unlock();
	return n > 0;
}

static void settle(uintptr_t addr, int family)
{
	odebug_held_settle(addr, family, holds, apply);
}

/*
 * settle() when the caller decided @want under the lock, at @v0: the
 * tracker is set, and when no record changed since, that was the last
 * word (any later change is followed by its own settle); else settle()
 * asks again.  The common case takes no lock.
 */
static void settle_from(uintptr_t addr, int family, bool want, unsigned long v0)
{
	apply(addr, family, want);
#ifndef __x86_64__	/* x86: the tracker's step was a locked instruction, a full barrier */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
	if (__atomic_load_n(&version, __ATOMIC_SEQ_CST) != v0)
		settle(addr, family);
}

/* --- epoll ----------------------------------------------------------- */

/*
 * After a successful epoll_ctl (a DEL whatever its result: a registration
 * the kernel does not know holds nothing).  ADD and MOD end the hold of
 * the registration's old value and take one of the new value if it may be
 * a pointer; MOD arms a one-shot registration again.
 */
void odebug_held_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t data)
{
	uintptr_t old = 0, addr = 0;
	struct hold *h;
	bool take = op != EPOLL_CTL_DEL && odebug_held_pointer(data), old_held = false;
	unsigned long v0;

	if (!take && !odebug_held_fd_marked(fd))
		return;		/* nothing held before, nothing now */
	if (!mapped())
		return;
	hold_lock();
	h = find_key(ODEBUG_HELD_EPOLL, (uint64_t)fd, epfd);
	if (h && (!take || h->addr != data))
		old = drop(h), h = NULL;
	if (take) {
		if (!h)
			h = add(ODEBUG_HELD_EPOLL, (uint64_t)fd, epfd, (uintptr_t)data);
		if (h) {
			disarm(h);
			h->flags = events & EPOLLONESHOT ? HOLD_ONESHOT : 0;
			arm(h);
			addr = h->addr;
			mark_fd(fd);
			mark_fd(epfd);
			mark_set(epfd);
		}
	}
	if (old)	/* another registration may hold it too */
		old_held = count_armed(ODEBUG_HELD_EPOLL, old) > 0;
	v0 = __atomic_load_n(&version, __ATOMIC_RELAXED);
	hold_unlock();
	if (old)
		settle_from(old, ODEBUG_HELD_EPOLL, old_held, v0);
	if (addr)
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

	for (i = 0; i < n && odebug_load(&H); i++) {
		uintptr_t addr = (uintptr_t)ev[i].data.u64, hit = 0;
		uint32_t j;

		if (!odebug_held_pointer(addr))
			continue;
		hold_lock();
		for (j = *ahead(addr); j; j = H->h[j - 1].anext) {
			struct hold *h = &H->h[j - 1];

			if (h->addr == addr && h->family == ODEBUG_HELD_EPOLL &&
			    h->owner == epfd &&
			    (h->flags & (HOLD_ARMED | HOLD_ONESHOT)) == (HOLD_ARMED | HOLD_ONESHOT)) {
				disarm(h);
				hit = addr;
				break;
			}
		}
		hold_unlock();
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
	uint32_t j;
	bool set;

	if (!odebug_load(&H))
		return;
	do {
		n = 0;
		hold_lock();
		unmark_fd(fd);
		set = is_set(fd);
		for (j = *khead(ODEBUG_HELD_EPOLL, (uint64_t)fd); j && n < 32; ) {
			struct hold *h = &H->h[j - 1];

			j = h->knext;
			if (h->family == ODEBUG_HELD_EPOLL && h->key == (uint64_t)fd)
				addrs[n++] = drop(h);
		}
		/* An epoll set closed: every record is looked at (a rare close). */
		for (j = 1; set && j <= H->used && n < 32; j++) {
			struct hold *h = &H->h[j - 1];

			if (h->addr && h->family == ODEBUG_HELD_EPOLL && h->owner == fd)
				addrs[n++] = drop(h);
		}
		if (n < 32)
			unmark_set(fd);
		hold_unlock();
		for (i = 0; i < n; i++)
			settle(addrs[i], ODEBUG_HELD_EPOLL);
	} while (n == 32);
}

/* --- POSIX timers ---------------------------------------------------- */

/* timer_create succeeded with a value that may be a pointer: held once armed. */
void odebug_held_timer_create(uint64_t id, int ver, uintptr_t value, uintptr_t fn)
{
	struct hold *h;
	uintptr_t old = 0;

	if (!mapped())
		return;
	hold_lock();
	h = find_key(ODEBUG_HELD_TIMER, id, ver);
	if (h)		/* a deleted timer's id we missed: it is another timer now */
		old = drop(h);
	h = add(ODEBUG_HELD_TIMER, id, ver, value);
	if (h)
		h->fn = fn;
	hold_unlock();
	if (old)
		settle(old, ODEBUG_HELD_TIMER);
}

/* timer_settime succeeded: armed (a non-zero it_value) or disarmed. */
void odebug_held_timer_set(uint64_t id, int ver, bool armed)
{
	struct hold *h;
	uintptr_t addr = 0;
	bool want = false;
	unsigned long v0;

	if (!odebug_load(&H))
		return;
	hold_lock();
	h = find_key(ODEBUG_HELD_TIMER, id, ver);
	if (h && !!(h->flags & HOLD_ARMED) != armed) {
		if (armed)
			arm(h);
		else
			disarm(h);
		addr = h->addr;
		want = count_armed(ODEBUG_HELD_TIMER, addr) > 0;
	}
	v0 = __atomic_load_n(&version, __ATOMIC_RELAXED);
	hold_unlock();
	if (addr)
		settle_from(addr, ODEBUG_HELD_TIMER, want, v0);
}

void odebug_held_timer_delete(uint64_t id, int ver)
{
	struct hold *h;
	uintptr_t addr = 0;

	if (!odebug_load(&H))
		return;
	hold_lock();
	h = find_key(ODEBUG_HELD_TIMER, id, ver);
	if (h)
		addr = drop(h);
	hold_unlock();
	if (addr)
		settle(addr, ODEBUG_HELD_TIMER);
}

/*
 * At dlclose (held-module.c): the first armed timer whose SIGEV_THREAD
 * function lies in [@lo, @hi), its id in *@id; 0 when none.  Every
 * record is looked at (a rare call).
 */
uintptr_t odebug_held_timer_fn_in(uintptr_t lo, uintptr_t hi, uint64_t *id)
{
	uintptr_t fn = 0;
	uint32_t j;

	if (!odebug_load(&H))
		return 0;
	hold_lock();
	for (j = 1; j <= H->used && !fn; j++) {
		const struct hold *h = &H->h[j - 1];

		if (h->addr && h->family == ODEBUG_HELD_TIMER && (h->flags & HOLD_ARMED) &&
		    h->fn >= lo && h->fn < hi && h->gen == gen) {
			fn = h->fn;
			*id = h->key;
		}
	}
	hold_unlock();
	return fn;
}

/* --- the free check: still held?  the fixup, the report line ---------- */

#define BATCH 16

/* Copies of the armed records of (@family, @addr); at most BATCH.  Locks. */
static unsigned int snapshot(int family, uintptr_t addr, struct hold *out)
{
	unsigned int n = 0;
	uint32_t i;

	if (!odebug_load(&H))
		return 0;
	hold_lock();
	for (i = *ahead(addr); i && n < BATCH; i = H->h[i - 1].anext) {
		const struct hold *h = &H->h[i - 1];

		if (h->addr == addr && h->family == family && (h->flags & HOLD_ARMED))
			out[n++] = *h;
	}
	hold_unlock();
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

/* One fdinfo line: "tfd: <fd> events: <hex> data: <hex> ...", for @fd and @addr? */
static bool line_matches(const char *line, int fd, uintptr_t addr)
{
	const char *p, *dp;

	if (strncmp(line, "tfd:", 4) || number(line + 4, 10, &p) != (unsigned long)fd)
		return false;
	dp = strstr(p, " data:");
	return dp && number(dp + 6, 16, &p) == addr;
}

/*
 * Is @fd registered in epoll set @epfd with data @addr?  The set's
 * /proc/self/fdinfo lists each registration on a line of its own.  Raw
 * system calls and a small stack buffer, lines joined across refills.
 * Unreadable (no /proc): the record is believed.
 */
static bool in_fdinfo(int epfd, int fd, uintptr_t addr)
{
	char path[40] = "/proc/self/fdinfo/", line[160], buf[1024];
	struct odebug_buf b;
	size_t ll = 0;
	ssize_t r, i;
	bool found = false;
	int f;

	odebug_buf_init_mem(&b, path + 18, sizeof(path) - 19);
	odebug_put_dec(&b, (unsigned long)epfd);
	path[18 + b.len] = '\0';
	f = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return true;
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
	return found;
}

/* Does @h still hold its value, as the kernel says now?  No lock held. */
static bool hold_is_live(const struct hold *h)
{
	if (h->gen != odebug_load(&gen))
		return false;	/* made before a fork() this process is the child of */
	if (h->family == ODEBUG_HELD_EPOLL)
		return in_fdinfo(h->owner, (int)h->key, h->addr);
	return !odebug_held_timer_ops || odebug_held_timer_ops->armed(h->key, h->owner);
}

/* The record of @c as it is now (the lock held), if it is still that hold. */
static struct hold *again(const struct hold *c)
{
	struct hold *h = find_key(c->family, c->key, c->owner);

	return h && h->addr == c->addr ? h : NULL;
}

/*
 * At the free check, before "free active" is reported for a held type's
 * tracker: ask the kernel.  Holds it denies (an expired one-shot timer, a
 * registration that went with a close we did not see, one inherited over
 * fork) end now; true when none is left, and the free check then drops
 * the tracker silently.  Not a held type: false, at once.
 */
bool odebug_held_released(const struct odebug_snapshot *o)
{
	struct hold c[BATCH];
	unsigned int n, i, live = 0;
	int family;

	if (odebug_held_io_descr(o->descr))	/* AIO, io_uring: held-io.c */
		return odebug_held_io_released(o);
	if (o->descr != &odebug_epoll_descr && o->descr != &odebug_ptimer_descr)
		return odebug_held_ext_released(o);	/* held-ext.h's families */
	family = o->descr == &odebug_epoll_descr ? ODEBUG_HELD_EPOLL : ODEBUG_HELD_TIMER;
	n = snapshot(family, o->addr - (uintptr_t)family, c);
	for (i = 0; i < n; i++) {
		struct hold *h;

		if (hold_is_live(&c[i])) {
			live++;
			continue;
		}
		hold_lock();
		h = again(&c[i]);
		if (h && family == ODEBUG_HELD_EPOLL)
			drop(h);
		else if (h)
			disarm(h);
		hold_unlock();
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
	struct hold c[BATCH];
	unsigned int n, i;

	if (state != ODEBUG_STATE_ACTIVE)
		return false;
	while ((n = snapshot(family, addr, c))) {
		for (i = 0; i < n; i++) {
			struct hold *h;

			if (family == ODEBUG_HELD_EPOLL)
				syscall(SYS_epoll_ctl, c[i].owner, EPOLL_CTL_DEL, (int)c[i].key,
					NULL);
			else if (odebug_held_timer_ops)
				odebug_held_timer_ops->disarm(c[i].key, c[i].owner);
			hold_lock();
			h = again(&c[i]);
			if (h && family == ODEBUG_HELD_EPOLL)
				drop(h);
			else if (h)
				disarm(h);
			hold_unlock();
		}
	}
	odebug_builtin_step(t, descr_of(family), BUILTIN_UNLOCK, 0);
	return true;
}

/* A report's hint: a SIGEV_THREAD timer's function, as the kernel names a timer's. */
static void *timer_hint(void *t)
{
	struct hold c[BATCH];

	if (snapshot(ODEBUG_HELD_TIMER, (uintptr_t)t - ODEBUG_HELD_TIMER, c))
		return (void *)c[0].fn;
	return NULL;
}

/* Every value may be held: untracked is never "not available" (every family's). */
bool odebug_held_any_value(void *addr)
{
	(void)addr;
	return true;
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
bool odebug_held_describe(const struct odebug_snapshot *o, char *buf, size_t cap)
{
	struct hold c[BATCH];
	struct odebug_buf b;
	unsigned int n;
	int family;

	if (odebug_held_io_descr(o->descr))
		return odebug_held_io_describe(o, buf, cap);
	if (o->descr != &odebug_epoll_descr && o->descr != &odebug_ptimer_descr)
		return odebug_held_ext_describe(o, buf, cap);
	family = o->descr == &odebug_epoll_descr ? ODEBUG_HELD_EPOLL : ODEBUG_HELD_TIMER;
	n = snapshot(family, o->addr - (uintptr_t)family, c);
	if (!n)
		return false;
	odebug_buf_init_mem(&b, buf, cap - 1);
	if (family == ODEBUG_HELD_EPOLL) {
		odebug_puts(&b, "registered on epoll fd ");
		odebug_put_dec(&b, (unsigned long)c[0].owner);
		odebug_puts(&b, " for fd ");
		odebug_put_dec(&b, (unsigned long)c[0].key);
		odebug_puts(&b, c[0].flags & HOLD_ONESHOT ? " (EPOLLONESHOT)" : "");
		odebug_puts(&b, ", data.ptr ");
	} else {
		odebug_puts(&b, "timer ");
		odebug_put_hex(&b, (uintptr_t)c[0].key);
		odebug_puts(&b, " armed, sival_ptr ");
	}
	odebug_put_hex(&b, c[0].addr);
	if (n > 1) {
		odebug_puts(&b, ", and ");
		odebug_put_dec(&b, n - 1);
		odebug_puts(&b, " more");
	}
	buf[b.len] = '\0';
	return true;
}

/* In a fork() child: holds made before are the parent's (held.h). */
static void fork_child(void)
{
	/* Only once something was held: a write would copy the page in each child. */
	if (odebug_load(&H))
		odebug_store(&gen, (uint16_t)(odebug_load(&gen) + 1));
}

/* From the start-up (builtin.c's odebug_builtin_init): on, with check_held=1. */
void odebug_held_init(void)
{
	if (!odebug_opt.check_held || odebug_load(&odebug_held_on))
		return;
	pthread_atfork(NULL, NULL, fork_child);
	odebug_store(&odebug_held_on, 1);
}
