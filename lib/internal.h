/* SPDX-License-Identifier: MIT */
/*
 * internal.h - libodebug's internal interfaces, grouped by the file that
 * owns them.  Every name here carries the odebug_ prefix and hidden
 * visibility; only include/odebug.h and the interposers are exported.
 */
#ifndef ODEBUG_INTERNAL_H
#define ODEBUG_INTERNAL_H

#include "types.h"
#include "prim.h"
#include "glibc.h"

/* "init.c": the switch, the re-entry guard, process setup */
/*
 * IDLE: on, but nothing started until the first API call (init.c).  It
 * comes after ON, so "mode >= ODEBUG_MODE_ON" (decided on, started or not)
 * costs the free path the same one compare as "mode == ODEBUG_MODE_ON".
 */
enum odebug_mode { ODEBUG_MODE_UNINIT, ODEBUG_MODE_OFF, ODEBUG_MODE_ON, ODEBUG_MODE_IDLE };
extern ODEBUG_HIDDEN int odebug_mode;

/*
 * This thread's words on the fast paths, in one block: a shared object's
 * initial-exec TLS costs a GOT load per variable, and an interposer reads
 * several (the guard, the returned-frames mark, the lock cache).
 */
#define ODEBUG_MCACHE_BITS	5
struct odebug_tls {
	/*
	 * An interposer whose caller's stack pointer is at or below this
	 * takes its fast path: onstack_low, or 0 under the guard, so that one
	 * compare tests both (odebug_guard_enter(), odebug_onstack_set()).
	 */
	uintptr_t fast_sp;
	/*
	 * "stack.c": no on-stack object of this thread lies below it; a call
	 * whose caller's stack pointer is above it checks the returned frames.
	 */
	uintptr_t onstack_low;
	/*
	 * Set while this thread holds one of our locks, unwinds, symbolises
	 * or maps memory, and from fork()'s prepare to its parent/child
	 * handlers: a call made under it goes straight through (init.c).
	 */
	int guard;
	int self_tid;	/* "builtin.c": glibc's __owner of this thread, 0 until read */
	/*
	 * "stack.c": this thread's stack proper, [stack_lo, stack_lo +
	 * stack_len), as learned; empty until then.  Objects in it keep
	 * their holds in their trackers (odebug_on_stack()).
	 */
	uintptr_t stack_lo, stack_len;
	/* "builtin.c": the locks this thread took whose holds glibc keeps (builtin.h) */
	struct odebug_tracker *mcache[1 << ODEBUG_MCACHE_BITS];
};
extern ODEBUG_HIDDEN ODEBUG_TLS struct odebug_tls odebug_tls;

/* Is @addr on this thread's stack proper, as learned (stack.c)? */
static inline bool odebug_on_own_stack(uintptr_t addr)
{
	return addr - odebug_tls.stack_lo < odebug_tls.stack_len;
}
bool odebug_enable_slow(void);
bool odebug_start_slow(void);
bool odebug_selftesting(void);
void odebug_disable(void);

/*
 * "start-steps.c": a time stamp at each step of the start, in the bench
 * build of the library only (bench/start-steps/, bench-start --steps).
 */
#ifdef ODEBUG_START_STEPS
void odebug_start_step(const char *name);
void odebug_start_steps_flush(void);
#else
static inline void odebug_start_step(const char *name) { (void)name; }
static inline void odebug_start_steps_flush(void) { }
#endif

/*
 * True when the debug_object_* calls should do their work.  Disabled, this
 * is a load and a compare that always goes the same way.
 */
static inline bool odebug_on(void)
{
	int mode = odebug_load(&odebug_mode);

	if (likely(mode == ODEBUG_MODE_ON))
		return odebug_tls.guard == 0;
	if (likely(mode == ODEBUG_MODE_OFF))
		return false;
	return odebug_start_slow() && odebug_tls.guard == 0;
}

/*
 * The interposers' test: disabled, one load and one predictable branch;
 * enabled, not from inside libodebug (our reports lock libunwind's and
 * libdw's mutexes) and not after an out-of-memory switch-off.
 */
static inline bool odebug_interposer_ready(void)
{
	int mode;

	if (odebug_tls.guard)
		return false;
	mode = odebug_load(&odebug_mode);
	if (likely(mode == ODEBUG_MODE_ON))
		return true;
	/* The first checked call starts libodebug, as an API call does. */
	return mode == ODEBUG_MODE_IDLE && odebug_start_slow() && odebug_tls.guard == 0;
}

/*
 * The fast-path mark drops before the guard is counted and rises after it
 * is released: a signal handler between the two sees the guard or takes
 * the cold path, which reads the guard itself.
 */
