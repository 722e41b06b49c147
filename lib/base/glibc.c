/* SPDX-License-Identifier: MIT */
/*
 * glibc.c - the gate of the one write into a glibc object (glibc.h): the
 * rwlock seal goes into __pad2 only when this glibc is one whose rwlock
 * has that word unused (2.25 on, the rwlock glibc.h describes) and a
 * probe at the start sees glibc leave it alone: 0 after an init, and a
 * value written there kept through a read lock, a write lock and their
 * unlocks.  The probe calls glibc's own functions (the next definitions),
 * on an rwlock of its own, never the program's.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <gnu/libc-version.h>
#include <stdlib.h>

#include "base.h"

ODEBUG_HOT bool odebug_glibc_seal_ok;

const char *odebug_glibc_version(void)
{
	return gnu_get_libc_version();
}

/* "2.N..." with N >= 25: the rwlock of nptl/pthread_rwlock_common.c. */
static bool version_has_pad2(const char *v)
{
	char *end;
	long minor;

	if (!v || v[0] != '2' || v[1] != '.')
		return false;
	minor = strtol(v + 2, &end, 10);
	return end != v + 2 && minor >= 25;
}

typedef int rwlock_fn(pthread_rwlock_t *);

/* The value written and read back: any nonzero word. */
#define PROBE_WORD	0x0deb0000c0ffee01ull

bool odebug_glibc_seal_probe(void)
{
	int (*init)(pthread_rwlock_t *, const pthread_rwlockattr_t *) =
		(int (*)(pthread_rwlock_t *, const pthread_rwlockattr_t *))
		dlsym(RTLD_NEXT, "pthread_rwlock_init");
	rwlock_fn *rd = (rwlock_fn *)dlsym(RTLD_NEXT, "pthread_rwlock_rdlock");
	rwlock_fn *wr = (rwlock_fn *)dlsym(RTLD_NEXT, "pthread_rwlock_wrlock");
	rwlock_fn *un = (rwlock_fn *)dlsym(RTLD_NEXT, "pthread_rwlock_unlock");
	pthread_rwlock_t rw;

	if (!version_has_pad2(odebug_glibc_version()) || !init || !rd || !wr || !un)
		return false;
	memset(&rw, 0xa5, sizeof(rw));
	if (init(&rw, NULL) || odebug_glibc_rwlock_seal_word(&rw))
		return false;
	odebug_glibc_rwlock_seal_store(&rw, PROBE_WORD);
	if (rd(&rw) || un(&rw) || wr(&rw) || un(&rw))
		return false;
	return odebug_glibc_rwlock_seal_word(&rw) == PROBE_WORD;
}
