/* SPDX-License-Identifier: MIT */
/*
 * test-start.c - a start that fails part-way leaves nothing mapped
 * (white-box: links the core and runs setup()'s steps itself).
 *
 * The table and the pool are set up, then an address-space limit makes
 * the depot's reservation fail, as it would in a small container; what
 * setup() does then (pool and table undone) must bring the process's
 * mapped bytes back to where they were.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>
#include <cmocka.h>

#include "internal.h"
#include "test-main.h"

/* Bytes mapped, from /proc/self/maps; no allocation. */
static unsigned long mapped_bytes(void)
{
	static char buf[1 << 16];
	unsigned long total = 0, lo = 0, hi = 0;
	int fd = open("/proc/self/maps", O_RDONLY), field = 0;
	ssize_t n;

	assert_true(fd >= 0);
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < n; i++) {
			char c = buf[i];

			if (c == '\n') {
				total += hi - lo;
				lo = hi = 0;
				field = 0;
			} else if (field == 0 && c == '-') {
				field = 1;
			} else if (field < 2 && c == ' ') {
				field = 2;
			} else if (field < 2) {
				unsigned long *v = field ? &hi : &lo;

				*v = *v * 16 + (unsigned long)(c <= '9' ? c - '0' : c - 'a' + 10);
			}
		}
	}
	close(fd);
	return total;
}

static void failed_depot_leaves_nothing_mapped(void **state)
{
	struct rlimit old, lim;
	unsigned long before, after;

	(void)state;
	odebug_options_parse("origins=1");
	before = mapped_bytes();
	assert_true(odebug_table_init());
	assert_true(odebug_pool_init());
	assert_true(mapped_bytes() > before);

	/* Room for nothing near the depot's 256 MiB. */
	assert_int_equal(getrlimit(RLIMIT_AS, &old), 0);
	lim = old;
	lim.rlim_cur = mapped_bytes() + (64ul << 20);
	assert_int_equal(setrlimit(RLIMIT_AS, &lim), 0);
	assert_false(odebug_depot_init());
	assert_int_equal(setrlimit(RLIMIT_AS, &old), 0);

	odebug_pool_fini();
	odebug_table_fini();
	after = mapped_bytes();
	assert_int_equal(after, before);
}

int test_main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(failed_depot_leaves_nothing_mapped),
	};

	(void)argc, (void)argv;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
