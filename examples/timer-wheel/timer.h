/* SPDX-License-Identifier: MIT */
/*
 * timer.h - a small timer wheel, annotated for libodebug the way the
 * kernel's timer code is.
 */
#ifndef TIMER_H
#define TIMER_H

#include <stdbool.h>

struct timer {
	struct timer *next;
	struct timer **pprev;		/* NULL when not armed */
	unsigned long expires;
	void (*callback)(struct timer *t);
	unsigned int magic;		/* TIMER_MAGIC while the timer is valid */
};

#define TIMER_MAGIC		0x746d7221u
/* "tsta": marks a statically initialised timer for is_static_object. */
#define TIMER_STATIC_MARK	((struct timer **)0x74737461)

#define TIMER_INITIALIZER(cb) \
	{ .next = 0, .pprev = TIMER_STATIC_MARK, .expires = 0, .callback = (cb), .magic = TIMER_MAGIC }

void timer_init(struct timer *t, void (*callback)(struct timer *t));
void timer_add(struct timer *t, unsigned long expires);
bool timer_del(struct timer *t);
bool timer_pending(const struct timer *t);

/* The clock: run every timer whose time has come. */
unsigned long timer_now(void);
void timer_tick(void);
unsigned long timers_armed(void);

#endif