static inline void odebug_guard_enter(void)
{
	odebug_tls.fast_sp = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	odebug_tls.guard++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static inline void odebug_guard_exit(void)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (--odebug_tls.guard == 0) {
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		odebug_tls.fast_sp = odebug_tls.onstack_low;
	}
}

/*
 * "options.c": the one table of ODEBUG_OPTIONS.  The numbers, which the
 * frequent paths read (origins, on every tracker step), live with the
 * other hot variables (types.h's ODEBUG_HOT); the strings, which the start
 * and the reports read, apart.
 */
#define ODEBUG_OPT_STRLEN 256
struct odebug_options {
	unsigned long max_reports;
	unsigned long pool_size;
	unsigned long pool_max;
	unsigned long stack_depth;
	unsigned long selftest;
	unsigned long check_free;
	unsigned long check_pthread;
	unsigned long check_sem;
	unsigned long check_held;
	unsigned long check_fd;
	unsigned long origins;
	unsigned long exitcode;
	unsigned long abort_on_error;
	unsigned long halt_on_error;
	unsigned long report_active_at_exit;
	unsigned long print_stats;
	unsigned long help;
	unsigned long verbosity;
	unsigned long dedup;
	unsigned long print_suppressions;	/* lib/report-advice.c */
};
struct odebug_option_strings {
	char log_path[ODEBUG_OPT_STRLEN];
	char log_format[ODEBUG_OPT_STRLEN];
	char suppressions[ODEBUG_OPT_STRLEN];
	char symbolizer[ODEBUG_OPT_STRLEN];
	char modules[ODEBUG_OPT_STRLEN], module_path[ODEBUG_OPT_STRLEN];	/* lib/modules.c */
};
extern ODEBUG_HIDDEN struct odebug_options odebug_opt;
extern ODEBUG_HIDDEN struct odebug_option_strings odebug_opt_str;
void odebug_options_parse(const char *text);
void odebug_options_help(void);
#define ODEBUG_QUOTE_LEN (64 * 4 + 4)
const char *odebug_quote(char *dst, const char *s, size_t len);
/* A path from an option, with room for a ".<pid>" suffix: whole. */
#define ODEBUG_QUOTE_PATH_KEEP	(ODEBUG_OPT_STRLEN + 24)
#define ODEBUG_QUOTE_PATH_LEN	(ODEBUG_QUOTE_PATH_KEEP * 4 + 4)
const char *odebug_quote_n(char *dst, size_t keep, const char *s, size_t len);

/* "held.c": memory the kernel and libc hold (held.h) */
void odebug_held_init(void);
bool odebug_held_released(const struct odebug_snapshot *o);
bool odebug_held_describe(const struct odebug_snapshot *o, char *buf, size_t cap);

/* "held-store.c": the records' lock across fork() (init.c's handlers) */
void odebug_holds_fork_lock(void);
void odebug_holds_fork_unlock(void);

/* "fmt.c": formatting into a fixed buffer, flushed with write(2) */
struct odebug_buf {
	int fd;			/* flushed to when full; -1: truncate instead */
	size_t len, cap;
	char *data;
	char inline_data[512];
};
void odebug_buf_init(struct odebug_buf *b, int fd);
void odebug_buf_init_mem(struct odebug_buf *b, char *mem, size_t cap);
void odebug_puts(struct odebug_buf *b, const char *s);
void odebug_putc(struct odebug_buf *b, char c);
void odebug_put_hex(struct odebug_buf *b, uintptr_t v);
void odebug_put_dec(struct odebug_buf *b, unsigned long v);
void odebug_put_pad(struct odebug_buf *b, const char *s, size_t width);
void odebug_put_json_str(struct odebug_buf *b, const char *s);
void odebug_civil_from_days(long days, int *year, unsigned int *month, unsigned int *day);
void odebug_flush(struct odebug_buf *b);
void odebug_message(const char *first, ...) __attribute__((sentinel));

/* "pool.c": trackers, in one mapping reserved at start */
bool odebug_pool_init(void);
void odebug_pool_fini(void);
bool odebug_pool_fill(void);
#include "tracker.h"


/*
 * With origins=1, the depot ids of a tracker's init and activate stacks,
 * beside the pool (NULL otherwise): trackers stay 16 bytes without them.
 */
enum odebug_origin { ODEBUG_ORIGIN_INIT, ODEBUG_ORIGIN_ACTIVATE };
extern ODEBUG_HIDDEN uint32_t (*odebug_origins)[2];

static inline uint32_t odebug_tracker_origin(const struct odebug_tracker *t,
					     enum odebug_origin which)
{
	return odebug_origins ? odebug_origins[odebug_tracker_index(t)][which] : 0;
}

