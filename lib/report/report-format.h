/* SPDX-License-Identifier: MIT */
/*
 * report-format.h - what report.c (the report, its text form) and report-json.c
 * (its JSON form) share.
 */
#ifndef ODEBUG_REPORT_FORMAT_H
#define ODEBUG_REPORT_FORMAT_H

#include "report.h"

/* A descriptor's name is printed up to this long, then "...". */
#define ODEBUG_TYPE_CAP 256

/* Threads named as blocked on an object; more are counted. */
#define ODEBUG_MAX_BLOCKED 8

/* A built-in object's state in words (report-state.c). */
/* A holder line: who holds the object (held.c, a module's describe). */
#define ODEBUG_HOLDER_LEN	320

struct report_state {
	char words[64];		/* "1 waiter", "held"; empty: not a built-in type */
	int owner;		/* the holder glibc's words name (0: none) */
	char owner_name[17];
	const char *holder_note;	/* held, holder not known: why */
	bool scanned;		/* the kernel was asked which threads sleep on it */
	bool scan_failed;	/* ... and /proc/self/task could not be read */
	bool waiters;		/* the active state counts waiters (cond, sem, barrier) */
	int nblocked, blocked_more;
	int blocked[ODEBUG_MAX_BLOCKED];
	char blocked_name[ODEBUG_MAX_BLOCKED][17];
	unsigned int not_blocked;	/* counted waiters the kernel shows no sleep for */
};

/* What a report prints: its snapshot, op, hint and named stacks. */
struct report {
	const struct odebug_snapshot *o;
	const char *op;
	const struct odebug_frame *hint;	/* NULL: none */
	const struct odebug_frame *frames, *init, *act;	/* the named stacks */
	int nframes, ninit, nact;
	const struct report_state *state;	/* a built-in type's state in words */
	const char *holder;	/* held memory: who holds it (held.c; NULL: none) */
	const char *next;	/* the first report's next step (NULL: none) */
	const char *suppression;	/* print_suppressions=1: a rule for this report */
	bool fixed;		/* its fixup ran, and repaired it, before the printing */
	bool unfixable;		/* an active object's memory released, no fixup to call */
};

void odebug_put_bounded(struct odebug_buf *b, const char *s, size_t cap);
void odebug_put_symbol(struct odebug_buf *b, const struct odebug_frame *f);
void odebug_put_frame(struct odebug_buf *b, int index, const struct odebug_frame *f);
void odebug_thread_name(char name[17]);
bool odebug_report_state(const struct odebug_snapshot *o, int owner,
			 struct report_state *s);
const char *odebug_report_origin_words(const struct debug_obj_descr *d);
const char *odebug_report_next_step(const struct debug_obj_descr *d);
const char *odebug_report_suppression(const struct report *r);
void odebug_format_json(struct odebug_buf *b, const struct report *r, int limit);

#endif /* ODEBUG_REPORT_FORMAT_H */
