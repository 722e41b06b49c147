/* SPDX-License-Identifier: MIT */
/*
 * slice.c - a g_timeout_add() source's data, allocated with g_slice, freed
 * with g_slice_free1() while the source is attached (the bug), in
 * slice_drop(); then the loop runs 50 ms.  Not linked with libodebug: run
 * it under the odebug launcher (check-slice.sh).
 */
#include <glib.h>
#include <stdio.h>

static int fired;

static gboolean on_timeout(gpointer data)
{
	(void)data;
	fired++;
	return G_SOURCE_CONTINUE;
}

static gboolean on_quit(gpointer loop)
{
	g_main_loop_quit(loop);
	return G_SOURCE_REMOVE;
}

/* The culprit: the source still holds @data. */
__attribute__((noinline)) static void slice_drop(void *data)
{
	g_slice_free1(64, data);
}

int main(void)
{
	GMainLoop *loop = g_main_loop_new(NULL, FALSE);
	void *data = g_slice_alloc0(64);

	g_timeout_add(1, on_timeout, data);
	slice_drop(data);
	g_timeout_add(50, on_quit, loop);
	g_main_loop_run(loop);
	g_main_loop_unref(loop);
	printf("timeouts after the free: %d\n", fired);
	return 0;
}