static inline void odebug_tracker_set_origin(const struct odebug_tracker *t,
					     enum odebug_origin which, uint32_t id)
{
	if (odebug_origins)
		odebug_origins[odebug_tracker_index(t)][which] = id;
}
struct odebug_tracker *odebug_pool_alloc(void);
void odebug_pool_free(struct odebug_tracker *t);
void odebug_pool_recycle(struct odebug_tracker *t);
void odebug_pool_count(bool alloc);
void odebug_pool_lock(void);
void odebug_pool_unlock(void);
void odebug_pool_stats(struct debug_objects_stats *s);
void odebug_pool_restore(const struct debug_objects_stats *s);


/* "debugobjects.c": the state machine */
void odebug_reclaim_last_freed(void);
extern ODEBUG_HIDDEN unsigned long odebug_warnings, odebug_fixups, odebug_suppressed;
bool odebug_fixup(bool (*fn)(void *, enum debug_obj_state), void *addr,
		  enum debug_obj_state state);

/* "freecheck.c": the free check */
extern ODEBUG_HIDDEN unsigned long odebug_max_checked;
void odebug_check_range_slow(uintptr_t start, uintptr_t end);

/* The free check of [start, end): a lockless look first (table.c). */
static inline void odebug_check_range(uintptr_t start, uintptr_t end)
{
	if (odebug_range_may_hold(start, end))
		odebug_check_range_slow(start, end);
}
bool odebug_range_tracked(uintptr_t start, uintptr_t end);
void odebug_check_range_dead(uintptr_t start, uintptr_t end);

/* "unload.c": memory gone without a fixup's chance (dlclose, returned frames) */
void odebug_drop_range(uintptr_t start, uintptr_t end,
		       bool (*describe)(struct odebug_snapshot *o, void *arg), void *arg);
#define ODEBUG_UNLOAD_RANGES	8
#define ODEBUG_UNLOAD_OBJS	32
struct odebug_unload {
	int nranges;
	uintptr_t lo[ODEBUG_UNLOAD_RANGES], hi[ODEBUG_UNLOAD_RANGES];
	char module[256];
	bool any;			/* anything tracked in the ranges */
	int nobjs;
	unsigned long more;		/* active trackers not copied */
	struct {
		uintptr_t addr;
		const struct debug_obj_descr *descr;	/* compared, never read after */
		char name[48];
		bool released;		/* its module's word, read while mapped */
	} objs[ODEBUG_UNLOAD_OBJS];
};
void odebug_unload_before(struct odebug_unload *u);
void odebug_unload_after(struct odebug_unload *u);

/* "report.c": what a misuse looks like, and what follows it */
extern ODEBUG_HIDDEN const char *const odebug_state_names[ODEBUG_STATE_MAX];
void odebug_report(const struct odebug_snapshot *o, const char *op);
bool odebug_report_fix(const struct odebug_snapshot *o, const char *op,
		       bool (*fn)(void *, enum debug_obj_state), void *addr);
bool odebug_report_held(const struct odebug_snapshot *o, const char *op, const char *holder,
			bool (*fn)(void *, enum debug_obj_state), void *addr);
void odebug_report_on_stack(uintptr_t addr, uintptr_t stack, bool is_on_stack);
extern ODEBUG_HIDDEN const struct debug_obj_descr *odebug_quiet_descr;
void odebug_report_init(void);
void odebug_report_lock(void);
void odebug_report_unlock(void);
bool odebug_report_trylock(void);
void odebug_report_child(void);
void odebug_report_at_exit(void);
void odebug_report_before_exec(void);
void odebug_report_exit(const struct odebug_snapshot *o);
/* "report-exit.c" */
void odebug_report_active_objects(void);

/* "descr.c": the descriptor registry; descriptors whose module may be gone */
int odebug_descr_note_slow(const struct debug_obj_descr *d);
int odebug_descr_slot(const struct debug_obj_descr *d);

/* "stats-types.c": print_stats=1's table per type (counts: tracker.h) */
void odebug_types_reported(const struct debug_obj_descr *d);
void odebug_types_forget(const struct debug_obj_descr *d);
void odebug_types_print(int fd);
extern ODEBUG_HIDDEN ODEBUG_TLS const struct debug_obj_descr *odebug_descr_last;
extern ODEBUG_HIDDEN ODEBUG_TLS int odebug_descr_last_slot;
extern ODEBUG_HIDDEN ODEBUG_TLS unsigned int odebug_descr_last_epoch;
extern ODEBUG_HIDDEN unsigned int odebug_descr_epoch;

/*
 * The slot of @d, registered when a tracker is made: two compares, unless
 * the descriptor changed or a module was unloaded since (another module's
 * descriptor may now have @d's address).  -1 when the registry is full:
 * not tracked.
 */
