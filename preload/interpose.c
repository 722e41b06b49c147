/* SPDX-License-Identifier: MIT */
/*
 * interpose.c - finding the functions the built-in types' interposers
 * forward to: each at the version it was called with, in the next object
 * (preload/next.c's odebug_next_at()).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>

#include "interpose.h"
#include "next.h"

extern const struct odebug_next_entry __start_odebug_next[], __stop_odebug_next[];

void odebug_next_resolve(const struct odebug_next_entry *e)
{
	void *fn = odebug_next_at(e->name, e->version);

	if (!fn) {
		odebug_message("cannot find the next ", e->name, "@", e->version,
			       "; aborting", (char *)NULL);
		abort();
	}
	__atomic_store_n(e->slot, fn, __ATOMIC_RELEASE);
}

/* Always, enabled or not: later calls then forward in one jump. */
__attribute__((constructor)) static void resolve_all(void)
{
	const struct odebug_next_entry *e;

	for (e = __start_odebug_next; e < __stop_odebug_next; e++)
		odebug_next_resolve(e);
	odebug_start_step("interpose.c resolve");
}
