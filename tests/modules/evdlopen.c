/* SPDX-License-Identifier: MIT */
/* evdlopen.c - loads evplugin.so (and with it libevent) at run time. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	void *h = argc == 2 ? dlopen(argv[1], RTLD_NOW) : NULL;
	int (*drop)(void);

	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 2;
	}
	*(void **)&drop = dlsym(h, "plugin_drop");
	printf("end %d\n", drop());
	return 0;
}
