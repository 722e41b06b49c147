/* SPDX-License-Identifier: MIT */
/*
 * caller-origin.c - a program with no $ORIGIN in its own search path
 * opens $ORIGIN/libcaller-loader.so: glibc works out the program's
 * directory only then, and the open finds the loader beside it.
 * Exit 0 when it does; 1 and a line on stderr otherwise.
 */
#include <dlfcn.h>
#include <stdio.h>

int main(void)
{
	void *loader = dlopen("$ORIGIN/libcaller-loader.so", RTLD_NOW);

	if (!loader || !dlsym(loader, "caller_loader_open")) {
		fprintf(stderr, "caller-origin: $ORIGIN/libcaller-loader.so: %s\n", dlerror());
		return 1;
	}
	return 0;
}
