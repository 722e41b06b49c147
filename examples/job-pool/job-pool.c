/* SPDX-License-Identifier: MIT */
/*
 * A worker pool whose finishing worker frees a job while the progress
 * reporter still holds the job's mutex.  Nothing in it is annotated: the
 * mutex is a plain pthread mutex, checked by libodebug's built-in types.
 *
 * Without libodebug the bug surfaces far away: the next job lands in the
 * freed memory, the reporter's late unlock releases the new job's mutex
 * under its worker, and that worker aborts, blaming job 2.  With
 * ODEBUG=1 the free itself is reported, naming job_free() in the worker
 * and the reporter thread that holds the mutex.
 *
 * The semaphores only make the interleaving deterministic.
 */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct job {
	pthread_mutex_t lock;	/* guards everything below */
	int id;
	int owner;		/* who is working on it */
	char result[40];
};

/* Exported, so that reports name them. */
struct job *job_new(int id);
void job_free(struct job *j);
void *worker(void *arg);

static sem_t reporter_holds, job1_freed, job2_held, reporter_done;

struct job *job_new(int id)
{
	struct job *j = malloc(sizeof(*j));

	pthread_mutex_init(&j->lock, NULL);
	j->id = id;
	j->owner = 0;
	strcpy(j->result, "pending");
	return j;
}

/* The bug: the job is freed without making sure nobody else holds it. */
void job_free(struct job *j)
{
	free(j);
}

/* Prints a job's progress under its lock (slowly, as reporters do). */
static void *reporter(void *arg)
{
	struct job *j = arg;

	pthread_mutex_lock(&j->lock);
	printf("reporter: job %d is %s\n", j->id, j->result);
	sem_post(&reporter_holds);
	sem_wait(&job2_held);		/* ... still formatting ... */
	pthread_mutex_unlock(&j->lock);	/* job 1's lock: freed memory */
	sem_post(&reporter_done);
	return NULL;
}

/* Finishes job 1 and frees it while the reporter holds its lock. */
void *worker(void *arg)
{
	struct job *j = arg;

	sem_wait(&reporter_holds);
	strcpy(j->result, "done");	/* (racing the reporter: part of the bug) */
	job_free(j);
	sem_post(&job1_freed);
	return NULL;
}

/* Works on job 2 under its lock, and checks that nobody else touched it. */
static void *worker2(void *arg)
{
	struct job *j = arg;

	pthread_mutex_lock(&j->lock);
	j->owner = 2;
	sem_post(&job2_held);
	sem_wait(&reporter_done);
	/* Still ours: trylock must fail. */
	if (pthread_mutex_trylock(&j->lock) == 0) {
		fprintf(stderr, "job pool: job %d's lock was released under its worker\n", j->id);
		abort();
	}
	pthread_mutex_unlock(&j->lock);
	return NULL;
}

int main(void)
{
	pthread_t r, w, w2;
	struct job *j1, *j2;

	sem_init(&reporter_holds, 0, 0);
	sem_init(&job1_freed, 0, 0);
	sem_init(&job2_held, 0, 0);
	sem_init(&reporter_done, 0, 0);
	j1 = job_new(1);
	pthread_create(&r, NULL, reporter, j1);
	pthread_create(&w, NULL, worker, j1);
	sem_wait(&job1_freed);
	pthread_join(w, NULL);		/* its exit hands job 1's memory back */
	j2 = job_new(2);		/* ... to the next job of the same size */
	pthread_create(&w2, NULL, worker2, j2);
	pthread_join(r, NULL);
	pthread_join(w2, NULL);
	printf("job %d: %s\n", j2->id, j2->result);
	pthread_mutex_destroy(&j2->lock);
	job_free(j2);
	puts("done");
	return 0;
}
