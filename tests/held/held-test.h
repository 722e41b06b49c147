/* SPDX-License-Identifier: MIT */
/*
 * held-test.h - shared by the held-memory suites: the report assertions of the
 * built-in types (pt.h) and the culprit's frame.
 */
#ifndef ODEBUG_TEST_HELD_H
#define ODEBUG_TEST_HELD_H

#include "pthread/pt.h"

/* One report of @type by @fn with @code, its fixup counted, all of @... in it. */
#define EXPECT_HELD_REPORT(fn, code, ...)					\
	EXPECT_OUTPUT(1, 1, (fn), code, "ODEBUG: free active", __VA_ARGS__)

/*
 * One report beginning with @head by @fn, with @nfix fixups counted
 * (0: a report only), all of @... in it.
 */
#define EXPECT_HELD_AS(head, fn, nfix, code, ...)				\
	EXPECT_OUTPUT(1, (nfix), (fn), code, head, __VA_ARGS__)

#endif
