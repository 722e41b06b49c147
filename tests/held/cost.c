/* SPDX-License-Identifier: MIT */
/*
 * cost.c - what held memory adds: ns per epoll_ctl (ADD + DEL of a
 * data.ptr, and of a data.fd), per timer_settime (arm + disarm of a
 * timer holding a pointer), per close of a descriptor that holds nothing,
 * per setvbuf (a buffer of the program's, then unbuffered), per
 * sigaltstack (installed, then SS_DISABLE), and per malloc + free with a
 * hold elsewhere.  Run it with ODEBUG unset,
 * ODEBUG=1, and ODEBUG=1 ODEBUG_OPTIONS=check_held=0; the medians of 5
 * runs of each loop are printed.  "held-cost OP N" runs one loop N times
 * and prints nothing, for instruction counts (cost-instr.sh).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#define N 200000

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static const char *only;
static long n_only;

#define MEDIAN(name, per, body) do {						\
	double r_[5];								\
	if (only) {								\
		if (!strncmp(name, only, strlen(only)))				\
			for (long i = 0; i < n_only; i++) { body; }		\
		break;								\
	}									\
	for (int k_ = 0; k_ < 5; k_++) {					\
		double t0_ = now();						\
		for (int i = 0; i < N; i++) { body; }				\
		r_[k_] = (now() - t0_) / N / (per);				\
	}									\
	qsort(r_, 5, sizeof(double), cmp);					\
	printf("%-34s %7.1f ns\n", name, r_[2]);				\
} while (0)

int main(int argc, char **argv)
{
	int ep = epoll_create1(0), fd = eventfd(0, 0), other = eventfd(0, 0);
	static long conn[8] __attribute__((aligned(16)));
	void *p = malloc(64), *held = malloc(64);
	struct epoll_event ptr = { .events = EPOLLIN, .data.ptr = p };
	struct epoll_event fdv = { .events = EPOLLIN, .data.fd = fd };
	struct epoll_event hev = { .events = EPOLLIN, .data.ptr = held };
	struct sigevent se = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGRTMIN,
			       .sigev_value.sival_ptr = conn };
	struct itimerspec on = { .it_value = { 100, 0 } }, off = { { 0, 0 }, { 0, 0 } };
	static char sbuf[4096] __attribute__((aligned(16))), alt[65536] __attribute__((aligned(16)));
	stack_t alt_on = { .ss_sp = alt, .ss_size = sizeof(alt) }, alt_off = { .ss_flags = SS_DISABLE };
	FILE *null = fopen("/dev/null", "w");
	timer_t t;

	if (argc == 3) {
		only = argv[1];
		n_only = atol(argv[2]);
	}
	signal(SIGRTMIN, SIG_IGN);
	timer_create(CLOCK_MONOTONIC, &se, &t);
	MEDIAN("free(malloc(64)), nothing tracked", 1, {
		void *volatile q = malloc(64);

		free(q);
	});
	epoll_ctl(ep, EPOLL_CTL_ADD, other, &hev);	/* a hold elsewhere, all along */
	MEDIAN("epoll_ptr ADD+DEL (per call)", 2, {
		epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ptr);
		epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
	});
	MEDIAN("epoll_fd ADD+DEL (per call)", 2, {
		epoll_ctl(ep, EPOLL_CTL_ADD, fd, &fdv);
		epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
	});
	MEDIAN("timer_settime arm+disarm (per call)", 2, {
		timer_settime(t, 0, &on, NULL);
		timer_settime(t, 0, &off, NULL);
	});
	MEDIAN("close(dup()) holding nothing", 1, {
		close(dup(fd));
	});
	MEDIAN("free(malloc(64)), a hold elsewhere", 1, {
		void *volatile q = malloc(64);

		free(q);
	});
	MEDIAN("setvbuf buffer+_IONBF (per call)", 2, {
		setvbuf(null, sbuf, _IOFBF, sizeof(sbuf));
		setvbuf(null, NULL, _IONBF, 0);
	});
	MEDIAN("sigaltstack on+SS_DISABLE (per call)", 2, {
		sigaltstack(&alt_on, NULL);
		sigaltstack(&alt_off, NULL);
	});
	fclose(null);
	epoll_ctl(ep, EPOLL_CTL_DEL, other, NULL);
	free(held);
	free(p);
	return 0;
}
