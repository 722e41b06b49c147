/* SPDX-License-Identifier: MIT */
/* A started libuv timer freed without uv_close(). */
#include <stdlib.h>
#include <uv.h>

static void on_tick(uv_timer_t *t)
{
	(void)t;
}

__attribute__((noinline)) static void stop_job(uv_timer_t *t)
{
	free(t);		/* the bug: never stopped, never closed */
}

int main(void)
{
	uv_timer_t *t = malloc(sizeof(*t));

	if (!t || uv_timer_init(uv_default_loop(), t) || uv_timer_start(t, on_tick, 1000, 1000))
		return 2;
	stop_job(t);
	return 0;
}
