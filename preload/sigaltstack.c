/* SPDX-License-Identifier: MIT */
/*
 * sigaltstack.c - the sigaltstack interposer: the kernel holds a
 * thread's alternate signal stack until SS_DISABLE, another one, or the
 * thread's exit, so memory freed while installed is "free active"
 * (lib/checks/held/held-sigstack.c).  Disabled, one branch and a tail call; enabled,
 * the real call first, then one event; glibc's return value and errno
 * unchanged, and a failed call holds nothing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>

#include "held-ext.h"
#include "interpose.h"

#define CHECKING odebug_load(&odebug_held_on)

static __attribute__((noinline)) int
sigaltstack_on(int (*next)(const stack_t *, stack_t *), const stack_t *ss, stack_t *old)
{
	int r = next(ss, old), saved;

	if (r != 0 || !ss)
		return r;
	if (!(ss->ss_flags & SS_DISABLE) && odebug_held_pointer((uintptr_t)ss->ss_sp)) {
		if (!odebug_held_active())	/* the first hold starts libodebug */
			return r;
	} else if (!odebug_load(&odebug_hold_count[ODEBUG_HELD_SIGSTACK]) ||
		   !odebug_held_live()) {
		return r;
	}
	saved = errno;
	odebug_held_sigstack_set(ss);
	errno = saved;
	return r;
}

ODEBUG_INLINE int sigaltstack_(int (*next)(const stack_t *, stack_t *), const stack_t *ss,
			       stack_t *old)
{
	if (likely(!CHECKING))
		return next(ss, old);
	return sigaltstack_on(next, ss, old);
}
INTERPOSE(int, sigaltstack, only, ODEBUG_V_BASE, "@@" ODEBUG_V_BASE,
	  (const stack_t *ss, stack_t *old), (ss, old), sigaltstack_);

/* lib/checks/held/held-sigstack.c's question and fixup: glibc's own call, not this one. */
__attribute__((constructor)) static void sigaltstack_call(void)
{
	odebug_held_sigaltstack_call = next_sigaltstack_only;
}
