/* SPDX-License-Identifier: MIT */
/*
 * held.h - memory the kernel and libc hold: a value of the program's that
 * they keep and hand back later (epoll's data.ptr with the next event, a
 * POSIX timer's sival_ptr to its callback or signal).  Each family is a
 * descriptor of lib/checks/held/held.c; a hold is a record of lib/checks/held/held-store.c's
 * one store (who holds which value) plus a tracker in the table, ACTIVE
 * while anything holds the value, so the free check (free, realloc, munmap, mremap, returned
 * frames, dlclose) finds memory freed while held at no new cost.
 *
 * The tracker sits at the held address plus the family's number (1: epoll,
 * 2: POSIX timers): an odd address inside the same 8-byte word, which no
 * annotation uses, so a hold never meets the tracker of a mutex or an
 * annotated object that starts at the same address, and two families
 * holding one address have a tracker each (lib/checks/held/held-io.h's AIO and
 * io_uring share offset 7, the last).  Only 8-aligned values count
 * as pointers, so the tracker and the value are in the same released
 * block.
 */
#ifndef ODEBUG_HELD_H
#define ODEBUG_HELD_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "core.h"

enum odebug_held_family {
	ODEBUG_HELD_EPOLL = 1,
	ODEBUG_HELD_TIMER = 2,
	ODEBUG_HELD_FAMILIES,
};

extern ODEBUG_HIDDEN const struct debug_obj_descr odebug_epoll_descr, odebug_ptimer_descr;

/* Set once on (check_held=1): the interposers' one load. */
extern ODEBUG_HIDDEN int odebug_held_on;
/* Registrations with EPOLLONESHOT armed: epoll_wait looks only when nonzero. */
extern ODEBUG_HIDDEN unsigned long odebug_held_oneshots;

/*
 * Descriptors below this, one bit each: [0] those with a hold (close
 * looks; above the bound, close always looks), [1] held.c's epoll sets
 * with a registration recorded.  Side by side, so that a descriptor's two
 * words share a page.
 */
#define ODEBUG_HELD_FDS	65536
extern ODEBUG_HIDDEN uint64_t odebug_held_fdbits[ODEBUG_HELD_FDS / 64][2];

/*
 * Before a hold is taken (the interposers test odebug_held_on first:
 * disabled, one load and one predictable branch), then the interposers'
 * common test, odebug_interposer_ready(): the first hold starts libodebug.
 */
static inline bool odebug_held_active(void)
{
	return odebug_load(&odebug_held_on) && odebug_interposer_ready();
}

/*
 * The same without starting libodebug: for the calls that only end or
 * look at holds (close, the waits, timer_settime, timer_delete), which
 * every program makes; a hold exists only once on.
 */
static inline bool odebug_held_live(void)
{
	return odebug_load(&odebug_mode) == ODEBUG_MODE_ON && !odebug_tls.guard;
}

/* Could @v be a pointer into our memory?  (lib/checks/held/held.c says why this test.) */
static inline bool odebug_held_pointer(uint64_t v)
{
	return v >= 65536 && !(v & 7) && v < (1ull << 47);
}

/* Does closing @fd end a hold?  A load for a descriptor below ODEBUG_HELD_FDS. */
static inline bool odebug_held_fd_marked(int fd)
{
	if ((unsigned int)fd >= ODEBUG_HELD_FDS)
		return fd >= 0;
	return odebug_load(&odebug_held_fdbits[fd / 64][0]) >> (fd % 64) & 1;
}

/*
 * The events (lib/checks/held/held.c), called after the real call succeeded.
 * odebug_held_epoll_ctl() and odebug_held_timer_set() keep errno (every
 * call of a server's makes them: the interposers save nothing).
 */
void odebug_held_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t data);
void odebug_held_epoll_delivered(int epfd, const void *events, int n);
void odebug_held_close(int fd);

/* POSIX timers: @ver names the glibc version of the call (0: 2.2.5's, 1: later). */
void odebug_held_timer_create(uint64_t id, int ver, uintptr_t value, uintptr_t fn);
void odebug_held_timer_set(uint64_t id, int ver, bool armed);
void odebug_held_timer_delete(uint64_t id, int ver);

/* A report's holder line ends: ", and N more" (lib/checks/held/held.c, for every family). */
void odebug_held_end_line(struct odebug_buf *b, char *buf, unsigned long more);

/* What preload/timer.c gives lib/checks/held/held.c: glibc's timer_gettime and timer_settime, per version. */
struct odebug_held_timer_ops {
	bool (*armed)(uint64_t id, int ver);	/* timer_gettime: it_value not zero */
	void (*disarm)(uint64_t id, int ver);	/* timer_settime with a zero it_value */
};
extern ODEBUG_HIDDEN const struct odebug_held_timer_ops *odebug_held_timer_ops;

/* Every family's descriptors and trackers (held.c). */
bool odebug_held_any_value(void *addr);
struct debug_obj_descr;
void odebug_held_track(void *t, const struct debug_obj_descr *d,
		       const struct debug_obj_descr *alt, bool want);
void odebug_held_settle(uintptr_t addr, int family, bool (*holds)(uintptr_t addr, int family),
			void (*apply)(uintptr_t addr, int family, bool want));

/* "held.c": memory the kernel and libc hold (held.h) */

/* "held-store.c": the records' lock across fork() (init.c's handlers) */
void odebug_holds_fork_lock(void);
void odebug_holds_fork_unlock(void);

#endif /* ODEBUG_HELD_H */
