/* SPDX-License-Identifier: MIT */
/*
 * bench-small-rss N: a small program's use of libodebug.  N mutexes in
 * malloc'd blocks of three sizes, each initialised, locked and unlocked
 * once, never freed.  Run plain and preloaded with ODEBUG=1 under
 * /usr/bin/time -f %M (maximum RSS) or perf stat -e page-faults.
 */
#include <pthread.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int i, n = argc > 1 ? atoi(argv[1]) : 20;

	for (i = 0; i < n; i++) {
		pthread_mutex_t *m = malloc(sizeof(*m) + 4096 * (size_t)(i % 3));

		if (!m)
			return 1;
		pthread_mutex_init(m, NULL);
		pthread_mutex_lock(m);
		pthread_mutex_unlock(m);
	}
	return 0;
}
