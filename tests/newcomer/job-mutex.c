/* SPDX-License-Identifier: MIT */
/* A job freed while a live worker holds its mutex. */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

struct job {
	pthread_mutex_t lock;
	int done;
};

static int go[2], stop[2];

static void *worker(void *arg)
{
	struct job *j = arg;
	char c = 0;

	pthread_mutex_lock(&j->lock);
	if (write(go[1], &c, 1) != 1 || read(stop[0], &c, 1) != 1)
		return NULL;	/* holds the lock until told to stop */
	return NULL;
}

__attribute__((noinline)) static void job_cancel(struct job *j)
{
	free(j);		/* the bug: the worker still holds j->lock */
}

int main(void)
{
	struct job *j = calloc(1, sizeof(*j));
	pthread_t t;
	char c;

	if (!j || pipe(go) || pipe(stop))
		return 2;
	pthread_mutex_init(&j->lock, NULL);
	if (pthread_create(&t, NULL, worker, j) || read(go[0], &c, 1) != 1)
		return 2;
	job_cancel(j);
	if (write(stop[1], &c, 1) != 1)
		return 2;
	pthread_join(t, NULL);
	return 0;
}
