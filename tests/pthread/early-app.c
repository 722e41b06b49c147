/* SPDX-License-Identifier: MIT */
/*
 * Locks taken before libodebug initialised (early-lock.c) and released
 * after: silent; then one misuse, which must be the only report.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

extern pthread_mutex_t early_lock;
extern pthread_spinlock_t early_spin;

int main(void)
{
	pthread_mutex_t *m = calloc(1, sizeof(*m));

	pthread_mutex_unlock(&early_lock);
	pthread_spin_unlock(&early_spin);
	pthread_mutex_lock(&early_lock);
	pthread_mutex_unlock(&early_lock);
	pthread_spin_lock(&early_spin);
	pthread_spin_unlock(&early_spin);
	pthread_mutex_lock(m);
	free(m);	/* the one report */
	puts("ok");
	return 0;
}