static inline int odebug_descr_note(const struct debug_obj_descr *d)
{
	if (unlikely(odebug_descr_last != d ||
		     odebug_descr_last_epoch != __atomic_load_n(&odebug_descr_epoch, __ATOMIC_RELAXED)))
		return odebug_descr_note_slow(d);
	return odebug_descr_last_slot;
}

/* A module was unloaded: every thread's cached descriptor is checked again. */
static inline void odebug_descr_forget(void)
{
	__atomic_add_fetch(&odebug_descr_epoch, 1, __ATOMIC_RELAXED);
}
void odebug_descr_resolve(struct odebug_snapshot *o);
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

/* "depot.c": stacks stored once, named by 32-bit ids */
bool odebug_depot_init(void);
uint32_t odebug_depot_save(void *const *pcs, int n);
int odebug_depot_get(uint32_t id, const uintptr_t **pcs);
void odebug_depot_lock(void);
void odebug_depot_unlock(void);
uint32_t odebug_origin_here(void);
void odebug_origin_init(void);	/* "origin.c" */
uintptr_t odebug_stack_top(void);	/* "stack.c" */

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
#ifndef ODEBUG_LIBUNWIND_SONAME
#define ODEBUG_LIBUNWIND_SONAME "libunwind.so.8"
#endif
void odebug_backtrace_init(void);
int odebug_backtrace(void **pcs, int max);
void odebug_backtrace_thread_prepare(void);
int odebug_backtrace_skip(void *const *pcs, int n);
int odebug_backtrace_culprit(void *const *pcs, int first, int n);
int odebug_backtrace_drop_own(const uintptr_t *pcs, int n, uintptr_t *out);
bool odebug_backtrace_skip_module(const void *addr);
void odebug_modules_scan(void);	/* lib/modules.c */
bool odebug_modules_describe(const struct debug_obj_descr *descr, void *addr, char *buf,
			     size_t cap);	/* lib/modules.c */
bool odebug_modules_released(const struct debug_obj_descr *descr, void *addr, bool gone);
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

/* "trim.c": the start's pages given back */
#define ODEBUG_TRIM_STARTED	1
#define ODEBUG_TRIM_THREADED	2
void odebug_trim_note(void);
void odebug_trim(void);
void odebug_trim_after(int event);
bool odebug_self_holds(const void *p);

/* "stack.c": thread stacks */
void odebug_stack_init(void);
bool odebug_on_stack(uintptr_t addr, uintptr_t *stack_base);
void odebug_stack_prepare(void);
void odebug_stack_learn(void);
void odebug_stack_learn_main(void);
void odebug_stack_forget(void);
bool odebug_on_any_stack(uintptr_t addr);
void odebug_stack_note_main(void);
void odebug_thread_begin(void);	/* "thread.c" */
extern ODEBUG_HIDDEN bool odebug_thread_hook;
void odebug_stack_watch_exit(void);
/* A new returned-frames mark: the fast-path mark follows it outside the guard. */
static inline void odebug_onstack_set(uintptr_t low)
{
	odebug_tls.onstack_low = low;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (!odebug_tls.guard)
		odebug_tls.fast_sp = low;
}
void odebug_stack_mark(uintptr_t addr);
void odebug_stack_check_returned(uintptr_t sp);

/*
 * At each entry point (after odebug_on()): did the caller's frames return
 * over an on-stack object?  One compare unless an on-stack object of this
 * thread may lie below the caller's frame.
 */
#define odebug_check_returned()	odebug_check_returned_above(0)

/*
 * @above: bytes known to lie between this frame and the caller's stack
 * pointer (other frames of ours); 0 in an entry point, where the frame
 * address plus the saved frame pointer and return address is the caller's
 * stack pointer (x86-64) or below it.
 */
#if defined(__GNUC__) && !defined(__clang__)
/* The call's CFA (the caller's stack pointer before the call) needs no frame
 * pointer: __builtin_frame_address(0) made every caller (free()'s check_block)
 * set one up, 3 instructions a call. */
#define odebug_caller_sp()	((uintptr_t)__builtin_dwarf_cfa())
#else
#define odebug_caller_sp()	((uintptr_t)__builtin_frame_address(0) + 16)
#endif
#define odebug_check_returned_above(above)					\
	do {									\
		uintptr_t sp_ = odebug_caller_sp() + (above);			\
		if (unlikely(sp_ > odebug_tls.onstack_low))				\
			odebug_stack_check_returned(sp_);			\
	} while (0)

/* "selftest.c" */
bool odebug_selftest(void);

/* "stats.c" */
void odebug_stats_snapshot(struct debug_objects_stats *s);
void odebug_stats_restore(const struct debug_objects_stats *s);

#endif /* ODEBUG_INTERNAL_H */

