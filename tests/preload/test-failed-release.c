/* SPDX-License-Identifier: MIT */
/*
 * Releases that fail are not releases: a realloc that
 * returns NULL, a munmap or mremap the kernel refuses with EINVAL.  None of
 * them may report, fix up or untrack anything; the program still owns the
 * memory and its later calls must not get false reports.  The successful
 * neighbours of each case still check.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "odebug.h"

/* The point of these tests: p is still valid after a realloc that failed. */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#pragma GCC diagnostic ignored "-Wuse-after-free"
#endif

static int fixups;

static bool count_fixup_free(void *addr, enum debug_obj_state state)
{
	(void)addr;
	(void)state;
	fixups++;
	return false;
}

static const struct debug_obj_descr descr = {
	.name = "release", .fixup_free = count_fixup_free,
};

static unsigned long warnings(void)
{
	struct debug_objects_stats s;

	debug_objects_get_stats(&s, sizeof(s));
	return s.warnings;
}

static unsigned long w0;
static int f0;

static void mark(void)
{
	w0 = warnings();
	f0 = fixups;
}

#define assert_reports(n) do { \
	assert_int_equal(warnings() - w0, (n)); \
	assert_int_equal(fixups - f0, (n)); \
} while (0)

static void arm(void *obj)
{
	debug_object_init(obj, &descr);
	assert_int_equal(debug_object_activate(obj, &descr), 0);
}

/* The object is still the program's: a clean deactivate and free, no report. */
static void assert_still_armed(void *obj)
{
	assert_int_equal(debug_object_get_state(obj), ODEBUG_STATE_ACTIVE);
	mark();
	debug_object_deactivate(obj, &descr);
	debug_object_free(obj, &descr);
	assert_reports(0);
}

/* Sizes from a variable: the compiler must not see through them. */
static volatile size_t huge_half = SIZE_MAX / 2, huge_over = (size_t)PTRDIFF_MAX + 1;

static void failed_realloc_releases_nothing(void **state)
{
	char *p = malloc(256), *q;

	(void)state;
	memset(p, 'a', 256);
	arm(p + 64);
	mark();
	errno = 0;
	q = realloc(p, huge_half);	/* fails: p is still ours */
	assert_null(q);
	assert_int_equal(errno, ENOMEM);
	assert_reports(0);
	q = realloc(p, huge_over);	/* refused up front */
	assert_null(q);
	assert_reports(0);
	q = reallocarray(p, huge_half, 2);	/* overflows */
	assert_null(q);
	assert_reports(0);
	assert_int_equal(p[255], 'a');
	assert_still_armed(p + 64);
	free(p);
}

static void successful_realloc_still_checks_and_copies(void **state)
{
	char *p = malloc(256), *q;

	(void)state;
	memset(p, 'b', 256);
	arm(p + 64);
	mark();
	q = realloc(p, 100);	/* shrinks: the old block is released all the same */
	assert_non_null(q);
	assert_reports(1);
	assert_int_equal(q[0], 'b');
	assert_int_equal(q[99], 'b');
	p = q;
	arm(p + 8);
	mark();
	q = realloc(p, 1 << 20);	/* grows */
	assert_non_null(q);
	assert_reports(1);
	assert_int_equal(q[99], 'b');
	assert_int_equal(debug_object_get_state(q + 8), ODEBUG_STATE_NOTAVAILABLE);
	free(q);
}

static char *map(size_t pages)
{
	char *m = mmap(NULL, pages * 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_true(m != MAP_FAILED);
	return m;
}

static void refused_munmap_releases_nothing(void **state)
{
	char *m = map(4);

	(void)state;
	arm(m + 4096);
	mark();
	assert_int_equal(munmap(m + 1, 8192), -1);		/* misaligned */
	assert_int_equal(errno, EINVAL);
	assert_int_equal(munmap(m, 0), -1);			/* empty */
	assert_int_equal(errno, EINVAL);
	assert_int_equal(munmap(m, SIZE_MAX - 100), -1);	/* wraps */
	assert_int_equal(errno, EINVAL);
	assert_int_equal(munmap(m, (size_t)1 << 62), -1);	/* beyond user space */
	assert_int_equal(errno, EINVAL);
	assert_reports(0);
	assert_still_armed(m + 4096);
	arm(m + 4096);
	mark();
	assert_int_equal(munmap(m, 4 * 4096), 0);		/* the real thing */
	assert_reports(1);
}

static void refused_mremap_releases_nothing(void **state)
{
	char *m = map(4), *d = map(2);

	(void)state;
	arm(m);
	arm(m + 3 * 4096);
	mark();
	assert_true(mremap(m, 4 * 4096, 4096, 0x80) == MAP_FAILED);	/* unknown flag */
	assert_int_equal(errno, EINVAL);
	assert_true(mremap(m, 4 * 4096, 4096, MREMAP_FIXED, d) == MAP_FAILED);	/* FIXED needs MAYMOVE */
	assert_int_equal(errno, EINVAL);
	assert_true(mremap(m, 4 * 4096, 0, 0) == MAP_FAILED);		/* new size 0 */
	assert_int_equal(errno, EINVAL);
	assert_true(mremap(m, 4 * 4096, 4096, MREMAP_MAYMOVE | MREMAP_DONTUNMAP) == MAP_FAILED);
	assert_int_equal(errno, EINVAL);				/* DONTUNMAP cannot resize */
	assert_true(mremap(m + 1, 4 * 4096, 4096, 0) == MAP_FAILED);	/* misaligned */
	assert_int_equal(errno, EINVAL);
	assert_true(mremap(m, 4 * 4096, 4096, MREMAP_MAYMOVE | MREMAP_FIXED, m + 4096) == MAP_FAILED);
	assert_int_equal(errno, EINVAL);				/* overlapping */
	assert_reports(0);
	assert_still_armed(m);
	assert_still_armed(m + 3 * 4096);
	munmap(m, 4 * 4096);
	munmap(d, 2 * 4096);
}

/* MREMAP_FIXED unmaps whatever was at the destination: that is a release too. */
static void mremap_fixed_checks_the_destination(void **state)
{
	char *m = map(2), *d = map(2);
	void *r;

	(void)state;
	arm(d + 16);
	mark();
	r = mremap(m, 2 * 4096, 2 * 4096, MREMAP_MAYMOVE | MREMAP_FIXED, d);
	assert_true(r == d);
	assert_reports(1);
	munmap(d, 2 * 4096);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(failed_realloc_releases_nothing),
		cmocka_unit_test(successful_realloc_still_checks_and_copies),
		cmocka_unit_test(refused_munmap_releases_nothing),
		cmocka_unit_test(refused_mremap_releases_nothing),
		cmocka_unit_test(mremap_fixed_checks_the_destination),
	};

	if (!debug_objects_enabled())
		return 77;	/* skip: needs ODEBUG=1 */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
