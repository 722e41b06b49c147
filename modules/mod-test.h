/* SPDX-License-Identifier: MIT */
/*
 * mod-test.h - shared by the modules' CMocka suites: a report of the
 * module's type at the culprit's free, with the fixups it counted.
 */
#ifndef ODEBUG_MOD_TEST_H
#define ODEBUG_MOD_TEST_H

#include "pthread/pt.h"

/* One "free active" report by @fn in @code, @nfix fixups, all of @... in it. */
#define EXPECT_FREE_REPORT(fn, nfix, code, ...)				\
	EXPECT_OUTPUT(1, (nfix), (fn), code, "ODEBUG: free active", __VA_ARGS__)

#endif
