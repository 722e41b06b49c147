/* SPDX-License-Identifier: MIT */
/*
 * caller-app.c - a dlopen() means what it means to the code that calls
 * it: glibc searches the calling object's DT_RUNPATH for a bare name and
 * expands $ORIGIN to the calling object's directory.  Under libodebug's
 * dlopen interposer, the same three opens must find the same files:
 *   - the program's bare name, by the program's DT_RUNPATH ($ORIGIN/caller);
 *   - the program's $ORIGIN/libcaller-loader.so;
 *   - the loader's bare name, by the loader's own DT_RUNPATH;
 * the bare name once loaded is matched by an RTLD_NOLOAD open (glibc
 * gave the object that name); libcaller-bad.so, not an ELF object in the
 * first DT_RUNPATH directory (caller/bad), fails though the second has
 * a plugin by that name (glibc's search ends at a file it cannot load);
 * and a name that exists nowhere fails with dlerror() set, as plain.
 * Exit 0 when all behave; 1 and a line on stderr otherwise.
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

	void *plugin = dlopen("libcaller-plugin.so", RTLD_NOW);

	bad |= check("the program's bare name", plugin);
	if (plugin && dlopen("libcaller-plugin.so", RTLD_NOW | RTLD_NOLOAD) != plugin) {
		fprintf(stderr, "caller-app: RTLD_NOLOAD of the name loaded: not its handle\n");
		bad = 1;
	}
	if (dlopen("libcaller-bad.so", RTLD_NOW) || !dlerror()) {
		fprintf(stderr, "caller-app: the search went on past a file that is no ELF object\n");
		bad = 1;
	}
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
