/* SPDX-License-Identifier: MIT */
/* A session freed while its armed POSIX timer still points at it. */
#include <signal.h>
#include <stdlib.h>
#include <time.h>

struct session {
	timer_t idle;
	char user[64];
};

static void on_idle(union sigval v)
{
	((struct session *)v.sival_ptr)->user[0] = 0;
}

__attribute__((noinline)) static void session_end(struct session *s)
{
	free(s);		/* the bug: the timer is still armed */
}

int main(void)
{
	struct session *s = calloc(1, sizeof(*s));
	struct sigevent sev = { .sigev_notify = SIGEV_THREAD, .sigev_notify_function = on_idle };
	struct itimerspec its = { .it_value = { 30, 0 } };

	if (!s)
		return 2;
	sev.sigev_value.sival_ptr = s;
	if (timer_create(CLOCK_MONOTONIC, &sev, &s->idle) || timer_settime(s->idle, 0, &its, NULL))
		return 2;
	session_end(s);
	return 0;
}
