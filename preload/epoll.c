/* SPDX-License-Identifier: MIT */
/*
 * epoll.c - the epoll_ctl, epoll_wait and close interposers: an epoll set
 * holds each registration's data value and hands it back with the next
 * event, so memory freed while registered by data.ptr is "free active"
 * (lib/checks/held/held.c).  Disabled, one branch and a tail call; enabled, the real
 * call first, then one event of lib/checks/held/held.c; glibc's return value and
 * errno unchanged, and a failed call holds nothing.  A wait is also the
 * poll at which a close of a descriptor a libevent event watches is
 * judged (lib/checks/fd/watch.c): one more load, before the wait.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "fd.h"
#include "held.h"
#include "interpose.h"

/* Disabled: one load, one branch, a tail call (the enabled path is out of line). */
#define CHECKING odebug_load(&odebug_held_on)

/* epoll's and close's baseline nodes (x86-64: 2.3.2; elsewhere glibc's first). */
#ifdef __x86_64__
#define ODEBUG_V_EPOLL "GLIBC_2.3.2"
#define ODEBUG_V_EPOLL_PWAIT "GLIBC_2.6"
#else
#define ODEBUG_V_EPOLL ODEBUG_V_BASE
#define ODEBUG_V_EPOLL_PWAIT ODEBUG_V_BASE
#endif

static __attribute__((noinline)) int
ctl_on(int (*next)(int, int, int, struct epoll_event *), int epfd, int op,
		      int fd, struct epoll_event *ev)
{
	int r;

	r = next(epfd, op, fd, ev);
	/* A DEL the kernel refused: nothing registered is held either. */
	if (r != 0 && op != EPOLL_CTL_DEL)
		return r;
	/* odebug_held_epoll_ctl() keeps errno: nothing to save here. */
	if (op != EPOLL_CTL_DEL && ev && odebug_held_pointer(ev->data.u64)) {
		if (odebug_held_active())	/* the first hold starts libodebug */
			odebug_held_epoll_ctl(epfd, op, fd, ev->events, ev->data.u64);
	} else if (unlikely(odebug_held_fd_marked(fd)) && odebug_held_live()) {
		/* Else nothing held before, nothing now: a load, and nothing started. */
		odebug_held_epoll_ctl(epfd, op, fd, 0, 0);
	}
	return r;
}

ODEBUG_INLINE int ctl(int (*next)(int, int, int, struct epoll_event *), int epfd, int op,
		      int fd, struct epoll_event *ev)
{
	if (likely(!CHECKING))
		return next(epfd, op, fd, ev);
	return ctl_on(next, epfd, op, fd, ev);
}
INTERPOSE(int, epoll_ctl, only, ODEBUG_V_EPOLL, "@@" ODEBUG_V_EPOLL,
	  (int epfd, int op, int fd, struct epoll_event *ev), (epfd, op, fd, ev), ctl);

/*
 * The waits: a one-shot registration whose event came holds nothing until
 * a MOD arms it again.  Only while one is armed (a load otherwise).
 * Before the wait, while a close of a watched descriptor waits to be
 * judged at its loop's next poll (lib/checks/fd/watch.c), the calling
 * thread's are judged: one more load.
 */
static __attribute__((noinline)) void delivered(int epfd, const struct epoll_event *ev, int n)
{
	int saved = errno;

	odebug_held_epoll_delivered(epfd, ev, n);
	errno = saved;
}

static __attribute__((noinline)) void polling(void)
{
	int saved = errno;

	odebug_fd_watch_poll();
	errno = saved;
}

#define WAITING (CHECKING || odebug_load(&odebug_fd_suspects))

static __attribute__((noinline)) int
wait__on(int (*next)(int, struct epoll_event *, int, int), int epfd,
			struct epoll_event *ev, int max, int timeout)
{
	int r;

	if (unlikely(odebug_load(&odebug_fd_suspects)))
		polling();
	r = next(epfd, ev, max, timeout);
	if (unlikely(odebug_load(&odebug_held_oneshots)) && r > 0 && odebug_held_live())
		delivered(epfd, ev, r);
	return r;
}

ODEBUG_INLINE int wait_(int (*next)(int, struct epoll_event *, int, int), int epfd,
			struct epoll_event *ev, int max, int timeout)
{
	if (likely(!WAITING))
		return next(epfd, ev, max, timeout);
	return wait__on(next, epfd, ev, max, timeout);
}
INTERPOSE(int, epoll_wait, only, ODEBUG_V_EPOLL, "@@" ODEBUG_V_EPOLL,
	  (int epfd, struct epoll_event *ev, int max, int timeout), (epfd, ev, max, timeout),
	  wait_);

