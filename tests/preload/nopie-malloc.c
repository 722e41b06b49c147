/* SPDX-License-Identifier: MIT */
/*
 * A non-PIE program that takes malloc's and clone's addresses: the dynamic
 * linker gives their symbols the executable's canonical PLT entries, which
 * dlsym(RTLD_DEFAULT) returns although the executable defines neither.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

void *(*volatile program_malloc)(size_t);
int (*volatile program_clone)(int (*)(void *), void *, int, void *, ...);

int main(void)
{
	char *volatile p;

	/* Taken in code (an absolute address in the text), not in data. */
	program_malloc = malloc;
	program_clone = clone;
	p = program_malloc(100);

	if (!p)
		return 1;
	free(p);
	printf("%d\n", program_clone != NULL);
	return 0;
}
