/* SPDX-License-Identifier: MIT */
/*
 * helpers.h - shared by the CMocka tests: a descriptor that records every
 * fixup call, counter deltas, stderr capture and running this test binary
 * again as a child with another environment.
 */
#ifndef ODEBUG_TEST_HELPERS_H
#define ODEBUG_TEST_HELPERS_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>

#include "odebug.h"
#include "test-main.h"

/* Which fixup ran, with which state, on which object. */
enum fixup_kind { FIX_INIT, FIX_ACTIVATE, FIX_DESTROY, FIX_FREE, FIX_ASSERT_INIT, FIX_MAX };

struct fixup_call {
	enum fixup_kind kind;
	void *addr;
	enum debug_obj_state state;
};

#define MAX_CALLS 64
extern struct fixup_call calls[MAX_CALLS];
extern int ncalls;
/* What each recording fixup returns (default false). */
extern bool fixup_result[FIX_MAX];

/* Records and returns fixup_result[kind]; repairs nothing. */
extern const struct debug_obj_descr rec_descr;
/* Records, then repairs the way the kernel's selftest fixups do. */
extern const struct debug_obj_descr repair_descr;
/* No callbacks at all. */
extern const struct debug_obj_descr bare_descr;

void calls_reset(void);

/*
 * fn(arg), called @depth frames deeper: reports made from different depths
 * have different stacks, so they are distinct causes (not one group).
 */
void at_depth(int depth, void (*fn)(void *arg), void *arg);

/*
 * free(), with the free check run explicitly where free() is not ours (the
 * sanitizer build has no interposition).
 */
void release(void *p, size_t size);

/* Counters now minus counters at the last stats_mark(). */
struct stats_delta {
	long warnings, fixups, suppressed, used;
};
void stats_mark(void);
struct stats_delta stats_delta(void);
struct debug_objects_stats stats_now(void);

/* Redirect fd 2 to a temporary file; stop and read what was written. */
void capture_start(void);
char *capture_stop(void);	/* malloc'ed, NUL-terminated */
bool capture_has(const char *needle);	/* in what was captured so far */
int count_lines_with(const char *text, const char *needle);

/* The report's first frames (#0 or #1) in @out name @fn. */
void assert_culprit(const char *out, const char *fn);

/*
 * Check what @code printed and counted between a stats_mark() and its
 * stats_delta(): every string of @want (@n of them) in @out, @warnings
 * reports, @fixups fixups (-1: any number), and, when @culprit is given,
 * that name in the first frames (#0 or #1) of the report.  Frees @out.
 */
void expect_output(char *out, struct stats_delta d, long warnings, long fixups,
		   const char *culprit, const char *const *want, size_t n);

/* Run @code and check its output and counters as expect_output() does. */
#define EXPECT_OUTPUT(warnings, fixups, culprit, code, ...) do {		\
	const char *const want_[] = { __VA_ARGS__ };				\
	char *out_;								\
										\
	stats_mark();								\
	capture_start();							\
	code;									\
	out_ = capture_stop();							\
	expect_output(out_, stats_delta(), (warnings), (fixups), (culprit),	\
		      want_, sizeof(want_) / sizeof(want_[0]));			\
} while (0)

/*
 * Run this executable again as "argv0 --child NAME" with the extra
 * environment strings given (NULL-terminated); returns its stdout and
 * stderr together (malloc'ed) and stores its wait status.
 */
char *run_child(const char *argv0, const char *name, int *status, ...);
/* In main(): if argv asks for a child scenario, run it and exit. */
void child_dispatch(int argc, char **argv,
		    void (*run)(const char *name));

#endif
