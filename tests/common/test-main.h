/* SPDX-License-Identifier: MIT */
/*
 * test-main.h - every CMocka test program shares main() (main.c), which
 * applies the name filter and then calls the program's test_main().
 */
#ifndef ODEBUG_TEST_MAIN_H
#define ODEBUG_TEST_MAIN_H

int test_main(int argc, char **argv);

#endif
