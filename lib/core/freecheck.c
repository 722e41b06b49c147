/* SPDX-License-Identifier: MIT */
/*
 * freecheck.c - the free check: memory about to be released or reused
 * (free, realloc, munmap, mremap, a thread's stack at its exit, or a custom
 * allocator's debug_check_no_obj_freed) is checked for ACTIVE objects,
 * which are reported and fixed up; the trackers of the others go silently.
 * The lockless look (table.c's odebug_range_may_hold) comes first; a
 * bucket that may hold an object in the range is walked under its lock,
 * and a tracker leaves it claimed by compare-and-swap (table.c's header),
 * so a lockless activate racing the check is either seen or refused.
 */
#define _GNU_SOURCE
#include <errno.h>

#include "core.h"

unsigned long odebug_max_checked;

/* After fixup_free: whatever it left at @addr goes, the memory is gone. */
static void drop_tracker(struct odebug_bucket *b, uintptr_t addr)
{
	struct odebug_tracker *t;
	bool freed = false;
	uint64_t w;

	odebug_bucket_lock(b);
	t = odebug_lookup(b, addr);
	while (t) {
		/*
		 * Claimed by CAS: a lockless free may make it FREED (and count
		 * its free) until then.  FREED words change only under this lock.
		 */
		w = odebug_tracker_word(t);
		freed = odebug_word_freed(w);
		if (freed || odebug_tracker_retire(t, w)) {
			odebug_remove(b, t);
			break;
		}
	}
	odebug_bucket_unlock(b);
	if (t && freed)
		odebug_pool_recycle(t);	/* its free was counted */
	else if (t)
		odebug_pool_free(t);
}

/* A free check in progress: trackers visited, and whether the memory is dead. */
struct range_check {
	unsigned long checked;
	bool dead;
};

/*
 * Check the @chains of one bucket for trackers whose object starts in
 * [start, end): ACTIVE ones are reported and fixed up, the others dropped
 * silently.  When the memory is already dead (a thread's stack at its
 * exit, long after the objects' functions returned), ACTIVE ones are
 * reported from the snapshot and dropped: no fixup or debug_hint reads
 * bytes that are no longer the object.  Adds the trackers visited to @ctx.
 */
static bool check_bucket(struct odebug_bucket *b, uint64_t chains,
			 uintptr_t start, uintptr_t end, void *ctx)
{
	struct range_check *rc = ctx;
	struct odebug_tracker *t;
	struct odebug_snapshot o;
	unsigned long cnt, checked = 0;
	uint32_t dropped;

repeat:
	cnt = 0;
	dropped = 0;
	odebug_bucket_lock(b);
	/* A hold its holder keeps (a mutex's, in glibc's words), read as the walk meets it. */
	t = odebug_bucket_take(b, chains, start, end, rc->dead ? NULL : odebug_syncer(),
			       &dropped, &cnt);
	if (t && !odebug_tracker_snapshot_active(&o, t, rc->dead)) {
		/* A lockless call changed it since the walk: scan again. */
		odebug_bucket_unlock(b);
		odebug_trackers_put(dropped);
		checked += cnt;
		goto repeat;
	}
	if (t) {
		if (rc->dead) {		/* report only: the tracker goes now */
			o.dead = true;
			odebug_remove(b, t);
			odebug_tracker_set_next(t, dropped);
			dropped = odebug_tracker_index(t);
		}
		odebug_bucket_unlock(b);
		odebug_trackers_put(dropped);
		checked += cnt;
		odebug_descr_resolve(&o);	/* its module may be gone */
		if (odebug_checkers_released(&o)) {	/* its holder let go */
			if (!rc->dead)
				drop_tracker(b, o.addr);
			goto repeat;
		}
		if (rc->dead || o.dead) {
			odebug_report(&o, "free");
			if (rc->dead)
				goto repeat;
		} else {
			odebug_report_fix(&o, "free", o.descr->fixup_free, (void *)o.addr);
		}
		/*
		 * The kernel rescans until the fixup made the object
		 * inactive, forever if it never does; the tracker goes now,
		 * so each object is reported once.
		 */
		drop_tracker(b, o.addr);
		goto repeat;
	}
	odebug_bucket_unlock(b);
	odebug_trackers_put(dropped);
	if (cnt > odebug_load(&odebug_max_chain))
		odebug_stat_max(&odebug_max_chain, cnt);
	rc->checked += checked + cnt;
	return false;
}

static void check_range(uintptr_t start, uintptr_t end, bool dead)
{
	struct range_check rc = { 0, dead };
	int saved;

	/* free() and munmap() must not change errno: reports and fixups may. */
	saved = errno;
	odebug_table_visit(start, end, check_bucket, &rc);
	errno = saved;
	if (rc.checked > odebug_load(&odebug_max_checked))
		odebug_stat_max(&odebug_max_checked, rc.checked);
}

/*
 * The free check proper, on [start, end), once odebug_range_may_hold()
 * found it may hold a tracker; the caller checked the switch.
 */
void odebug_check_range_slow(uintptr_t start, uintptr_t end)
{
	check_range(start, end, false);
}

/* The check of memory that is already dead: report only (see check_bucket). */
void odebug_check_range_dead(uintptr_t start, uintptr_t end)
{
	if (odebug_range_may_hold(start, end))
		check_range(start, end, true);
}

struct range {
	uintptr_t start, end;
};

static bool in_range(const struct odebug_tracker *t, void *ctx)
{
	const struct range *r = ctx;
	uintptr_t addr = odebug_tracker_addr(t);

	return addr >= r->start && addr < r->end;
}

static bool find_tracked(struct odebug_bucket *b, uint64_t chains,
			 uintptr_t start, uintptr_t end, void *ctx)
{
	struct range r = { start, end };
	bool found;

	odebug_bucket_lock(b);
	found = odebug_bucket_each(b, chains, in_range, &r);
	odebug_bucket_unlock(b);
	*(bool *)ctx = found;
	return found;
}

/* Does any tracked object start in [start, end)?  (mremap's choice.) */
bool odebug_range_tracked(uintptr_t start, uintptr_t end)
{
	bool found = false;

	odebug_table_visit(start, end, find_tracked, &found);
	return found;
}

/**
 * debug_check_no_obj_freed - check a memory range for active objects
 * @addr:	start of the range being released
 * @size:	its size in bytes
 *
 * Call it from a custom allocator (arena, pool, slab) before it releases or
 * reuses memory.  Every ACTIVE object that starts in the range is reported
 * ("free active") and its descriptor's fixup_free is called; trackers in
 * other states are dropped silently.  The interposed free(), realloc(),
 * reallocarray(), munmap() and mremap(), and the exit of a thread that
 * annotated on-stack objects, run the same check for you.
 */
ODEBUG_EXPORT void debug_check_no_obj_freed(const void *addr, size_t size)
{
	uintptr_t start = (uintptr_t)addr, end = start + size;

	if (!odebug_on() || !odebug_opt.check_free || !size)
		return;
	odebug_check_returned();
	if (end < start)	/* wraps: up to the top of the address space */
		end = UINTPTR_MAX;
	odebug_check_range(start, end);
}
