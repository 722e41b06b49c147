/* SPDX-License-Identifier: MIT */
/*
 * unload.c - memory that goes without a fixup's chance: a module unloaded
 * by dlclose(), and frames that returned (stack.c).
 *
 * Nothing public says before dlclose() whether it will unload the module,
 * and after it the module's data, and often the descriptors of the
 * objects in it, are unmapped.  So the dlclose() interposer copies, before
 * the call, what a report needs of every active tracker in the module's
 * writable segments (type name included); after it, if the module is
 * gone, the trackers still active are reported from that copy, without
 * reading a descriptor, and every tracker in those segments is dropped.
 */
#include <string.h>

#include "core.h"

/*
 * Drop every tracker whose object starts in [start, end).  For each ACTIVE
 * one, @describe fills in the snapshot (flags, type name) and says whether
 * to report it; nothing else about the object or its descriptor is read.
 */
struct drop_ctx {
	bool (*describe)(struct odebug_snapshot *o, void *arg);
	void *arg;
};

static bool drop_bucket(struct odebug_bucket *b, uint64_t chains,
			uintptr_t start, uintptr_t end, void *ctx)
{
	struct drop_ctx *dc = ctx;
	struct odebug_tracker *t;
	struct odebug_snapshot o;
	unsigned long visited = 0;
	uint32_t dropped;

repeat:
	dropped = 0;
	odebug_bucket_lock(b);
	t = odebug_bucket_take(b, chains, start, end, NULL, &dropped, &visited);
	/* Claimed by CAS: a lockless call may have changed it since the walk. */
	if (t && !odebug_tracker_snapshot_active(&o, t, true)) {
		odebug_bucket_unlock(b);
		odebug_trackers_put(dropped);
		goto repeat;
	}
	if (t)
		odebug_remove(b, t);
	odebug_bucket_unlock(b);
	odebug_trackers_put(dropped);	/* inactive ones: silently */
	if (!t)
		return false;
	odebug_pool_free(t);
	if (dc->describe(&o, dc->arg))
		odebug_report(&o, "free");
	goto repeat;
}

void odebug_drop_range(uintptr_t start, uintptr_t end,
		       bool (*describe)(struct odebug_snapshot *o, void *arg), void *arg)
{
	struct drop_ctx dc = { describe, arg };

	if (odebug_range_may_hold(start, end))
		odebug_table_visit(start, end, drop_bucket, &dc);
}

/* Before dlclose(): copy the active trackers of the module's segments. */
struct copy_ctx {
	struct odebug_unload *u;
	uintptr_t start, end;
};

static bool copy_one(const struct odebug_tracker *t, void *ctx)
{
	struct copy_ctx *cc = ctx;
	struct odebug_unload *u = cc->u;
	uintptr_t addr = odebug_tracker_addr(t);

	if (addr < cc->start || addr >= cc->end ||
	    odebug_tracker_state(t) != ODEBUG_STATE_ACTIVE)
		return false;
	if (u->nobjs == ODEBUG_UNLOAD_OBJS) {
		u->more++;
		return false;
	}
	u->objs[u->nobjs].addr = addr;
	u->objs[u->nobjs].descr = odebug_tracker_descr(t);
	u->nobjs++;
	return false;
}

static bool copy_bucket(struct odebug_bucket *b, uint64_t chains,
			uintptr_t start, uintptr_t end, void *ctx)
{
	struct copy_ctx cc = { ctx, start, end };

	odebug_bucket_lock(b);
	odebug_sync_range(b, chains, start, end);	/* holds their holders keep; still mapped */
	odebug_bucket_each(b, chains, copy_one, &cc);
	odebug_bucket_unlock(b);
	return false;
}

/* The holder's word on an object of the module still mapped (registry.h). */
static bool released_mapped(uintptr_t addr, const struct debug_obj_descr *descr)
{
	struct odebug_snapshot o = { .addr = addr, .descr = descr, .state = ODEBUG_STATE_ACTIVE };

	return odebug_checkers_released(&o);
}

void odebug_unload_before(struct odebug_unload *u)
{
	int i;

	u->nobjs = 0;
	u->more = 0;
	u->any = false;
	for (i = 0; i < u->nranges; i++) {
		if (!odebug_range_may_hold(u->lo[i], u->hi[i]))
			continue;
		u->any = true;
		odebug_table_visit(u->lo[i], u->hi[i], copy_bucket, u);
	}
	/*
	 * The descriptors are still mapped: copy their names now, unlocked.
	 * The objects too: an annotation module's word on each (released())
	 * is taken now, its memory still there to read.
	 */
	for (i = 0; i < u->nobjs; i++) {
		const char *name = u->objs[i].descr->name;
		size_t len = strnlen(name, sizeof(u->objs[i].name) - 1);

		memcpy(u->objs[i].name, name, len);
		u->objs[i].name[len] = '\0';
		u->objs[i].released = released_mapped(u->objs[i].addr, u->objs[i].descr);
	}
}

static bool describe_unloaded(struct odebug_snapshot *o, void *arg)
{
	struct odebug_unload *u = arg;
	int i;

	o->flags = ODEBUG_SNAP_UNLOADED;
	o->module = u->module;
	o->type_name = "(unknown: activated during dlclose)";
	for (i = 0; i < u->nobjs; i++)
		if (u->objs[i].addr == o->addr && u->objs[i].descr == o->descr) {
			o->type_name = u->objs[i].name;
			return !u->objs[i].released;
		}
	if (u->more)
		o->type_name = "(unknown: too many objects to copy)";
	/* Not asked before the unload: a holder with no record of its own stays silent. */
	return !odebug_checkers_released(o);
}

/* After a dlclose() that unloaded the module. */
void odebug_unload_after(struct odebug_unload *u)
{
	int i;

	if (!u->any)
		return;
	for (i = 0; i < u->nranges; i++)
		odebug_drop_range(u->lo[i], u->hi[i], describe_unloaded, u);
}
