/* SPDX-License-Identifier: MIT */
/*
 * host.c - dlopen()s the plugin, starts it and unloads it.
 * usage: host PLUGIN leak|clean|twice
 *   leak:  dlclose() unloads the module while its object is active
 *   clean: the module's destructor deactivates the object first
 *   twice: opened twice; the first dlclose() does not unload it
 *   reload: leak, then opened, started and unloaded twice more from one
 *           call site (the same cause twice: the last report is counted,
 *           not printed, when the module is loaded at the same address)
 * Built with ODEBUG_DLCLOSE_BASE="GLIBC_2.2.5" (the baseline node), it
 * calls dlclose at that version, as a program linked before glibc 2.34.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "odebug.h"

#ifdef ODEBUG_DLCLOSE_BASE
int dlclose_base(void *handle);
__asm__(".symver dlclose_base,dlclose@" ODEBUG_DLCLOSE_BASE);
#define dlclose dlclose_base
#endif

/* Looked up: the LD_PRELOAD build of this host does not link libodebug. */
static int state_of(void *obj)
{
	enum debug_obj_state (*get)(const void *);

	*(void **)&get = dlsym(RTLD_DEFAULT, "debug_object_get_state");
	return get ? (int)get(obj) : -1;
}

void unload_plugin(void *handle);
void unload_plugin(void *handle)
{
	if (dlclose(handle))
		printf("dlclose: %s\n", dlerror());
}

int main(int argc, char **argv)
{
	void (*start)(int);
	void *(*object)(void);
	void *h, *h2 = NULL, *obj;
	int i;

	setvbuf(stdout, NULL, _IONBF, 0);	/* in order with the reports */
	if (argc != 3)
		return 2;
	h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		printf("dlopen: %s\n", dlerror());
		return 2;
	}
	*(void **)&start = dlsym(h, "plugin_start");
	*(void **)&object = dlsym(h, "plugin_object");
	start(!strcmp(argv[2], "clean"));
	obj = object();
	if (!strcmp(argv[2], "twice")) {
		h2 = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
		unload_plugin(h);
		printf("after the first dlclose: state %d\n", state_of(obj));
		h = h2;
	}
	unload_plugin(h);
	printf("after dlclose: state %d\n", state_of(obj));
	for (i = 0; !strcmp(argv[2], "reload") && i < 2; i++) {
		h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
		if (!h)
			return 2;
		*(void **)&start = dlsym(h, "plugin_start");
		start(0);
		unload_plugin(h);	/* the same stack both times */
		printf("after reload %d\n", i + 1);
	}
	return 0;
}
