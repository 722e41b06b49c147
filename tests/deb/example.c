/* SPDX-License-Identifier: MIT */
/*
 * A connection with a timer inside, annotated for libodebug, and the bug
 * libodebug exists for: conn_close() frees a connection whose timer is
 * still armed.  Built against the installed package with pkg-config only
 * (tests/deb/check-deb.sh); the same free happens three times from one
 * place, so there is one report and a summary counting three.
 */
#include <stdio.h>
#include <stdlib.h>
#include <odebug.h>

struct timer {
	void (*fn)(void);
	int armed;
};

struct conn {
	int fd;
	struct timer keepalive;
};

void keepalive_expired(void);
void keepalive_expired(void) {}

static void *timer_hint(void *addr)
{
	return (void *)((struct timer *)addr)->fn;
}

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
	.debug_hint = timer_hint,
	.fixup_free = timer_fixup_free,
};

static void timer_arm(struct timer *t, void (*fn)(void))
{
	debug_object_init(t, &timer_descr);
	t->fn = fn;
	t->armed = 1;
	debug_object_activate(t, &timer_descr);
}

void conn_close(struct conn *c);
void conn_close(struct conn *c)
{
	free(c);	/* the bug: the keepalive timer is still armed */
}

int main(void)
{
	int i;

	for (i = 0; i < 3; i++) {
		struct conn *c = calloc(1, sizeof(*c));

		if (!c)
			return 1;
		timer_arm(&c->keepalive, keepalive_expired);
		conn_close(c);
	}
	printf("example: done\n");
	return 0;
}
