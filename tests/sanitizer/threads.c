/* SPDX-License-Identifier: MIT */
/*
 * A sanitizer build with threads: 4 threads take one mutex 1,000 times
 * each, then print the count (4000).  With "bug", main then frees a block
 * holding a locked mutex, which libodebug reports at the free().
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int counter;

struct conn {
	pthread_mutex_t lock;
	int fd;
};

static void *worker(void *arg)
{
	int i;

	for (i = 0; i < 1000; i++) {
		pthread_mutex_lock(&lock);
		counter++;
		pthread_mutex_unlock(&lock);
	}
	return arg;
}

__attribute__((noinline)) static void conn_drop_locked(struct conn *c)
{
	free(c);	/* still locked */
}

int main(int argc, char **argv)
{
	pthread_t t[4];
	int i;

	for (i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	printf("%d\n", counter);
	if (argc > 1 && !strcmp(argv[1], "bug")) {
		struct conn *c = malloc(sizeof(*c));

		pthread_mutex_init(&c->lock, NULL);
		pthread_mutex_lock(&c->lock);
		conn_drop_locked(c);
	}
	return 0;
}
