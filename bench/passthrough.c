/* SPDX-License-Identifier: MIT */
/*
 * passthrough.c - the cheapest interposer there is, for bench-held-ops'
 * control: epoll_ctl, epoll_wait and timer_settime that only call the
 * next definition.  What it costs is what any preloaded library in front
 * of these calls costs on the machine (an extra module's code and data
 * pages after each system call), not libodebug's work.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sys/epoll.h>
#include <time.h>

static int (*next_ctl)(int, int, int, struct epoll_event *);
static int (*next_wait)(int, struct epoll_event *, int, int);
static int (*next_settime)(timer_t, int, const struct itimerspec *, struct itimerspec *);

__attribute__((constructor)) static void resolve(void)
{
	next_ctl = (int (*)(int, int, int, struct epoll_event *))dlsym(RTLD_NEXT, "epoll_ctl");
	next_wait = (int (*)(int, struct epoll_event *, int, int))dlsym(RTLD_NEXT, "epoll_wait");
	next_settime = (int (*)(timer_t, int, const struct itimerspec *, struct itimerspec *))
		dlsym(RTLD_NEXT, "timer_settime");
}

__attribute__((visibility("default"))) int epoll_ctl(int epfd, int op, int fd,
						     struct epoll_event *ev)
{
	return next_ctl(epfd, op, fd, ev);
}

__attribute__((visibility("default"))) int epoll_wait(int epfd, struct epoll_event *ev,
						      int max, int timeout)
{
	return next_wait(epfd, ev, max, timeout);
}

__attribute__((visibility("default"))) int timer_settime(timer_t t, int flags,
							 const struct itimerspec *v,
							 struct itimerspec *old)
{
	return next_settime(t, flags, v, old);
}
