/* SPDX-License-Identifier: MIT */
/*
 * A GLib timeout's data freed after the timeout fired twice, for origins=1:
 * the data's origins name the program's lines (the g_timeout_add() call,
 * the loop's call), never GLib's dispatch.
 */
#include <glib.h>

static int fired;

static gboolean on_timeout(gpointer data)
{
	(void)data;
	fired++;
	return G_SOURCE_CONTINUE;
}

__attribute__((noinline)) static void drop(gpointer data)
{
	g_free(data);		/* the bug: the timeout still holds it */
}

int main(void)
{
	gpointer data = g_malloc0(64);

	g_timeout_add(5, on_timeout, data);	/* initialised and activated */
	while (fired < 2)
		g_main_context_iteration(NULL, TRUE);	/* activated again */
	drop(data);
	return 0;
}
