/* SPDX-License-Identifier: MIT */
/*
 * The start's pages given back (trim.c), white-box: libunwind's read-only
 * segments leave the process's resident set, once, when both the start
 * and a thread have happened, and a page of ours that is no longer the
 * file's (as a debugger's breakpoint makes it) keeps its copy.  Linked
 * with the core, this program is the "libodebug" whose segments are
 * noted.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "core.h"
#include "test-main.h"

#define PAGE 4096
#define PM_PRESENT (1ull << 63)

/* Read-only pages of this program's own: one written (a breakpoint's copy), one not. */
__attribute__((used, aligned(PAGE))) static const unsigned char poked[PAGE] = { 1 };
__attribute__((used, aligned(PAGE))) static const unsigned char spare[PAGE] = { 2 };

static uint64_t pagemap(int fd, const void *addr)
{
	uint64_t e = 0;

	if (pread(fd, &e, sizeof(e), (off_t)((uintptr_t)addr / PAGE * sizeof(e))) != sizeof(e))
		return 0;
	return e;
}

struct segs {
	const char *name;
	uintptr_t lo[8], hi[8];
	int n;
};

/* The read-only segments of the object named @ctx->name. */
static int find(struct dl_phdr_info *info, size_t size, void *ctx)
{
	struct segs *s = ctx;

	(void)size;
	if (!info->dlpi_name || !strstr(info->dlpi_name, s->name))
		return 0;
	for (int i = 0; i < info->dlpi_phnum && s->n < 8; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD || (ph->p_flags & PF_W))
			continue;
		s->lo[s->n] = (info->dlpi_addr + ph->p_vaddr + PAGE - 1) & ~(uintptr_t)(PAGE - 1);
		s->hi[s->n] = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz) & ~(uintptr_t)(PAGE - 1);
		s->n++;
	}
	return 1;
}

static int resident(int fd, const struct segs *s)
{
	int n = 0;

	for (int i = 0; i < s->n; i++)
		for (uintptr_t p = s->lo[i]; p < s->hi[i]; p += PAGE)
			n += !!(pagemap(fd, (const void *)p) & PM_PRESENT);
	return n;
}

/* Touch every page of @s, as code that runs there would. */
static void touch(const struct segs *s)
{
	for (int i = 0; i < s->n; i++)
		for (uintptr_t p = s->lo[i]; p < s->hi[i]; p += PAGE)
			(void)*(volatile const char *)p;
}

static void trim_gives_back_the_report_path(void **state)
{
	struct segs unw = { .name = "libunwind" };
	void *h = dlopen(ODEBUG_LIBUNWIND_SONAME, RTLD_NOW | RTLD_LOCAL);
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	int before, after;

	(void)state;
	if (!h || fd < 0)
		skip();
	dl_iterate_phdr(find, &unw);
	assert_true(unw.n > 0);
	touch(&unw);	/* as a start that used it would */
	before = resident(fd, &unw);
	odebug_trim_note();
	odebug_trim();
	after = resident(fd, &unw);
	close(fd);
	assert_true(before > 0);
	assert_int_equal(after, 0);
}

static void trim_keeps_a_written_copy(void **state)
{
	uintptr_t p = (uintptr_t)poked;
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	uint64_t spare_after;

	(void)state;
	if (fd < 0)
		skip();
	(void)*(volatile const unsigned char *)spare;
	assert_true(pagemap(fd, spare) & PM_PRESENT);
	/* A debugger's poke: the page becomes this process's own copy. */
	assert_int_equal(mprotect((void *)p, PAGE, PROT_READ | PROT_WRITE), 0);
	*(volatile unsigned char *)p = 0x5a;
	assert_int_equal(mprotect((void *)p, PAGE, PROT_READ), 0);
	odebug_trim_note();
	odebug_trim();
	spare_after = pagemap(fd, spare);	/* before anything reads our read-only data */
	close(fd);
	assert_int_equal(*(volatile const unsigned char *)poked, 0x5a);
	assert_false(spare_after & PM_PRESENT);
	assert_int_equal(*(volatile const unsigned char *)spare, 2);
}

static void trim_after_waits_for_both_and_gives_back_once(void **state)
{
	struct segs unw = { .name = "libunwind" };
	void *h = dlopen(ODEBUG_LIBUNWIND_SONAME, RTLD_NOW | RTLD_LOCAL);
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	int all, threaded, both, again;

	(void)state;
	if (!h || fd < 0)
		skip();
	dl_iterate_phdr(find, &unw);
	odebug_trim_note();
	touch(&unw);
	all = resident(fd, &unw);
	odebug_trim_after(ODEBUG_TRIM_THREADED);	/* threaded, not started: nothing */
	threaded = resident(fd, &unw);
	odebug_trim_after(ODEBUG_TRIM_STARTED);		/* both: given back */
	both = resident(fd, &unw);
	touch(&unw);
	odebug_trim_after(ODEBUG_TRIM_THREADED);	/* done: never again */
	odebug_trim_after(ODEBUG_TRIM_STARTED);
	again = resident(fd, &unw);
	close(fd);
	assert_true(all > 0);
	assert_int_equal(threaded, all);
	assert_int_equal(both, 0);
	assert_int_equal(again, all);
}

int test_main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(trim_gives_back_the_report_path),
		cmocka_unit_test(trim_keeps_a_written_copy),
		cmocka_unit_test(trim_after_waits_for_both_and_gives_back_once),
	};

	(void)argc;
	(void)argv;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
