/* SPDX-License-Identifier: MIT */
/*
 * selftest.c - the kernel's start-up selftest, step for step (15 steps; the
 * first 12 when the free check is off).  It runs silently: its descriptor's
 * reports are counted but never printed, and the counters are put back
 * afterwards.  A failure prints one line and leaves libodebug disabled.
 */
#include <errno.h>

#include "start.h"

struct self_test {
	unsigned long dummy1[6];
	int static_init;
	unsigned long dummy2[3];
};

static struct self_test obj;
static const struct debug_obj_descr descr_type_test;

static bool is_static_object(void *addr)
{
	return ((struct self_test *)addr)->static_init;
}

static bool fixup_init(void *addr, enum debug_obj_state state)
{
	if (state != ODEBUG_STATE_ACTIVE)
		return false;
	debug_object_deactivate(addr, &descr_type_test);
	debug_object_init(addr, &descr_type_test);
	return true;
}

static bool fixup_activate(void *addr, enum debug_obj_state state)
{
	switch (state) {
	case ODEBUG_STATE_NOTAVAILABLE:
		return true;
	case ODEBUG_STATE_ACTIVE:
		debug_object_deactivate(addr, &descr_type_test);
		debug_object_activate(addr, &descr_type_test);
		return true;
	default:
		return false;
	}
}

static bool fixup_destroy(void *addr, enum debug_obj_state state)
{
	if (state != ODEBUG_STATE_ACTIVE)
		return false;
	debug_object_deactivate(addr, &descr_type_test);
	debug_object_destroy(addr, &descr_type_test);
	return true;
}

static bool fixup_free(void *addr, enum debug_obj_state state)
{
	if (state != ODEBUG_STATE_ACTIVE)
		return false;
	debug_object_deactivate(addr, &descr_type_test);
	debug_object_free(addr, &descr_type_test);
	return true;
}

static const struct debug_obj_descr descr_type_test = {
	.name = "selftest",
	.is_static_object = is_static_object,
	.fixup_init = fixup_init,
	.fixup_activate = fixup_activate,
	.fixup_destroy = fixup_destroy,
	.fixup_free = fixup_free,
};

/* NONE expected means untracked. */
static bool check(int step, enum debug_obj_state state, unsigned long fixups,
		  unsigned long warnings)
{
	enum debug_obj_state now = debug_object_get_state(&obj);
	struct odebug_buf b;
	const char *what = NULL;

	if (now == ODEBUG_STATE_NOTAVAILABLE)
		now = ODEBUG_STATE_NONE;
	if (now != state)
		what = "wrong state";
	else if (odebug_load(&odebug_fixups) != fixups)
		what = "fixups";
	else if (odebug_load(&odebug_warnings) != warnings)
		what = "warnings";
	if (!what)
		return true;
	odebug_buf_init(&b, 2);
	odebug_puts(&b, ODEBUG_PREFIX "selftest failed at step ");
	odebug_put_dec(&b, (unsigned long)step);
	odebug_puts(&b, " (");
	odebug_puts(&b, what);
	odebug_puts(&b, "); ODEBUG disabled\n");
	odebug_flush(&b);
	return false;
}

/**
 * odebug_selftest - run the acceptance sequence; false if it failed
 */
bool odebug_selftest(void)
{
	struct debug_objects_stats saved;
	unsigned long f, w;
	bool ok = false;

	odebug_stats_snapshot(&saved);
	f = saved.fixups;
	w = saved.warnings;
	odebug_quiet_descr = &descr_type_test;
	obj.static_init = 0;

	debug_object_init(&obj, &descr_type_test);
	if (!check(1, ODEBUG_STATE_INIT, f, w))
		goto out;
	debug_object_activate(&obj, &descr_type_test);
	if (!check(2, ODEBUG_STATE_ACTIVE, f, w))
		goto out;
	debug_object_activate(&obj, &descr_type_test);
	if (!check(3, ODEBUG_STATE_ACTIVE, ++f, ++w))
		goto out;
	debug_object_deactivate(&obj, &descr_type_test);
	if (!check(4, ODEBUG_STATE_INACTIVE, f, w))
		goto out;
	debug_object_destroy(&obj, &descr_type_test);
	if (!check(5, ODEBUG_STATE_DESTROYED, f, w))
		goto out;
	debug_object_init(&obj, &descr_type_test);
	if (!check(6, ODEBUG_STATE_DESTROYED, f, ++w))
		goto out;
	if (debug_object_activate(&obj, &descr_type_test) != -EINVAL ||
	    !check(7, ODEBUG_STATE_DESTROYED, f, ++w))
		goto out;
	debug_object_deactivate(&obj, &descr_type_test);
	if (!check(8, ODEBUG_STATE_DESTROYED, f, ++w))
		goto out;
	debug_object_free(&obj, &descr_type_test);
	if (!check(9, ODEBUG_STATE_NONE, f, w))
		goto out;

	obj.static_init = 1;
	debug_object_activate(&obj, &descr_type_test);
	if (!check(10, ODEBUG_STATE_ACTIVE, f, w))
		goto out;
	debug_object_init(&obj, &descr_type_test);
	if (!check(11, ODEBUG_STATE_INIT, ++f, ++w))
		goto out;
	debug_object_free(&obj, &descr_type_test);
	if (!check(12, ODEBUG_STATE_NONE, f, w))
		goto out;

	if (odebug_opt.check_free) {
		debug_object_init(&obj, &descr_type_test);
		if (!check(13, ODEBUG_STATE_INIT, f, w))
			goto out;
		debug_object_activate(&obj, &descr_type_test);
		if (!check(14, ODEBUG_STATE_ACTIVE, f, w))
			goto out;
		debug_check_no_obj_freed(&obj, sizeof(obj));
		if (!check(15, ODEBUG_STATE_NONE, ++f, ++w))
			goto out;
	}
	ok = true;
out:
	/* A failed run may leave its tracker behind: it must not linger. */
	debug_object_free(&obj, &descr_type_test);
	odebug_quiet_descr = NULL;
	odebug_stats_restore(&saved);
	odebug_types_forget(&descr_type_test);
	/*
	 * Leave no tracker cached either: a program that never tracks an
	 * object then keeps the free() fast path (nothing out of the pool),
	 * and no FREED tracker linked, and the span (tracker.h) empty again:
	 * libodebug's own static object would cover the whole heap.
	 */
	odebug_reclaim_last_freed();
	odebug_pool_drain_cache();
	odebug_span_reset();
	return ok;
}
