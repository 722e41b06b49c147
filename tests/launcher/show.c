/* SPDX-License-Identifier: MIT */
/*
 * show.c - what a program run by the launcher receives: its arguments, one
 * per line in brackets, the environment libodebug reads, and whether
 * libodebug is loaded (this program does not link it) and enabled.
 * SHOW_EXIT=N exits with status N; SHOW_SIGNAL=N raises signal N.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

static void show_env(const char *name)
{
	const char *v = getenv(name);

	printf("%s=%s\n", name, v ? v : "(unset)");
}

int main(int argc, char **argv)
{
	bool (*enabled)(void);
	const char *s;
	int i;

	printf("argc=%d\n", argc);
	for (i = 1; i < argc; i++)
		printf("[%s]\n", argv[i]);
	show_env("ODEBUG");
	show_env("ODEBUG_OPTIONS");
	show_env("LD_PRELOAD");
	show_env("LD_AUDIT");
	*(void **)&enabled = dlsym(RTLD_DEFAULT, "debug_objects_enabled");
	printf("libodebug: %s\n", !enabled ? "not loaded" :
	       enabled() ? "enabled" : "disabled");
	fflush(stdout);
	if ((s = getenv("SHOW_SIGNAL")) != NULL)
		raise(atoi(s));
	s = getenv("SHOW_EXIT");
	return s ? atoi(s) : 0;
}
