/* SPDX-License-Identifier: MIT */
/*
 * A library whose constructor takes a lock before libodebug's constructor
 * has run (under LD_PRELOAD, the program's dependencies are initialised
 * first); the program releases it afterwards.
 */
#include <pthread.h>

pthread_mutex_t early_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_spinlock_t early_spin;

__attribute__((constructor)) static void take_early(void)
{
	pthread_spin_init(&early_spin, 0);
	pthread_spin_lock(&early_spin);
	pthread_mutex_lock(&early_lock);
}
