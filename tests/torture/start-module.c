/* SPDX-License-Identifier: MIT */
/*
 * A module whose constructor, under the loader's lock, tells the host it
 * is running, waits a little, then locks a mutex and annotates an object
 * (torture-start dlopen): the host's first API call runs meanwhile.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <time.h>

#include "odebug.h"

static const struct debug_obj_descr module_descr = { .name = "start_module" };
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long object;

__attribute__((constructor)) static void make(void)
{
	volatile int *running = dlsym(RTLD_DEFAULT, "torture_start_in_constructor");
	struct timespec pause = { 0, 20 * 1000 * 1000 };

	if (running)
		*running = 1;
	nanosleep(&pause, NULL);
	pthread_mutex_lock(&lock);
	debug_object_init(&object, &module_descr);
	pthread_mutex_unlock(&lock);
}
