/* SPDX-License-Identifier: MIT */
/*
 * A test that passes without libodebug: it frees a block whose mutex is
 * still locked.  Under odebug, the free() is reported (no annotation
 * needed: pthread mutexes are checked built in), and with exitcode=1 the
 * test fails.
 */
#include <pthread.h>
#include <stdlib.h>

struct conn {
	pthread_mutex_t lock;
	int fd;
};

static void conn_drop_locked(struct conn *c)
{
	free(c);	/* still locked */
}

int main(void)
{
	struct conn *c = malloc(sizeof(*c));

	if (!c)
		return 1;
	pthread_mutex_init(&c->lock, NULL);
	pthread_mutex_lock(&c->lock);
	conn_drop_locked(c);
	return 0;
}
