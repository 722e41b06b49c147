/* SPDX-License-Identifier: MIT */
/*
 * module.c - a plugin whose code a key, a signal handler, a timer and a
 * thread can still need after its dlclose (test-module.c), and that can
 * be told to release all four in its own destructor instead.
 */
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int mod_key(int set);
int mod_key_delete(void);
unsigned int mod_key_number(void);
int mod_handler(void);
int mod_handled(void);
int mod_timer(timer_t *t, void *ptr);
int mod_timer_in(timer_t *t, long ms);
int mod_thread(pthread_t *t);
void mod_thread_stop(pthread_t t);
int mod_thread_tid(void);
void mod_release_at_unload(void);

static pthread_key_t key;
static volatile int destructed, handled, fired;
static int pipefd[2], started[2];
/* What mod_* set up, for the destructor (mod_release_at_unload). */
static struct sigaction old_usr1;
static timer_t timer;
static pthread_t thread;
static int have_key, have_handler, have_timer, have_thread, release_at_unload;
static volatile int thread_tid;

static void mod_destructor(void *v)
{
	(void)v;
	destructed++;
}

int mod_key(int set)
{
	if (pthread_key_create(&key, mod_destructor))
		return -1;
	have_key = 1;
	return set ? pthread_setspecific(key, &key) : 0;
}

unsigned int mod_key_number(void)
{
	return (unsigned int)key;
}

int mod_key_delete(void)
{
	have_key = 0;
	return pthread_key_delete(key);
}

static void mod_on_usr1(int sig)
{
	(void)sig;
	handled++;
}

int mod_handler(void)
{
	struct sigaction sa = { .sa_handler = mod_on_usr1 };

	have_handler = 1;
	return sigaction(SIGUSR1, &sa, &old_usr1);
}

int mod_handled(void)
{
	return handled;
}

static void mod_on_timer(union sigval v)
{
	(void)v;
	fired++;
}

int mod_timer(timer_t *t, void *ptr)
{
	struct sigevent se = { .sigev_notify = SIGEV_THREAD,
			       .sigev_notify_function = mod_on_timer,
			       .sigev_value.sival_ptr = ptr };
	struct itimerspec v = { .it_value = { 100, 0 } };

	if (timer_create(CLOCK_MONOTONIC, &se, t))
		return -1;
	timer = *t;
	have_timer = 1;
	return timer_settime(*t, 0, &v, NULL);
}

/* A one-shot SIGEV_THREAD timer in @ms, with sigev_value 0 (as most code leaves it). */
int mod_timer_in(timer_t *t, long ms)
{
	struct sigevent se = { .sigev_notify = SIGEV_THREAD,
			       .sigev_notify_function = mod_on_timer };
	struct itimerspec v = { .it_value = { ms / 1000, ms % 1000 * 1000000 } };

	if (timer_create(CLOCK_MONOTONIC, &se, t))
		return -1;
	timer = *t;
	have_timer = 1;
	return timer_settime(*t, 0, &v, NULL);
}

static void *mod_routine(void *arg)
{
	char c;

	(void)arg;
	thread_tid = (int)syscall(SYS_gettid);
	if (write(started[1], "s", 1) != 1 || read(pipefd[0], &c, 1) != 1)
		return NULL;
	return NULL;
}

/* A thread in mod_routine until mod_thread_stop: started when this returns. */
int mod_thread(pthread_t *t)
{
	char c;

	if (pipe(pipefd) || pipe(started) || pthread_create(t, NULL, mod_routine, NULL))
		return -1;
	thread = *t;
	have_thread = 1;
	return read(started[0], &c, 1) == 1 ? 0 : -1;
}

/* The thread's id, to see it asleep in its read(). */
int mod_thread_tid(void)
{
	return thread_tid;
}

void mod_thread_stop(pthread_t t)
{
	if (write(pipefd[1], "g", 1) != 1)
		return;
	pthread_join(t, NULL);
	have_thread = 0;
	close(pipefd[0]);
	close(pipefd[1]);
	close(started[0]);
	close(started[1]);
}

/* From now on the destructor releases what is still set up. */
void mod_release_at_unload(void)
{
	release_at_unload = 1;
}

/* The handler restored, the key deleted, the thread joined, the timer deleted. */
__attribute__((destructor)) static void mod_unload(void)
{
	if (!release_at_unload)
		return;
	if (have_handler)
		sigaction(SIGUSR1, &old_usr1, NULL);
	if (have_key)
		pthread_key_delete(key);
	if (have_thread)
		mod_thread_stop(thread);
	if (have_timer)
		timer_delete(timer);
}
