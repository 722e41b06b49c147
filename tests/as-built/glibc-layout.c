/* SPDX-License-Identifier: MIT */
/*
 * glibc's private fields as lib/base/glibc.h assumes them, against the
 * installed headers: each field's offset and size, and glibc.h's copies of
 * the barrier's and the semaphore's structures within the public types.
 * A glibc that lays them out otherwise fails here, not in a report.
 */
#include <pthread.h>
#include <semaphore.h>
#include <stddef.h>
#include <stdio.h>

#include "base.h"

static int bad;

static void check(const char *type, const char *field, size_t off, size_t size,
		  size_t want_off, size_t want_size)
{
	if (off == want_off && size == want_size)
		return;
	printf("%s.__data.%s: offset %zu size %zu, glibc.h assumes %zu and %zu\n",
	       type, field, off, size, want_off, want_size);
	bad = 1;
}

#define CHECK(T, f, o, n)							\
	check(#T, #f, offsetof(T, __data.f), sizeof(((T *)0)->__data.f), o, n);

int main(void)
{
	ODEBUG_GLIBC_FIELDS(CHECK)
	if (sizeof(struct odebug_glibc_barrier) > sizeof(pthread_barrier_t) ||
	    sizeof(struct odebug_glibc_sem) > sizeof(sem_t)) {
		printf("glibc.h's barrier or semaphore is larger than glibc's type\n");
		bad = 1;
	}
	return bad;
}
