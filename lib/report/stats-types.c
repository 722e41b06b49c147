/* SPDX-License-Identifier: MIT */
/*
 * stats-types.c - print_stats=1's table per type at exit:
 *
 *   ODEBUG: type                 tracked   active     most  reports
 *   ODEBUG: pthread_mutex              3        1       12        1
 *
 * "most" is the most objects of the type tracked at once: every tracker
 * that enters or leaves the table is counted by its descriptor slot
 * (tracker.h's odebug_types_note(), a predictable branch when
 * print_stats is off).  "tracked" and "active" are read by a walk of the
 * table at exit (a mutex's hold synced from glibc's words first, as
 * report_active_at_exit does), "reports" as each report is made.  The
 * arrays are zero pages until print_stats=1 writes them.
 */
#include <string.h>

#include "report.h"

#define SLOTS	ODEBUG_DESCR_SLOTS
#define ROWS	32		/* types listed; the rest are counted */

static ODEBUG_LARGE unsigned long walked[SLOTS], active[SLOTS];

static bool count_one(const struct odebug_tracker *t, void *ctx)
{
	uint64_t w = odebug_tracker_word(t);

	(void)ctx;
	if (odebug_word_freed(w) || odebug_word_retired(w))
		return false;
	walked[odebug_word_slot(w)]++;
	active[odebug_word_slot(w)] += odebug_word_state(w) == ODEBUG_STATE_ACTIVE;
	return false;
}

static bool count_bucket(struct odebug_bucket *b, uint64_t chains, uintptr_t start,
			 uintptr_t end, void *ctx)
{
	(void)start, (void)end;
	odebug_bucket_lock(b);
	odebug_sync_exit(b, chains);	/* holds their holders keep */
	odebug_bucket_each(b, chains, count_one, ctx);
	odebug_bucket_unlock(b);
	return false;
}

static void put_num(struct odebug_buf *b, unsigned long v, int width)
{
	char digits[24];
	int n = 0;

	do
		digits[n++] = (char)('0' + v % 10);
	while ((v /= 10) && n < (int)sizeof(digits));
	while (width-- > n)
		odebug_putc(b, ' ');
	while (n)
		odebug_putc(b, digits[--n]);
}

static void put_row(struct odebug_buf *b, const char *name, unsigned long tracked,
		    unsigned long act, unsigned long most, unsigned long reports)
{
	odebug_puts(b, ODEBUG_PREFIX);
	odebug_put_pad(b, name, 20);
	put_num(b, tracked, 9);
	put_num(b, act, 9);
	put_num(b, most, 9);
	put_num(b, reports, 9);
	odebug_putc(b, '\n');
}

/* The most-tracked row not yet printed (@done marks printed ones), or -1. */
static int next_row(const bool *done)
{
	int best = -1;

	for (int s = 0; s < (int)SLOTS; s++)
		if (!done[s] && (odebug_type_counts[s].most > 0 || odebug_type_counts[s].reports) &&
		    (best < 0 || odebug_type_counts[s].most > odebug_type_counts[best].most))
			best = s;
	return best;
}

/**
 * odebug_types_print - the table per type, at exit with print_stats=1
 * @fd:	where to write it
 */
void odebug_types_print(int fd)
{
	static ODEBUG_LARGE bool done[SLOTS];
	struct odebug_buf b;
	unsigned int rows = 0, more = 0;
	int s;

	memset(walked, 0, sizeof(walked));
	memset(active, 0, sizeof(active));
	memset(done, 0, sizeof(done));
	odebug_table_visit_all(~0ull, 0, UINTPTR_MAX, count_bucket, NULL);
	odebug_buf_init(&b, fd);
	odebug_puts(&b, ODEBUG_PREFIX);
	odebug_put_pad(&b, "type", 20);
	odebug_puts(&b, "  tracked   active     most  reports\n");
	while ((s = next_row(done)) >= 0) {
		done[s] = true;
		if (rows++ >= ROWS) {
			more++;
			continue;
		}
		put_row(&b, odebug_descr_entries[s].copy, walked[s], active[s],
			(unsigned long)odebug_type_counts[s].most, odebug_type_counts[s].reports);
	}
	if (more) {
		odebug_puts(&b, ODEBUG_PREFIX "and ");
		odebug_put_dec(&b, more);
		odebug_puts(&b, more == 1 ? " more type\n" : " more types\n");
	}
	odebug_flush(&b);
}
