/* SPDX-License-Identifier: MIT */
/*
 * rwlock-seal.c - an rwlock's seal (builtin.h, which writes it after a
 * read lock): its key, made at the start and moved on when the seals
 * break, and the seal taken back after a destroy.  The seal is the one
 * word libodebug writes into a glibc object (glibc.h's __pad2); nothing is
 * written unless the start's probe passed and seal_rwlocks=1
 * (odebug_glibc_seal_ok).
 * Without seals every reader's unlock takes the checked path, which keeps
 * the same answers.
 */
#define _GNU_SOURCE
#include <string.h>
#include <sys/auxv.h>

#include "builtin.h"

/*
 * The rwlock seals' key (builtin.h): 0x0deb in the high 16 bits, which no
 * address reaches, so a seal is never 0; the low 48 bits start random (the
 * kernel's AT_RANDOM bytes) and move on when the seals break.
 */
#define SEAL_MARK	((uint64_t)0x0deb << 48)
#define SEAL_LOW	(((uint64_t)1 << 48) - 1)
#define SEAL_STEP	0x9e3779b97f4bull	/* odd: 2^48 keys before one comes back */
ODEBUG_HOT uint64_t odebug_rwlock_seal = SEAL_MARK;

void odebug_rwlock_seals_break(void)
{
	uint64_t old = odebug_load(&odebug_rwlock_seal), new;

	do
		new = SEAL_MARK | ((old + SEAL_STEP) & SEAL_LOW);
	while (!__atomic_compare_exchange_n(&odebug_rwlock_seal, &old, new, false,
					    __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
}

/* After a destroy's step: the rwlock's seal, if it has this one, goes. */
void odebug_rwlock_unseal(void *addr)
{
	odebug_glibc_rwlock_seal_cas(addr, odebug_rwlock_seal_of(addr), __ATOMIC_SEQ_CST);
}

/* From odebug_builtin_init(): the key's low bits from the kernel's random bytes. */
void odebug_rwlock_seals_init(void)
{
	const unsigned char *random = (const void *)getauxval(AT_RANDOM);
	uint64_t r;

	if (random) {
		memcpy(&r, random, sizeof(r));
		odebug_store(&odebug_rwlock_seal, SEAL_MARK | (r & SEAL_LOW));
	}
}
