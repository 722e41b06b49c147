/* SPDX-License-Identifier: MIT */
/*
 * count-locks.so: how many synchronisation calls a program makes (the
 * figures quoted for tests/preload/check-programs.sh in BENCHMARKS.md).
 * LD_PRELOAD=./count-locks.so PROGRAM; appends one line per process at
 * exit to $COUNT_LOCKS_OUT (default /tmp/count-locks.out): coreutils and xz
 * close standard error before destructors run.
 * Build: cc -O2 -shared -fPIC -o count-locks.so count-locks.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdlib.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <unistd.h>

static unsigned long n_lock, n_unlock, n_cond, n_rw, n_sem;

#define FWD(ret, name, counter, params, args)				\
	ret name params							\
	{								\
		static ret (*next) params;				\
		if (!next)						\
			*(void **)&next = dlsym(RTLD_NEXT, #name);	\
		__atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED);	\
		return next args;					\
	}

FWD(int, pthread_mutex_lock, n_lock, (pthread_mutex_t *m), (m))
FWD(int, pthread_mutex_trylock, n_lock, (pthread_mutex_t *m), (m))
FWD(int, pthread_mutex_unlock, n_unlock, (pthread_mutex_t *m), (m))
FWD(int, pthread_cond_wait, n_cond, (pthread_cond_t *c, pthread_mutex_t *m), (c, m))
FWD(int, pthread_cond_timedwait, n_cond, (pthread_cond_t *c, pthread_mutex_t *m,
	const struct timespec *t), (c, m, t))
FWD(int, pthread_cond_signal, n_cond, (pthread_cond_t *c), (c))
FWD(int, pthread_cond_broadcast, n_cond, (pthread_cond_t *c), (c))
FWD(int, pthread_rwlock_rdlock, n_rw, (pthread_rwlock_t *l), (l))
FWD(int, pthread_rwlock_wrlock, n_rw, (pthread_rwlock_t *l), (l))
FWD(int, sem_wait, n_sem, (sem_t *s), (s))
FWD(int, sem_post, n_sem, (sem_t *s), (s))

__attribute__((destructor)) static void report(void)
{
	char line[200];
	int n = snprintf(line, sizeof(line),
			 "count-locks: pid %d mutex lock %lu unlock %lu cond %lu rwlock %lu sem %lu\n",
			 getpid(), n_lock, n_unlock, n_cond, n_rw, n_sem);

	const char *path = getenv("COUNT_LOCKS_OUT");
	int fd = open(path ? path : "/tmp/count-locks.out", O_WRONLY | O_CREAT | O_APPEND, 0644);

	if (n > 0 && fd >= 0)
		write(fd, line, (size_t)n);
	if (fd >= 0)
		close(fd);
}
