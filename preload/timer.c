/* SPDX-License-Identifier: MIT */
/*
 * timer.c - the timer_create, timer_settime and timer_delete interposers:
 * a POSIX timer holds its sigev_value.sival_ptr and hands it to its
 * SIGEV_THREAD function or signal handler when it fires, so memory freed
 * while its timer is armed is "free active" (lib/checks/held/held.c), and the fixup
 * disarms the timer.  An armed SIGEV_THREAD timer holds its function's
 * code too, whatever its value (lib/checks/held/held-module.c asks at dlclose).
 * Disabled, one branch and a tail call; enabled, the
 * real call first, then one event of lib/checks/held/held.c; glibc's return value and
 * errno unchanged, and a failed call holds nothing.
 *
 * glibc has two ABIs: timer_t as an int index (the 2.2.5 node, for
 * programs linked before glibc 2.3.3) and timer_t as a pointer-sized id
 * (2.3.3, the same function again as 2.34's default).  Each interposer
 * forwards to the same version, and lib/checks/held/held.c keeps the version with the
 * id, so the fixup and the query at the free check call the matching
 * timer_settime and timer_gettime.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <time.h>

#include "held.h"
#include "interpose.h"

/* Disabled: one load, one branch, a tail call (the enabled path is out of line). */
#define CHECKING odebug_load(&odebug_held_on)

#ifdef __x86_64__
#define ODEBUG_TIMER_OLD 1	/* the int-id ABI at GLIBC_2.2.5 */
#endif

/* Does @evp hand sival_ptr back (SIGEV_NONE and a NULL sigevent do not)? */
static bool hands_value(const struct sigevent *evp)
{
	return evp && (evp->sigev_notify == SIGEV_SIGNAL || evp->sigev_notify == SIGEV_THREAD ||
		       evp->sigev_notify == SIGEV_THREAD_ID);
}

/*
 * A timer holds its sival_ptr, if it may be a pointer, and its
 * SIGEV_THREAD function, whatever the value (lib/checks/held/held-module.c asks for
 * the function at dlclose).  A timer that holds neither still ends the
 * record of its id: that one is of a deleted timer whose timer_delete
 * went by unseen (a signal handler's, while its thread was inside
 * libodebug), and glibc gives a new timer a deleted one's id.
 */
static void created(uint64_t id, int ver, const struct sigevent *evp)
{
	uintptr_t value = hands_value(evp) ? (uintptr_t)evp->sigev_value.sival_ptr : 0;
	uintptr_t fn = evp && evp->sigev_notify == SIGEV_THREAD ?
		       (uintptr_t)evp->sigev_notify_function : 0;
	int saved;

	if (!odebug_held_pointer(value))
		value = 0;
	if (!value && !fn) {
		if (odebug_held_live()) {
			saved = errno;
			odebug_held_timer_delete(id, ver);
			errno = saved;
		}
		return;
	}
	if (!odebug_held_active())	/* the first hold starts libodebug */
		return;
	saved = errno;
	odebug_held_timer_create(id, ver, value, fn);
	errno = saved;
}

/* Only once on: a timer made before holds nothing of ours.  errno: kept by lib/checks/held/held.c. */
static void set(uint64_t id, int ver, const struct itimerspec *v)
{
	if (odebug_held_live())
		odebug_held_timer_set(id, ver, v->it_value.tv_sec || v->it_value.tv_nsec);
}

static void deleted(uint64_t id, int ver)
{
	int saved;

	if (!odebug_held_live())
		return;
	saved = errno;
	odebug_held_timer_delete(id, ver);
	errno = saved;
}

/* --- timer_t as an id (2.3.3 and 2.34) -------------------------------- */

static __attribute__((noinline)) int
create_on(int (*next)(clockid_t, struct sigevent *, timer_t *), clockid_t c,
			 struct sigevent *evp, timer_t *id)
{
	int r;

	r = next(c, evp, id);
	if (r == 0)
		created((uint64_t)(uintptr_t)*id, 1, evp);
	return r;
}

ODEBUG_INLINE int create(int (*next)(clockid_t, struct sigevent *, timer_t *), clockid_t c,
			 struct sigevent *evp, timer_t *id)
{
	if (likely(!CHECKING))
		return next(c, evp, id);
	return create_on(next, c, evp, id);
}

static __attribute__((noinline)) int
settime_on(int (*next)(timer_t, int, const struct itimerspec *,
				      struct itimerspec *),
			  timer_t id, int flags, const struct itimerspec *v, struct itimerspec *old)
{
	int r;

	r = next(id, flags, v, old);
	if (r == 0)
		set((uint64_t)(uintptr_t)id, 1, v);
	return r;
}

ODEBUG_INLINE int settime(int (*next)(timer_t, int, const struct itimerspec *,
				      struct itimerspec *),
			  timer_t id, int flags, const struct itimerspec *v, struct itimerspec *old)
{
	if (likely(!CHECKING))
		return next(id, flags, v, old);
	return settime_on(next, id, flags, v, old);
}

static __attribute__((noinline)) int
delete__on(int (*next)(timer_t), timer_t id)
{
	int r;

	r = next(id);
	if (r == 0)
		deleted((uint64_t)(uintptr_t)id, 1);
	return r;
}

ODEBUG_INLINE int delete_(int (*next)(timer_t), timer_t id)
{
	if (likely(!CHECKING))
		return next(id);
	return delete__on(next, id);
}

