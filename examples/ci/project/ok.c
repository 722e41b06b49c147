/* SPDX-License-Identifier: MIT */
/* A correct test: a mutex in a heap block, taken, released, destroyed, freed. */
#include <pthread.h>
#include <stdlib.h>

struct conn {
	pthread_mutex_t lock;
	int fd;
};

int main(void)
{
	struct conn *c = malloc(sizeof(*c));

	if (!c)
		return 1;
	pthread_mutex_init(&c->lock, NULL);
	pthread_mutex_lock(&c->lock);
	c->fd = 3;
	pthread_mutex_unlock(&c->lock);
	pthread_mutex_destroy(&c->lock);
	free(c);
	return 0;
}
