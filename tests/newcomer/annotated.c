/* SPDX-License-Identifier: MIT */
/* An annotated timer type: an active timer's memory freed. */
#include <stdlib.h>
#include <odebug.h>

struct timer {
	void (*fn)(struct timer *);
	long expires;
};

static void *timer_hint(void *addr)
{
	return (void *)((struct timer *)addr)->fn;
}

static bool timer_fixup_free(void *addr, enum debug_obj_state state)
{
	extern const struct debug_obj_descr timer_descr;

	if (state != ODEBUG_STATE_ACTIVE)
		return false;
	debug_object_deactivate(addr, &timer_descr);	/* taken off the wheel */
	debug_object_free(addr, &timer_descr);
	return true;
}

const struct debug_obj_descr timer_descr = {
	.name = "timer",
	.debug_hint = timer_hint,
	.fixup_free = timer_fixup_free,
};

static void on_expire(struct timer *t)
{
	(void)t;
}

__attribute__((noinline)) static void conn_free(struct timer *t)
{
	free(t);		/* the bug: the timer is still armed */
}

int main(void)
{
	struct timer *t = calloc(1, sizeof(*t));

	if (!t)
		return 2;
	t->fn = on_expire;
	debug_object_init(t, &timer_descr);
	debug_object_activate(t, &timer_descr);
	conn_free(t);
	return 0;
}
