/* SPDX-License-Identifier: MIT */
/*
 * timer.c - a timer wheel: 256 slots, one tick per call to timer_tick().
 *
 * Like the kernel's timer wheel it trusts its callers: an armed timer whose
 * memory was freed and reused stays linked in a slot, and the damage shows
 * much later, when the wheel reaches that slot.  The wheel notices the
 * broken magic there and aborts, far from the code that freed the timer.
 * libodebug finds the culprit at the free() instead.
 */
#include <stdio.h>
#include <stdlib.h>

#include "odebug.h"
#include "timer.h"

#ifdef TIMER_FLOOR
/*
 * Benchmarks only (bench-timer-floor*, with ODEBUG_DISABLE): each
 * activate and deactivate replaced by the least a table of per-object
 * words can cost, one compare-and-swap on a 16-byte entry found by a hash
 * of the address, no lookup, no checks.  TIMER_FLOOR 1: the atomic (any
 * thread count); 2: cmpxchg without the lock prefix (one thread).
 */
#include <stdint.h>

static struct { uint64_t word, pad; } floor_words[8192];

static inline int floor_cas(const void *addr, uint64_t state)
{
	uint64_t *w = &floor_words[((uintptr_t)addr >> 3) * 0x9E3779B97F4A7C15ull >> 51].word;
	uint64_t old = __atomic_load_n(w, __ATOMIC_RELAXED);

#if TIMER_FLOOR == 2
	__asm__ volatile("cmpxchgq %2, %0" : "+m"(*w), "+a"(old) : "r"((old & ~7ull) | state)
			 : "memory", "cc");
#else
	__atomic_compare_exchange_n(w, &old, (old & ~7ull) | state, false,
				    __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
#endif
	return 0;
}
#undef debug_object_activate
#undef debug_object_deactivate
#define debug_object_activate(addr, descr)	floor_cas((addr), 3)
#define debug_object_deactivate(addr, descr)	((void)floor_cas((addr), 2))
#endif

#define WHEEL_SIZE 256

static struct timer *wheel[WHEEL_SIZE];
static unsigned long now, armed;

static const struct debug_obj_descr timer_debug_descr;

static void detach(struct timer *t)
{
	*t->pprev = t->next;
	if (t->next)
		t->next->pprev = t->pprev;
	t->next = NULL;
	t->pprev = NULL;
	armed--;
}

/* Disarm for good: used by the fixups to defuse a misused timer. */
static void disarm(struct timer *t)
{
	if (t->pprev && t->pprev != TIMER_STATIC_MARK)
		detach(t);
	debug_object_deactivate(t, &timer_debug_descr);
}

/* fixup_init: an armed timer is initialised again. */
static bool timer_fixup_init(void *addr, enum debug_obj_state state)
{
	struct timer *t = addr;

	if (state != ODEBUG_STATE_ACTIVE)
		return false;
	disarm(t);
	debug_object_init(t, &timer_debug_descr);
	return true;
}

/* fixup_activate: an armed timer is armed again (it would be linked twice). */
static bool timer_fixup_activate(void *addr, enum debug_obj_state state)
{
	struct timer *t = addr;

	if (state != ODEBUG_STATE_ACTIVE)
		return false;
	disarm(t);
	debug_object_activate(t, &timer_debug_descr);
	return true;
}

/* fixup_free: memory holding an armed timer is released. */
__attribute__((unused)) static bool timer_fixup_free(void *addr, enum debug_obj_state state)
{
	struct timer *t = addr;

	if (state != ODEBUG_STATE_ACTIVE)
		return false;
	disarm(t);
	debug_object_free(t, &timer_debug_descr);
	return true;
}

/* TIMER_INITIALIZER timers are known without timer_init(). */
static bool timer_is_static_object(void *addr)
{
	struct timer *t = addr;

	return t->next == NULL && t->pprev == TIMER_STATIC_MARK;
}

static void *timer_debug_hint(void *addr)
{
	return (void *)((struct timer *)addr)->callback;
}

static const struct debug_obj_descr timer_debug_descr = {
	.name = "timer",
	.debug_hint = timer_debug_hint,
	.is_static_object = timer_is_static_object,
	.fixup_init = timer_fixup_init,
	.fixup_activate = timer_fixup_activate,
#ifndef TIMER_NO_FIXUP_FREE	/* tests: the report alone, nothing repaired */
	.fixup_free = timer_fixup_free,
#endif
};

void timer_init(struct timer *t, void (*callback)(struct timer *t))
{
	debug_object_init(t, &timer_debug_descr);
	t->next = NULL;
	t->pprev = NULL;
	t->expires = 0;
	t->callback = callback;
	t->magic = TIMER_MAGIC;
}

bool timer_pending(const struct timer *t)
{
	return t->pprev != NULL && t->pprev != TIMER_STATIC_MARK;
}

void timer_add(struct timer *t, unsigned long expires)
{
	struct timer **slot;

	debug_object_activate(t, &timer_debug_descr);
	if (expires <= now)
		expires = now + 1;
	slot = &wheel[expires % WHEEL_SIZE];
	t->expires = expires;
	t->next = *slot;
	if (t->next)
		t->next->pprev = &t->next;
	t->pprev = slot;
	*slot = t;
	armed++;
}

bool timer_del(struct timer *t)
{
	if (!timer_pending(t))
		return false;
	debug_object_deactivate(t, &timer_debug_descr);
	detach(t);
	return true;
}

unsigned long timer_now(void)
{
	return now;
}

unsigned long timers_armed(void)
{
	return armed;
}

void timer_tick(void)
{
	struct timer **slot, *t, *next;

	now++;
	slot = &wheel[now % WHEEL_SIZE];
	for (t = *slot; t; t = next) {
		if (t->magic != TIMER_MAGIC) {
			fprintf(stderr, "timer wheel: corrupted timer %p in slot %lu "
				"(magic 0x%08x, expected 0x%08x): aborting\n",
				(void *)t, now % WHEEL_SIZE, t->magic, TIMER_MAGIC);
			abort();
		}
		next = t->next;
		if (t->expires != now)
			continue;	/* a later lap of the wheel */
		debug_object_deactivate(t, &timer_debug_descr);
		detach(t);
		t->callback(t);
	}
}