static __attribute__((noinline)) int
pwait_on(int (*next)(int, struct epoll_event *, int, int, const sigset_t *),
			int epfd, struct epoll_event *ev, int max, int timeout, const sigset_t *ss)
{
	int r;

	if (unlikely(odebug_load(&odebug_fd_suspects)))
		polling();
	r = next(epfd, ev, max, timeout, ss);
	if (unlikely(odebug_load(&odebug_held_oneshots)) && r > 0 && odebug_held_live())
		delivered(epfd, ev, r);
	return r;
}

ODEBUG_INLINE int pwait(int (*next)(int, struct epoll_event *, int, int, const sigset_t *),
			int epfd, struct epoll_event *ev, int max, int timeout, const sigset_t *ss)
{
	if (likely(!WAITING))
		return next(epfd, ev, max, timeout, ss);
	return pwait_on(next, epfd, ev, max, timeout, ss);
}
INTERPOSE(int, epoll_pwait, only, ODEBUG_V_EPOLL_PWAIT, "@@" ODEBUG_V_EPOLL_PWAIT,
	  (int epfd, struct epoll_event *ev, int max, int timeout, const sigset_t *ss),
	  (epfd, ev, max, timeout, ss), pwait);

#ifdef ODEBUG_HAVE_EPOLL_PWAIT2
static __attribute__((noinline)) int
pwait2_on(int (*next)(int, struct epoll_event *, int, const struct timespec *,
				     const sigset_t *),
			 int epfd, struct epoll_event *ev, int max, const struct timespec *timeout,
			 const sigset_t *ss)
{
	int r;

	if (unlikely(odebug_load(&odebug_fd_suspects)))
		polling();
	r = next(epfd, ev, max, timeout, ss);
	if (unlikely(odebug_load(&odebug_held_oneshots)) && r > 0 && odebug_held_live())
		delivered(epfd, ev, r);
	return r;
}

ODEBUG_INLINE int pwait2(int (*next)(int, struct epoll_event *, int, const struct timespec *,
				     const sigset_t *),
			 int epfd, struct epoll_event *ev, int max, const struct timespec *timeout,
			 const sigset_t *ss)
{
	if (likely(!WAITING))
		return next(epfd, ev, max, timeout, ss);
	return pwait2_on(next, epfd, ev, max, timeout, ss);
}
INTERPOSE(int, epoll_pwait2, only, "GLIBC_2.35", "@@GLIBC_2.35",
	  (int epfd, struct epoll_event *ev, int max, const struct timespec *timeout,
	   const sigset_t *ss), (epfd, ev, max, timeout, ss), pwait2);
#endif

/*
 * close: the registrations of the descriptor end, and all of a set's when
 * it is one.  A descriptor that never held anything costs a load, and no
 * close starts libodebug (every program closes files).  A
 * close that failed (EBADF: not open) ends them too, since the
 * descriptor is not what was registered any more.  A descriptor another
 * owns (lib/checks/fd/fd.h: a stream's, a directory's) is judged first: one load
 * of its slot once any descriptor had an owner; a close by a non-owner is
 * reported and not made (0 returned).
 */
static __attribute__((noinline)) void closed(int fd)
{
	int saved = errno;

	odebug_held_close(fd);
	errno = saved;
}

static __attribute__((noinline)) bool kept(int fd)
{
	int saved = errno;
	bool r = odebug_fd_close_owned(fd, "close");

	errno = saved;
	return r;
}

static __attribute__((noinline)) int
close__on(int (*next)(int), int fd)
{
	int r;

	if (unlikely(odebug_fd_owned(fd)) && kept(fd))
		return 0;
	r = next(fd);
	if (CHECKING && unlikely(odebug_held_fd_marked(fd)) && odebug_held_live())
		closed(fd);
	return r;
}

ODEBUG_INLINE int close_(int (*next)(int), int fd)
{
	if (likely(!CHECKING && !odebug_load(&odebug_fd_tags)))
		return next(fd);
	return close__on(next, fd);
}
INTERPOSE(int, close, only, ODEBUG_V_BASE, "@@" ODEBUG_V_BASE, (int fd), (fd), close_);

/* fdsan's close with a tag closes through this interposer (lib/checks/fd/fdsan.c). */
__attribute__((constructor)) static void fd_close_call(void)
{
	odebug_fd_close_call = odebug_i_close_only;
}
