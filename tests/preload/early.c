/* SPDX-License-Identifier: MIT */
/*
 * A library whose constructor releases memory before libodebug's
 * constructor has run (under LD_PRELOAD, a program's own dependencies are
 * initialised first): the bootstrap paths must forward these calls.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

int early_releases;

__attribute__((constructor)) static void early_constructor(void)
{
	char *p = malloc(10);
	void *m = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	p = realloc(p, 1000);
	free(p);
	free(NULL);
	if (m != MAP_FAILED) {
		m = mremap(m, 8192, 4096, 0);
		if (m != MAP_FAILED && munmap(m, 4096) == 0)
			early_releases++;
	}
	early_releases++;
}
