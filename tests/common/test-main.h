/* SPDX-License-Identifier: MIT */
/*
 * test-main.h - every CMocka test program shares main() (main.c), which
 * applies the name filter and then calls the program's test_main().
 */
#ifndef ODEBUG_TEST_MAIN_H
#define ODEBUG_TEST_MAIN_H

int test_main(int argc, char **argv);

/*
 * The families of checks the build interposes (-Dbuiltin_types,
 * -Dheld_types): meson passes 0 for one it left out (test_family_args),
 * and a case that needs that family's reports is listed with
 * unit_test_with(BUILTIN, f) or unit_test_with(HELD, f): in a build
 * without the family its function is NULL, which CMocka passes over, so
 * the case is not in that build's plan (not run, not counted).  Not
 * passed: both built, the default.
 */
#ifndef ODEBUG_TEST_BUILTIN
#define ODEBUG_TEST_BUILTIN 1
#endif
#ifndef ODEBUG_TEST_HELD
#define ODEBUG_TEST_HELD 1
#endif
#define unit_test_with(family, f) \
	{ .name = #f, .test_func = ODEBUG_TEST_##family ? f : NULL }

#endif
