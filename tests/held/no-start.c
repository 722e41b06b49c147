/* SPDX-License-Identifier: MIT */
/*
 * A program that closes files, registers descriptor numbers with epoll
 * and makes timers without a pointer holds nothing, so libodebug must not
 * start (its table's 32 GiB reservation stays unmapped: ARCHITECTURE.md,
 * "Start-up").  Exits 0 when nothing was mapped; run with ODEBUG=1.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

static int big_mappings(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long lo, hi;
	char line[512];
	int n = 0;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && hi - lo == (32ul << 30))
			n++;
	if (f)
		fclose(f);
	return n;
}

int main(void)
{
	int ep = epoll_create1(0), fd = eventfd(0, 0);
	struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT, .data.fd = fd }, out[2];
	struct itimerspec v = { .it_value = { 10, 0 } };
	timer_t t;

	epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
	eventfd_write(fd, 1);
	epoll_wait(ep, out, 2, 0);
	epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
	timer_create(CLOCK_MONOTONIC, NULL, &t);
	timer_settime(t, 0, &v, NULL);
	timer_delete(t);
	close(fd);
	close(ep);
	close(dup(1));
	if (big_mappings()) {
		printf("FAIL - libodebug started with nothing held\n");
		return 1;
	}
	printf("ok - nothing held, nothing started\n");
	return 0;
}
