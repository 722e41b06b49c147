/* SPDX-License-Identifier: MIT */
/*
 * An rwlock's __pad2 after read and write locks under ODEBUG=1: with
 * seal_rwlocks=0 ("none") nothing of ours is there; by default ("seal")
 * the read lock sealed it, so the first mode's answer means something.
 * usage: no-seal none|seal
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	pthread_rwlock_t *rw = calloc(1, sizeof(*rw));
	unsigned long pad2;
	int i;

	if (argc != 2 || !rw)
		return 2;
	pthread_rwlock_init(rw, NULL);
	for (i = 0; i < 3; i++) {
		pthread_rwlock_rdlock(rw);
		pthread_rwlock_unlock(rw);
		pthread_rwlock_wrlock(rw);
		pthread_rwlock_unlock(rw);
	}
	pad2 = rw->__data.__pad2;
	pthread_rwlock_destroy(rw);
	free(rw);
	if (!strcmp(argv[1], "none") ? pad2 != 0 : pad2 == 0) {
		printf("__pad2 is %#lx with %s\n", pad2, argv[1]);
		return 1;
	}
	return 0;
}
