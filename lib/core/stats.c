/* SPDX-License-Identifier: MIT */
/*
 * stats.c - the counters, read as the kernel's debugfs stats file shows them.
 */
#include <string.h>

#include "core.h"

void odebug_stats_snapshot(struct debug_objects_stats *s)
{
	memset(s, 0, sizeof(*s));
	s->warnings = odebug_load(&odebug_warnings);
	s->suppressed = odebug_load(&odebug_suppressed);
	s->fixups = odebug_load(&odebug_fixups);
	s->max_chain = odebug_load(&odebug_max_chain);
	s->max_checked = odebug_load(&odebug_max_checked);
	odebug_pool_stats(s);
	odebug_group_stats(s);
}

/* Put the counters back (the selftest leaves no trace). */
void odebug_stats_restore(const struct debug_objects_stats *s)
{
	odebug_store(&odebug_warnings, s->warnings);
	odebug_store(&odebug_suppressed, s->suppressed);
	odebug_store(&odebug_fixups, s->fixups);
	odebug_store(&odebug_max_chain, s->max_chain);
	odebug_store(&odebug_max_checked, s->max_checked);
	odebug_pool_restore(s);
}

/**
 * debug_objects_get_stats - copy the counters
 * @stats:	where to copy them
 * @size:	sizeof(*@stats) as the caller knows it
 *
 * Copies at most @size bytes and returns the library's size of the
 * structure, so a program built against an older header keeps working when
 * members are added.
 */
ODEBUG_EXPORT size_t debug_objects_get_stats(struct debug_objects_stats *stats,
					     size_t size)
{
	struct debug_objects_stats s;

	odebug_stats_snapshot(&s);
	if (stats)
		memcpy(stats, &s, size < sizeof(s) ? size : sizeof(s));
	return sizeof(s);
}

/**
 * debug_objects_print_stats - write the counters to @fd, one per line
 * @fd:	file descriptor to write to
 */
ODEBUG_EXPORT void debug_objects_print_stats(int fd)
{
	static const struct { const char *name; size_t offset; } rows[] = {
#define ROW(f) { #f, offsetof(struct debug_objects_stats, f) }
		ROW(max_chain), ROW(max_checked), ROW(warnings),
		ROW(suppressed), ROW(fixups), ROW(pool_free),
		ROW(pool_min_free), ROW(pool_used), ROW(pool_max_used),
		ROW(objs_allocated), ROW(objs_freed), ROW(distinct), ROW(printed),
#undef ROW
	};
	struct debug_objects_stats s;
	struct odebug_buf b;
	size_t i;

	odebug_stats_snapshot(&s);
	odebug_buf_init(&b, fd);
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		odebug_put_pad(&b, rows[i].name, 14);
		odebug_puts(&b, ": ");
		odebug_put_dec(&b, *(unsigned long *)((char *)&s + rows[i].offset));
		odebug_putc(&b, '\n');
	}
	odebug_flush(&b);
}
