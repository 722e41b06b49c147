/* SPDX-License-Identifier: MIT */
/*
 * Objects whose descriptor's module was dlclose'd (issue 12 item 6),
 * checked by check-stale-descr.sh.  argv[1] is the module, argv[2] what
 * happens after the dlclose: "exit" (report_active_at_exit does the rest),
 * "free" (the heap object is freed), "reuse" (the module's pages are
 * mapped again, full of other bytes, then the object is freed).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "odebug.h"

int main(int argc, char **argv)
{
	void (*arm)(void *);
	void *mod, *descr, *heap_obj = malloc(64);
	uintptr_t page;

	if (argc < 3 || !(mod = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL)))
		return 2;
	*(void **)&arm = dlsym(mod, "stale_arm");
	descr = dlsym(mod, "stale_descr");
	if (!arm || !descr)
		return 2;
	memset(heap_obj, 0, 64);
	arm(heap_obj);
	dlclose(mod);
	page = (uintptr_t)descr & ~(uintptr_t)(sysconf(_SC_PAGESIZE) - 1);
	if (!strcmp(argv[2], "reuse")) {
		char *m = mmap((void *)page, 4096, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

		if (m == MAP_FAILED || (uintptr_t)m != page)
			return 3;	/* the loader kept the pages: nothing to test */
		memset(m, 0x41, 4096);	/* "pointers" to 0x4141...: a call crashes */
	}
	if (strcmp(argv[2], "exit"))
		free(heap_obj);
	printf("survived %s\n", argv[2]);
	return 0;
}
