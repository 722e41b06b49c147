/* SPDX-License-Identifier: MIT */
/* The data of a GLib timeout freed while the source still holds it. */
#include <glib.h>

struct job {
	int id;
	char name[64];
};

static gboolean on_timeout(gpointer data)
{
	((struct job *)data)->id++;
	return G_SOURCE_CONTINUE;
}

__attribute__((noinline)) static void job_forget(struct job *j)
{
	g_free(j);		/* the bug: the timeout still holds it */
}

int main(void)
{
	struct job *j = g_new0(struct job, 1);
	guint id = g_timeout_add(1000, on_timeout, j);

	job_forget(j);
	g_source_remove(id);
	return 0;
}
