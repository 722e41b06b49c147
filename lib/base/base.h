/* SPDX-License-Identifier: MIT */
/*
 * base.h - the base layer: the mode and this thread's words (mode.c), the
 * options (options.c), formatting (fmt.c), the start's page trim (trim.c).
 * Every other layer builds on it; it calls none of them.
 */
#ifndef ODEBUG_BASE_H
#define ODEBUG_BASE_H

#include "types.h"
#include "prim.h"
#include "glibc.h"

/* "mode.c": the switch, the re-entry guard, the lazy start */
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
void odebug_selftesting_set(bool on);
void odebug_disable(void);
void odebug_start_lock(void);
void odebug_start_unlock(void);

/*
 * What the start layer gives the mode (mode.c): deciding (in the
 * constructor, or the first call before it), starting (the first API
 * call), and hearing of each change of the mode.  One, placed by the
 * linker: ODEBUG_STARTER(name) = { ... };
 */
struct odebug_starter {
	enum odebug_mode (*decide)(void);
	enum odebug_mode (*start)(void);
	void (*mode_changed)(bool on);
};
#define ODEBUG_STARTER(id)								\
	static const struct odebug_starter id;						\
	static const struct odebug_starter *const id##_entry				\
		__attribute__((used, section("odebug_starter"))) = &id;			\
	static const struct odebug_starter id

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
	unsigned long seal_rwlocks;
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
	unsigned long print_suppressions;	/* lib/report/report-advice.c */
};
struct odebug_option_strings {
	char log_path[ODEBUG_OPT_STRLEN];
	char log_format[ODEBUG_OPT_STRLEN];
	char suppressions[ODEBUG_OPT_STRLEN];
	char symbolizer[ODEBUG_OPT_STRLEN];
	char modules[ODEBUG_OPT_STRLEN], module_path[ODEBUG_OPT_STRLEN];	/* lib/checks/modules.c */
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


/* The libunwind backtrace.c loads, and trim.c gives back the pages of. */
#ifndef ODEBUG_LIBUNWIND_SONAME
#define ODEBUG_LIBUNWIND_SONAME "libunwind.so.8"
#endif

/* "trim.c": the start's pages given back */
#define ODEBUG_TRIM_STARTED	1
#define ODEBUG_TRIM_THREADED	2
void odebug_trim_note(void);
void odebug_trim(void);
void odebug_trim_after(int event);
bool odebug_self_holds(const void *p);


/* A new returned-frames mark: the fast-path mark follows it outside the guard. */
static inline void odebug_onstack_set(uintptr_t low)
{
	odebug_tls.onstack_low = low;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (!odebug_tls.guard)
		odebug_tls.fast_sp = low;
}

extern ODEBUG_HIDDEN bool odebug_thread_hook;	/* "mode.c": threads are seen starting */

#endif /* ODEBUG_BASE_H */
