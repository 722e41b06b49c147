/* SPDX-License-Identifier: MIT */
/*
 * The fixup comes before the naming: a session whose 20 ms POSIX timer
 * holds it (sival_ptr) is freed while the timer is armed.  The report is
 * named by a slow symboliser (symbolizer= a script that sleeps before each
 * answer), yet the timer fires at most once between the free() and the
 * fixup that disarms it, because the fixup runs as soon as the state is
 * read and the raw stack captured.  Exit 0 when it fired at most once more
 * and the report says it was fixed up before printing; the count is
 * printed either way.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct session {
	int id;
	char buf[120];
};

static volatile sig_atomic_t fired;

static void tick(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)si, (void)uc;
	fired++;
}

int main(void)
{
	struct sigaction sa = { .sa_sigaction = tick, .sa_flags = SA_SIGINFO | SA_RESTART };
	struct session *s = calloc(1, sizeof(*s));
	struct sigevent ev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGRTMIN };
	struct itimerspec its = { { 0, 20 * 1000 * 1000 }, { 0, 20 * 1000 * 1000 } };
	struct timespec settle = { 0, 300 * 1000 * 1000 };
	sig_atomic_t before, after;
	timer_t t;

	sigemptyset(&sa.sa_mask);
	if (!s || sigaction(SIGRTMIN, &sa, NULL) ||
	    (ev.sigev_value.sival_ptr = s, timer_create(CLOCK_MONOTONIC, &ev, &t)) ||
	    timer_settime(t, 0, &its, NULL)) {
		perror("fixup-first: set-up");
		return 2;
	}
	while (fired < 2)
		pause();
	before = fired;
	free(s);		/* the misuse: the armed timer still holds it */
	after = fired;
	while (nanosleep(&settle, &settle))
		;
	printf("fired %d times between free() and its return, %d after\n",
	       (int)(after - before), (int)(fired - after));
	return after - before <= 1 && fired == after ? 0 : 1;
}