#define INTERPOSE_TIMER(ret, name, params, args, impl)				\
	INTERPOSE(ret, name, 333, "GLIBC_2.3.3", "@GLIBC_2.3.3", params, args, impl); \
	INTERPOSE(ret, name, 234, "GLIBC_2.34", "@@GLIBC_2.34", params, args, impl)

#ifdef ODEBUG_TIMER_OLD
INTERPOSE_TIMER(int, timer_create, (clockid_t c, struct sigevent *evp, timer_t *id),
		(c, evp, id), create);
INTERPOSE_TIMER(int, timer_settime,
		(timer_t id, int flags, const struct itimerspec *v, struct itimerspec *old),
		(id, flags, v, old), settime);
INTERPOSE_TIMER(int, timer_delete, (timer_t id), (id), delete_);
#else	/* glibc's first node already has the id ABI */
INTERPOSE_BASE_234(int, timer_create, (clockid_t c, struct sigevent *evp, timer_t *id),
		   (c, evp, id), create);
INTERPOSE_BASE_234(int, timer_settime,
		   (timer_t id, int flags, const struct itimerspec *v, struct itimerspec *old),
		   (id, flags, v, old), settime);
INTERPOSE_BASE_234(int, timer_delete, (timer_t id), (id), delete_);
#endif

/* --- timer_t as an int (2.2.5 on x86-64) ------------------------------ */

#ifdef ODEBUG_TIMER_OLD
static __attribute__((noinline)) int
create_old_on(int (*next)(clockid_t, struct sigevent *, int *), clockid_t c,
			     struct sigevent *evp, int *id)
{
	int r;

	r = next(c, evp, id);
	if (r == 0)
		created((uint64_t)(unsigned int)*id, 0, evp);
	return r;
}

ODEBUG_INLINE int create_old(int (*next)(clockid_t, struct sigevent *, int *), clockid_t c,
			     struct sigevent *evp, int *id)
{
	if (likely(!CHECKING))
		return next(c, evp, id);
	return create_old_on(next, c, evp, id);
}

static __attribute__((noinline)) int
settime_old_on(int (*next)(int, int, const struct itimerspec *,
					  struct itimerspec *),
			      int id, int flags, const struct itimerspec *v, struct itimerspec *old)
{
	int r;

	r = next(id, flags, v, old);
	if (r == 0)
		set((uint64_t)(unsigned int)id, 0, v);
	return r;
}

ODEBUG_INLINE int settime_old(int (*next)(int, int, const struct itimerspec *,
					  struct itimerspec *),
			      int id, int flags, const struct itimerspec *v, struct itimerspec *old)
{
	if (likely(!CHECKING))
		return next(id, flags, v, old);
	return settime_old_on(next, id, flags, v, old);
}

static __attribute__((noinline)) int
delete_old_on(int (*next)(int), int id)
{
	int r;

	r = next(id);
	if (r == 0)
		deleted((uint64_t)(unsigned int)id, 0);
	return r;
}

ODEBUG_INLINE int delete_old(int (*next)(int), int id)
{
	if (likely(!CHECKING))
		return next(id);
	return delete_old_on(next, id);
}

INTERPOSE(int, timer_create, base, ODEBUG_V_BASE, "@" ODEBUG_V_BASE,
	  (clockid_t c, struct sigevent *evp, int *id), (c, evp, id), create_old);
INTERPOSE(int, timer_settime, base, ODEBUG_V_BASE, "@" ODEBUG_V_BASE,
	  (int id, int flags, const struct itimerspec *v, struct itimerspec *old),
	  (id, flags, v, old), settime_old);
INTERPOSE(int, timer_delete, base, ODEBUG_V_BASE, "@" ODEBUG_V_BASE, (int id), (id), delete_old);

/* Not interposed: glibc's own, bound to the version here. */
int odebug_timer_gettime_old(int id, struct itimerspec *v);
__asm__(".symver odebug_timer_gettime_old,timer_gettime@" ODEBUG_V_BASE);
#endif

/* --- lib/checks/held/held.c's questions ------------------------------------------ */

/* Is the timer armed (it_value not zero)?  A timer gone (EINVAL) is not. */
static bool armed(uint64_t id, int ver)
{
	struct itimerspec v;
	int saved = errno, r;

#ifdef ODEBUG_TIMER_OLD
	if (ver == 0)
		r = odebug_timer_gettime_old((int)id, &v);
	else
#endif
		r = timer_gettime((timer_t)(uintptr_t)id, &v);
	errno = saved;
	return r == 0 && (v.it_value.tv_sec || v.it_value.tv_nsec);
}

/* The fixup: the timer disarmed, by glibc's own timer_settime of its version. */
static void disarm(uint64_t id, int ver)
{
	static const struct itimerspec zero;
	int saved = errno;

#ifdef ODEBUG_TIMER_OLD
	if (ver == 0)
		next_timer_settime_base((int)id, 0, &zero, NULL);
	else
#endif
		next_timer_settime_234((timer_t)(uintptr_t)id, 0, &zero, NULL);
	errno = saved;
}

static const struct odebug_held_timer_ops ops = { armed, disarm };

/* Before any timer exists: lib/checks/held/held.c knows nothing of glibc's versions. */
__attribute__((constructor)) static void timer_ops(void)
{
	odebug_held_timer_ops = &ops;
}
