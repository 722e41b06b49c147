/* SPDX-License-Identifier: MIT */
#include <pthread.h>
#include <stdlib.h>

#include "odebug.h"
#include "fixture.h"

static unsigned long fixup_free_calls, canary_ok;
static const struct debug_obj_descr widget_descr;

/* Like the kernel's timer fixup: disarm, then stop tracking. */
static bool widget_fixup_free(void *addr, enum debug_obj_state state)
{
	struct widget *w = addr;

	fixup_free_calls++;
	if (state != ODEBUG_STATE_ACTIVE)
		return false;
	if (w->canary == WIDGET_CANARY)	/* the memory is not released yet */
		canary_ok++;
	w->armed = 0;
	debug_object_deactivate(w, &widget_descr);
	debug_object_free(w, &widget_descr);
	return true;
}

static const struct debug_obj_descr widget_descr = {
	.name = "widget",
	.fixup_free = widget_fixup_free,
};

void widget_init(struct widget *w)
{
	debug_object_init(w, &widget_descr);
	w->canary = WIDGET_CANARY;
	w->armed = 0;
}

void widget_init_on_stack(struct widget *w)
{
	debug_object_init_on_stack(w, &widget_descr);
	w->canary = WIDGET_CANARY;
	w->armed = 0;
}

void widget_arm(struct widget *w)
{
	debug_object_activate(w, &widget_descr);
	w->armed = 1;
}

void widget_disarm(struct widget *w)
{
	debug_object_deactivate(w, &widget_descr);
	w->armed = 0;
}

void widget_forget(struct widget *w)
{
	debug_object_free(w, &widget_descr);
}

int widget_state(const struct widget *w)
{
	return (int)debug_object_get_state(w);
}

void fixture_free(void *p)
{
	free(p);
	__asm__ volatile("" ::: "memory");	/* keep this frame: no tail call */
}

static struct debug_objects_stats stats(void)
{
	struct debug_objects_stats s;

	debug_objects_get_stats(&s, sizeof(s));
	return s;
}

unsigned long fixture_warnings(void) { return stats().warnings; }
unsigned long fixture_fixups(void) { return stats().fixups; }
unsigned long fixture_tracked(void) { return stats().pool_used; }
unsigned long fixture_fixup_free_calls(void) { return fixup_free_calls; }
unsigned long fixture_canary_ok(void) { return canary_ok; }
int fixture_enabled(void) { return debug_objects_enabled(); }

/*
 * A fork handler registered before libodebug's (this library's constructor
 * runs first under LD_PRELOAD): its prepare step frees memory holding an
 * armed widget while libodebug may already hold every lock.
 */
int fixture_fork_free_enabled;
static unsigned long fork_frees;

static void prepare_free(void)
{
	struct widget *w;

	if (!fixture_fork_free_enabled)
		return;
	w = malloc(sizeof(*w));
	if (!w)
		return;
	widget_init(w);
	widget_arm(w);
	free(w);
	fork_frees++;
}

unsigned long fixture_fork_frees(void) { return fork_frees; }

__attribute__((constructor)) static void fixture_constructor(void)
{
	pthread_atfork(prepare_free, NULL, NULL);
}
