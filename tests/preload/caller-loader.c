/* SPDX-License-Identifier: MIT */
/*
 * caller-loader.c - a library whose own DT_RUNPATH ($ORIGIN/caller) is
 * where its dlopen() of a bare name finds the plugin (caller-app.c).
 */
#include <dlfcn.h>

void *caller_loader_open(void);

__attribute__((visibility("default"))) void *caller_loader_open(void)
{
	return dlopen("libcaller-plugin.so", RTLD_NOW);
}
