/* SPDX-License-Identifier: MIT */
/*
 * Objects whose descriptor's module was dlclose'd,
 * checked by check-stale-descr.sh.  argv[1] is the module, argv[2] what
 * happens after the dlclose: "exit" (report_active_at_exit does the rest),
 * "free" (the heap object is freed), "reuse" (the module's pages are
 * mapped again, full of other bytes, then the object is freed), or
 * "twin" (argv[3] is a module built from the same source with another type
 * name: loaded where the first was, its descriptor has the first's address,
 * and an object it arms must be reported under its own name).
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

/* The first module's heap object is disarmed and freed cleanly; then the twin's. */
static int twin(void *mod, void *descr, const char *path)
{
	void (*arm)(void *);
	void *obj = malloc(64), *obj2 = malloc(64);

	*(void **)&arm = dlsym(mod, "stale_arm_heap");
	if (!arm || !obj || !obj2)
		return 2;
	memset(obj, 0, 64);
	memset(obj2, 0, 64);
	arm(obj);
	debug_object_deactivate(obj, descr);
	debug_object_free(obj, descr);
	dlclose(mod);
	if (!(mod = dlopen(path, RTLD_NOW | RTLD_LOCAL)))
		return 2;
	if (dlsym(mod, "stale_descr") != descr)
		return 3;	/* not loaded where the first was: nothing to test */
	*(void **)&arm = dlsym(mod, "stale_arm_heap");
	arm(obj2);
	free(obj2);	/* active: reported as the twin's type */
	free(obj);
	printf("survived twin\n");
	return 0;
}

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
	if (!strcmp(argv[2], "twin"))
		return argc < 4 ? 2 : twin(mod, descr, argv[3]);
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
