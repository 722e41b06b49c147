/* SPDX-License-Identifier: MIT */
/*
 * evdlopen.c - loads evplugin.so (and with it libevent) at run time, calls
 * one of its functions (evdlopen PLUGIN [FUNCTION], plugin_drop by
 * default), then unloads it and says whether it is gone.
 */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	void *h = argc >= 2 ? dlopen(argv[1], RTLD_NOW) : NULL;
	int (*fn)(void);

	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 2;
	}
	*(void **)&fn = dlsym(h, argc == 3 ? argv[2] : "plugin_drop");
	if (!fn) {
		fprintf(stderr, "dlsym: %s\n", dlerror());
		return 2;
	}
	printf("end %d\n", fn());
	fflush(stdout);
	dlclose(h);
	printf("%s\n", dlopen(argv[1], RTLD_NOW | RTLD_NOLOAD) ? "still loaded" : "unloaded");
	return 0;
}
