/* SPDX-License-Identifier: MIT */
/*
 * fixture.h - an annotated "widget" type living in a shared library that
 * does not link libodebug: under LD_PRELOAD its debug_object_* calls
 * resolve to the preloaded library, as annotated code in a plugin would.
 */
#ifndef ODEBUG_FIXTURE_H
#define ODEBUG_FIXTURE_H

#include <stddef.h>

#define WIDGET_CANARY 0x57696467u

struct widget {
	unsigned int canary;	/* the fixup checks it can still read this */
	int armed;
	char payload[24];
};

void widget_init(struct widget *w);
void widget_init_on_stack(struct widget *w);
void widget_arm(struct widget *w);
void widget_disarm(struct widget *w);
void widget_forget(struct widget *w);	/* debug_object_free */
int widget_state(const struct widget *w);	/* enum debug_obj_state */

/* A free() made from inside this library. */
void fixture_free(void *p);

/* Counters of the library, and of this fixture's fixup_free. */
unsigned long fixture_warnings(void);
unsigned long fixture_fixups(void);
unsigned long fixture_tracked(void);
unsigned long fixture_fixup_free_calls(void);
unsigned long fixture_canary_ok(void);	/* fixups that read a valid canary */
int fixture_enabled(void);

/* When set, a fork handler older than libodebug's frees an armed widget. */
extern int fixture_fork_free_enabled;
unsigned long fixture_fork_frees(void);

#endif
