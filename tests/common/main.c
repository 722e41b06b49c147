/* SPDX-License-Identifier: MIT */
/*
 * main.c - the one main() of the CMocka test programs.
 *
 * A single argument that is not an option selects the cases to run, by
 * name, with * and ? as wildcards:
 *
 *   meson test -C build statetable --test-args 'activate_*'
 *   build/tests/unit/test-statetable 'activate_*'
 *
 * Other arguments (a child scenario's "--child NAME") are the program's own.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "test-main.h"

int main(int argc, char **argv)
{
	if (argc == 2 && argv[1][0] != '-')
		cmocka_set_test_filter(argv[1]);
	return test_main(argc, argv);
}
