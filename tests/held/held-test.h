/* SPDX-License-Identifier: MIT */
/*
 * held-test.h - shared by the held-memory suites: the report assertions of the
 * built-in types (pt.h) and the culprit's frame.
 */
#ifndef ODEBUG_TEST_HELD_H
#define ODEBUG_TEST_HELD_H

#include "pthread/pt.h"

/* The report's first frames (#0 or #1) name @fn: the culprit's free(). */
static inline void assert_culprit(const char *out, const char *fn)
{
	const char *f0 = strstr(out, "    #0 "), *f2 = f0 ? strstr(f0, "    #2 ") : NULL;
	const char *hit = f0 ? strstr(f0, fn) : NULL;

	if (!f0 || !hit || (f2 && hit > f2))
		fail_msg("%s is not in the first frames of:\n%s", fn, out);
}

/* One report of @type by @fn with @code, its fixup counted, all of @... in it. */
#define EXPECT_HELD_REPORT(fn, code, ...) do {				\
	const char *want_[] = { "ODEBUG: free active", __VA_ARGS__ };	\
	struct stats_delta d_;							\
	char *out_;								\
										\
	stats_mark();								\
	capture_start();							\
	code;									\
	out_ = capture_stop();							\
	d_ = stats_delta();							\
	for (size_t i_ = 0; i_ < sizeof(want_) / sizeof(want_[0]); i_++)	\
		if (!strstr(out_, want_[i_]))					\
			fail_msg("missing \"%s\" in:\n%s", want_[i_], out_);	\
	if (d_.warnings != 1 || d_.fixups != 1)					\
		fail_msg("%ld warnings, %ld fixups, not 1 and 1:\n%s",		\
			 d_.warnings, d_.fixups, out_);				\
	assert_culprit(out_, fn);						\
	free(out_);								\
} while (0)

/*
 * One report beginning with @head by @fn, with @nfix fixups counted
 * (0: a report only), all of @... in it.
 */
#define EXPECT_HELD_AS(head, fn, nfix, code, ...) do {			\
	const char *want_[] = { head, __VA_ARGS__ };				\
	struct stats_delta d_;							\
	char *out_;								\
										\
	stats_mark();								\
	capture_start();							\
	code;									\
	out_ = capture_stop();							\
	d_ = stats_delta();							\
	for (size_t i_ = 0; i_ < sizeof(want_) / sizeof(want_[0]); i_++)	\
		if (!strstr(out_, want_[i_]))					\
			fail_msg("missing \"%s\" in:\n%s", want_[i_], out_);	\
	if (d_.warnings != 1 || d_.fixups != (nfix))				\
		fail_msg("%ld warnings, %ld fixups, not 1 and %d:\n%s",		\
			 d_.warnings, d_.fixups, (int)(nfix), out_);		\
	assert_culprit(out_, fn);						\
	free(out_);								\
} while (0)

#endif
