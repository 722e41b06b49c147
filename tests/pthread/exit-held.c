/* SPDX-License-Identifier: MIT */
/*
 * Exits holding a heap mutex it locked on the write-free path, and one on
 * its stack: with report_active_at_exit=1 both are "exit active" (the
 * heap one's hold is read from glibc's words at exit, lib/checks/builtin/builtin.c).
 */
#include <pthread.h>
#include <stdlib.h>

int main(void)
{
	pthread_mutex_t *m = calloc(1, sizeof(*m)), s = PTHREAD_MUTEX_INITIALIZER;

	for (int i = 0; i < 100; i++) {
		pthread_mutex_lock(m);
		pthread_mutex_unlock(m);
	}
	pthread_mutex_lock(m);
	pthread_mutex_lock(&s);
	exit(0);
}
