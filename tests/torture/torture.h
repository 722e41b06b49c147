/* SPDX-License-Identifier: MIT */
/*
 * torture.h - what the torture programs share: the pass/fail counters and
 * CHECK(), and, when TORTURE_TYPE names it, a descriptor whose fixup_free
 * disarms and forgets the object (so every "free active" report is also a
 * fixed-up one).
 */
#ifndef ODEBUG_TORTURE_H
#define ODEBUG_TORTURE_H

#include <stdbool.h>
#include <stdio.h>

#include "odebug.h"

static int passed, failed;

#define CHECK(cond, ...) do { \
	if (cond) { passed++; } else { failed++; \
		fprintf(stdout, "FAIL %s:%d: ", __FILE__, __LINE__); \
		fprintf(stdout, __VA_ARGS__); fputc('\n', stdout); } \
} while (0)

#ifdef TORTURE_TYPE
static bool fixup_free(void *addr, enum debug_obj_state state);
static const struct debug_obj_descr descr = {
	.name = TORTURE_TYPE, .fixup_free = fixup_free,
};

static bool fixup_free(void *addr, enum debug_obj_state state)
{
	if (state != ODEBUG_STATE_ACTIVE)
		return false;
	debug_object_deactivate(addr, &descr);
	debug_object_free(addr, &descr);
	return true;
}
#endif /* TORTURE_TYPE */

#endif /* ODEBUG_TORTURE_H */
