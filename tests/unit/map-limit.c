/* SPDX-License-Identifier: MIT */
/*
 * The chunk map (lib/table/table.c) reserves 32 GiB of address space.  Under a
 * limit on address space (RLIMIT_AS) it must not: the program's own
 * allocations would fail for it.  Each case starts libodebug in a fresh
 * child (the start is lazy: the first annotation maps the table), then
 * counts the mappings of exactly 32 GiB in /proc/self/maps.  Without a
 * limit the map is there (unless the machine's overcommit is strict,
 * where it must not be either): the control shows the count can see it.
 * Prints "N passed, N failed".
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "odebug.h"

static const struct debug_obj_descr descr = { .name = "map_limit" };

static int big_mappings(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long lo, hi;
	char line[512];
	int n = 0;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && hi - lo == (32ul << 30))
			n++;
	if (f)
		fclose(f);
	return n;
}

/* In a child: limit (0: none), start, and the count as exit status. */
static int child(rlim_t limit)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		static char obj[16];

		if (limit) {
			struct rlimit rl = { limit, limit };

			if (setrlimit(RLIMIT_AS, &rl))
				_exit(100);
		}
		debug_object_init(obj, &descr);
		if (!debug_objects_enabled())
			_exit(102);
		debug_object_free(obj, &descr);
		_exit(big_mappings());
	}
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 101;
}

static bool strict_overcommit(void)
{
	char c = '0';
	int fd = open("/proc/sys/vm/overcommit_memory", O_RDONLY);

	if (fd >= 0) {
		if (read(fd, &c, 1) != 1)
			c = '0';
		close(fd);
	}
	return c == '2';
}

int main(void)
{
	int passed = 0, failed = 0, n;

	/* Not debug_objects_enabled(): an API call here would start it here. */
	if (!getenv("ODEBUG") || strcmp(getenv("ODEBUG"), "1")) {
		printf("run with ODEBUG=1\n");
		return 1;
	}
	n = child(0);
	if (n == (strict_overcommit() ? 0 : 1)) {
		passed++;
		printf("ok - no limit: %d mapping(s) of 32 GiB\n", n);
	} else {
		failed++;
		printf("FAIL - no limit: %d mapping(s) of 32 GiB\n", n);
	}
	n = child((rlim_t)64 << 30);	/* room for the map, but a limit */
	if (n == 0) {
		passed++;
		printf("ok - RLIMIT_AS 64 GiB: no mapping of 32 GiB\n");
	} else {
		failed++;
		printf("FAIL - RLIMIT_AS 64 GiB: %d mapping(s) of 32 GiB\n", n);
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
