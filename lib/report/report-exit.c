/* SPDX-License-Identifier: MIT */
/*
 * report-exit.c - report_active_at_exit=1: every object still ACTIVE at
 * exit (or before an exec), reported as "exit active".  A walk of the
 * table, a bucket at a time: the objects are copied under the bucket lock
 * (a built-in mutex's state first synced with glibc's words) and reported
 * after it is released, since a report takes the report lock and may
 * take long.
 */
#include "report.h"

/* report_active_at_exit=1: every object still ACTIVE, as "exit active". */
#define ACTIVE_BATCH	64		/* objects copied per bucket lock */
struct active_batch {
	struct odebug_snapshot o[ACTIVE_BATCH];
	size_t got, seen, skip;
};

/* Copy the ACTIVE trackers after the first @skip; true when the batch is full. */
static bool collect_active(const struct odebug_tracker *t, void *ctx)
{
	struct active_batch *a = ctx;

	if (odebug_tracker_state(t) != ODEBUG_STATE_ACTIVE || a->seen++ < a->skip)
		return false;
	odebug_tracker_snapshot(&a->o[a->got], t);
	/* As decided: a lockless call may have changed the word since (FREED, even). */
	a->o[a->got++].state = ODEBUG_STATE_ACTIVE;
	return a->got == ACTIVE_BATCH;
}

/* One bucket, ACTIVE_BATCH objects at a time: no report under its lock. */
static bool report_active_bucket(struct odebug_bucket *b, uint64_t chains,
				 uintptr_t start, uintptr_t end, void *ctx)
{
	struct active_batch *a = ctx;
	size_t k;

	(void)start, (void)end;
	a->skip = 0;
	do {
		a->got = a->seen = 0;
		odebug_bucket_lock(b);
		odebug_sync_exit(b, chains);	/* holds their holders keep */
		odebug_bucket_each(b, chains, collect_active, a);
		odebug_bucket_unlock(b);
		for (k = 0; k < a->got; k++)
			if (!odebug_checkers_released(&a->o[k]))	/* its holder's word */
				odebug_report_exit(&a->o[k]);
		a->skip += a->got;
	} while (a->got == ACTIVE_BATCH);
	return false;
}

void odebug_report_active_objects(void)
{
	struct active_batch a;

	odebug_table_visit_all(~0ull, 0, UINTPTR_MAX, report_active_bucket, &a);
}
