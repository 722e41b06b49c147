/* SPDX-License-Identifier: MIT */
/*
 * caller-app.c - a dlopen() means what it means to the code that calls
 * it: glibc searches the calling object's DT_RUNPATH for a bare name and
 * expands $ORIGIN to the calling object's directory.  Under libodebug's
 * dlopen interposer, the same three opens must find the same files:
 *   - the program's bare name, by the program's DT_RUNPATH ($ORIGIN/caller);
 *   - the program's $ORIGIN/libcaller-loader.so;
 *   - the loader's bare name, by the loader's own DT_RUNPATH;
 * and a name that exists nowhere fails with dlerror() set, as plain.
 * Exit 0 when all four behave; 1 and a line on stderr otherwise.
 */
#include <dlfcn.h>
#include <stdio.h>

static int check(const char *what, void *handle)
{
	int (*answer)(void);

	if (!handle) {
		fprintf(stderr, "caller-app: %s: %s\n", what, dlerror());
		return 1;
	}
	*(void **)&answer = dlsym(handle, "caller_plugin_answer");
	if (!answer || answer() != 42) {
		fprintf(stderr, "caller-app: %s: not the plugin\n", what);
		return 1;
	}
	return 0;
}

int main(void)
{
	void *(*loader_open)(void);
	void *loader;
	int bad = 0;

	bad |= check("the program's bare name", dlopen("libcaller-plugin.so", RTLD_NOW));
	loader = dlopen("$ORIGIN/libcaller-loader.so", RTLD_NOW);
	if (!loader) {
		fprintf(stderr, "caller-app: $ORIGIN/libcaller-loader.so: %s\n", dlerror());
		return 1;
	}
	*(void **)&loader_open = dlsym(loader, "caller_loader_open");
	if (!loader_open) {
		fprintf(stderr, "caller-app: no caller_loader_open\n");
		return 1;
	}
	bad |= check("the loader's bare name", loader_open());
	if (dlopen("libcaller-nowhere.so", RTLD_NOW) || !dlerror()) {
		fprintf(stderr, "caller-app: a missing library did not fail with an error\n");
		bad = 1;
	}
	return bad;
}
