/* SPDX-License-Identifier: MIT */
/*
 * report.h - the report layer: what a misuse looks like (report.c and its
 * formats), grouping, sinks, suppressions, naming frames, capturing them.
 * It calls the table and the base, and asks checkers through the registry.
 */
#ifndef ODEBUG_REPORT_LAYER_H
#define ODEBUG_REPORT_LAYER_H

#include "table.h"

/* "report.c": what the reports counted, and the fixup call */
extern ODEBUG_HIDDEN unsigned long odebug_warnings, odebug_fixups, odebug_suppressed;
bool odebug_fixup(bool (*fn)(void *, enum debug_obj_state), void *addr,
		  enum debug_obj_state state);


/* "report.c": what a misuse looks like, and what follows it */
extern ODEBUG_HIDDEN const char *const odebug_state_names[ODEBUG_STATE_MAX];
void odebug_report(const struct odebug_snapshot *o, const char *op);
bool odebug_report_fix(const struct odebug_snapshot *o, const char *op,
		       bool (*fn)(void *, enum debug_obj_state), void *addr);
void odebug_report_on_stack(uintptr_t addr, uintptr_t stack, bool is_on_stack);
extern ODEBUG_HIDDEN const struct debug_obj_descr *odebug_quiet_descr;
void odebug_report_init(void);
void odebug_report_lock(void);
void odebug_report_unlock(void);
bool odebug_report_trylock(void);
void odebug_report_child(void);
bool odebug_report_made_here(void);
bool odebug_report_warned_here(void);
void odebug_report_summary(void);
void odebug_report_exit(const struct odebug_snapshot *o);
/* "report-exit.c" */
void odebug_report_active_objects(void);
/* "stats-types.c": print_stats=1's table per type */
void odebug_types_print(int fd);

/* "group.c": reports grouped by cause, the summary at exit */
#define ODEBUG_GROUPS		1024	/* distinct causes grouped; then ungrouped */
#define ODEBUG_GROUP_REPEAT	(-1)	/* a cause seen before: count, do not print */
#define ODEBUG_GROUP_NONE	(-2)	/* not grouped (dedup=0, table full) */
int odebug_group_add(const struct odebug_snapshot *o, const char *op, bool culprit);
void odebug_group_printed(int g);
void odebug_group_suppressed(int g);
void odebug_group_child(void);
void odebug_group_stats(struct debug_objects_stats *s);
void odebug_group_summary(void);

/* "sink.c": stderr, a log file, or syslog */
void odebug_sink_write(const char *text, size_t len);
size_t odebug_sink_limit(void);

/* "suppress.c" */
void odebug_suppress_init(void);
void odebug_suppress_parse(const char *file, char *text, size_t len);
bool odebug_suppress_any(void);
bool odebug_suppress_needs_frames(void);
bool odebug_suppress_match(const char *type, const char *op,
		       const struct odebug_frame *frames, int nframes);


/* "origin.c": the stacks of origins=1 */
uint32_t odebug_origin_here(void);
void odebug_origin_init(void);

/* "symbolize.c": naming frames (an external symboliser; see there) */
void odebug_symbolize_begin(void);
int odebug_symbolize(const uintptr_t *pcs, int n, bool is_return,
		     struct odebug_frame *out, int max);
void odebug_symbolize_child(void);
/*
 * A module a dlclose() unmapped: while this thread reports, addresses in
 * [lo, hi) that no mapping holds are named as @path's, loaded at @bias
 * (NULL: none).
 */
struct odebug_unmapped {
	const char *path;
	uintptr_t bias, lo, hi;
};
void odebug_symbolize_unmapped(const struct odebug_unmapped *u);
void odebug_symbolize_check_option(void);

/* "helper.c": a helper process on a socket, started without fork() */
struct odebug_helper {
	int pid, fd, owner;
	unsigned long dev, ino;
	bool timed_out;		/* the last odebug_helper_talk() ran out of time */
};
void odebug_helper_init(void);
bool odebug_helper_sandboxed(void);
bool odebug_helper_start(struct odebug_helper *h, const char *path, char *const *argv);
bool odebug_helper_alive(struct odebug_helper *h);
void odebug_helper_stop(struct odebug_helper *h);
bool odebug_helper_talk(struct odebug_helper *h, const char *req, size_t req_len,
			char *out, size_t cap, size_t *len,
			bool (*done)(const char *text, size_t len, void *ctx), void *ctx,
			int timeout_ms, bool shut);

/* "backtrace.c": capturing and naming frames */
void odebug_backtrace_init(void);
int odebug_backtrace(void **pcs, int max);
void odebug_backtrace_thread_prepare(void);
int odebug_backtrace_skip(void *const *pcs, int n);
int odebug_backtrace_culprit(void *const *pcs, int first, int n);
int odebug_backtrace_drop_own(const uintptr_t *pcs, int n, uintptr_t *out);
bool odebug_backtrace_skip_module(const void *addr, bool own);
void odebug_backtrace_skip_through(const void *fn);

/*
 * "unwind.c": capturing return addresses from the call-frame information,
 * with nothing loaded (x86-64, not under ThreadSanitizer); elsewhere
 * libunwind, loaded by the constructor.
 */
#if defined(__x86_64__) && !ODEBUG_TSAN
#define ODEBUG_OWN_UNWIND 1
#else
#define ODEBUG_OWN_UNWIND 0
#endif
int odebug_unwind(void **pcs, int max);
void odebug_unwind_forget(void);

#endif /* ODEBUG_REPORT_LAYER_H */
