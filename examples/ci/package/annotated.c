/* SPDX-License-Identifier: MIT */
/*
 * A program built against libodebug as a library (find_package, or
 * dependency('libodebug')): a connection with an annotated timer, freed
 * while the timer is armed.  Run with ODEBUG=1, libodebug reports the
 * free() and the fixup disarms the timer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <odebug.h>

struct timer {
	int armed;
};

struct conn {
	int fd;
	struct timer keepalive;
};

static const struct debug_obj_descr timer_descr;

/* Freed while armed: disarm it, then stop tracking it. */
static bool timer_fixup_free(void *addr, enum debug_obj_state state)
{
	struct timer *t = addr;

	if (state != ODEBUG_STATE_ACTIVE)
		return false;
	t->armed = 0;
	debug_object_deactivate(t, &timer_descr);
	debug_object_free(t, &timer_descr);
	return true;
}

static const struct debug_obj_descr timer_descr = {
	.name = "conn_timer",
	.fixup_free = timer_fixup_free,
};

__attribute__((noinline)) static void conn_close(struct conn *c)
{
	free(c);	/* the keepalive timer is still armed */
}

int main(void)
{
	struct conn *c = calloc(1, sizeof(*c));

	if (!c)
		return 1;
	debug_object_init(&c->keepalive, &timer_descr);
	debug_object_activate(&c->keepalive, &timer_descr);
	c->keepalive.armed = 1;
	conn_close(c);
	puts("annotated: done");
	return 0;
}
