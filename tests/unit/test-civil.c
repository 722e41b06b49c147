/* SPDX-License-Identifier: MIT */
/*
 * The JSON timestamp's date arithmetic (fmt.c), white-box: against
 * gmtime_r for every day from 1900 to 2200 and a few far ones.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <cmocka.h>

#include "core.h"
#include "test-main.h"

static void civil_from_days_matches_gmtime(void **state)
{
	long day;

	(void)state;
	for (day = -25567; day <= 84000; day++) {	/* 1900-01-01 .. 2199-12-24 */
		time_t t = (time_t)day * 86400;
		struct tm tm;
		unsigned int month, mday;
		int year;

		gmtime_r(&t, &tm);
		odebug_civil_from_days(day, &year, &month, &mday);
		assert_int_equal(year, tm.tm_year + 1900);
		assert_int_equal(month, (unsigned int)tm.tm_mon + 1);
		assert_int_equal(mday, (unsigned int)tm.tm_mday);
	}
}

static void civil_from_days_known_dates(void **state)
{
	unsigned int month, mday;
	int year;

	(void)state;
	odebug_civil_from_days(0, &year, &month, &mday);
	assert_true(year == 1970 && month == 1 && mday == 1);
	odebug_civil_from_days(11016, &year, &month, &mday);	/* a leap day */
	assert_true(year == 2000 && month == 2 && mday == 29);
	odebug_civil_from_days(-1, &year, &month, &mday);
	assert_true(year == 1969 && month == 12 && mday == 31);
}

int test_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(civil_from_days_matches_gmtime),
		cmocka_unit_test(civil_from_days_known_dates),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
