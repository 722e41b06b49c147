/* SPDX-License-Identifier: MIT */
/*
 * mod-test.h - shared by the modules' CMocka suites: a report of the
 * module's type at the culprit's free, with the fixups it counted.
 */
#ifndef ODEBUG_MOD_TEST_H
#define ODEBUG_MOD_TEST_H

#include "pthread/pt.h"

/* The report's first frames (#0 or #1) name @fn: the culprit's free(). */
static inline void assert_culprit(const char *out, const char *fn)
{
	const char *f0 = strstr(out, "    #0 "), *f2 = f0 ? strstr(f0, "    #2 ") : NULL;
	const char *hit = f0 ? strstr(f0, fn) : NULL;

	if (!f0 || !hit || (f2 && hit > f2))
		fail_msg("%s is not in the first frames of:\n%s", fn, out);
}

/* One "free active" report by @fn in @code, @fixups fixups, all of @... in it. */
#define EXPECT_FREE_REPORT(fn, nfix, code, ...) do {			\
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
	if (d_.warnings != 1 || d_.fixups != (nfix))				\
		fail_msg("%ld warnings, %ld fixups, not 1 and %d:\n%s",	\
			 d_.warnings, d_.fixups, (int)(nfix), out_);		\
	assert_culprit(out_, fn);						\
	free(out_);								\
} while (0)

#endif
