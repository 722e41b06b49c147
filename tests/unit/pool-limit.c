/* SPDX-License-Identifier: MIT */
/*
 * Under a limit on address space (run by meson.build under `ulimit -v`),
 * the tracker pool reserves at most a sixteenth of it and one line says
 * so: the program's own large allocation, which fits in what the limit
 * leaves beside the process as it was before libodebug started plus that
 * sixteenth, still succeeds.  Prints "ok"/"FAIL"; exit status 0 on ok.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "odebug.h"

static const struct debug_obj_descr descr = { .name = "pool_limit" };

/* VmSize from /proc/self/status, in bytes. */
static unsigned long vm_size(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	unsigned long kb = 0;
	char line[256];

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmSize: %lu kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb << 10;
}

int main(void)
{
	static char obj[16];
	struct rlimit rl;
	unsigned long before, want;
	void *p;

	if (getrlimit(RLIMIT_AS, &rl) || rl.rlim_cur == RLIM_INFINITY) {
		printf("run under ulimit -v\n");
		return 1;
	}
	before = vm_size();
	debug_object_init(obj, &descr);		/* the start: table and pool */
	if (!debug_objects_enabled()) {
		printf("FAIL - libodebug did not start under the limit\n");
		return 1;
	}
	/* What the limit leaves, less the pool's sixteenth, the table's 4 MiB and slack. */
	want = rl.rlim_cur - before - rl.rlim_cur / 16 - (24ul << 20);
	p = malloc(want);
	printf("%s - limit %lu MiB, %lu MiB before the start, malloc of %lu MiB after it\n",
	       p ? "ok" : "FAIL", (unsigned long)(rl.rlim_cur >> 20), before >> 20, want >> 20);
	free(p);
	debug_object_free(obj, &descr);
	return p ? 0 : 1;
}
