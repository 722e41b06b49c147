/* SPDX-License-Identifier: MIT */
/*
 * report.h - what report.c (the report, its text form) and report-json.c
 * (its JSON form) share.
 */
#ifndef ODEBUG_REPORT_H
#define ODEBUG_REPORT_H

#include "internal.h"

/* A descriptor's name is printed up to this long, then "...". */
#define ODEBUG_TYPE_CAP 256

/* What a report prints: its snapshot, op, hint and named stacks. */
struct report {
	const struct odebug_snapshot *o;
	const char *op;
	const struct odebug_frame *hint;	/* NULL: none */
	const struct odebug_frame *frames, *init, *act;	/* the named stacks */
	int nframes, ninit, nact;
	int owner;	/* a held built-in lock's owner thread, as glibc shows it (0: none) */
	const char *holder;	/* held memory: who holds it (held.c; NULL: none) */
};

void odebug_put_bounded(struct odebug_buf *b, const char *s, size_t cap);
void odebug_put_symbol(struct odebug_buf *b, const struct odebug_frame *f);
void odebug_thread_name(char name[17]);
void odebug_format_json(struct odebug_buf *b, const struct report *r, int limit);

#endif /* ODEBUG_REPORT_H */
