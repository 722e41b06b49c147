/* SPDX-License-Identifier: MIT */
/*
 * The GLib module (modules/glib/glib-odebug.c), preloaded before GLib:
 * the data pointer of a source still attached, freed with free(),
 * g_free() or the last g_object_unref(), is reported at the free naming
 * the culprit, and the fixup destroys the sources holding it so the loop
 * runs on without calling them; every order GLib's documentation gives is
 * silent.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <glib.h>
#include <glib-object.h>

#include "mod-test.h"

#define NOINLINE __attribute__((noinline))

struct conn {
	char name[40];
	long ticks;
};

static int ncb, notified;

static gboolean on_tick(gpointer data) { (void)data; ncb++; return G_SOURCE_CONTINUE; }
static void count_notify(gpointer data) { (void)data; notified++; }

/* Run the default context for @ms milliseconds. */
static void spin(int ms)
{
	gint64 end = g_get_monotonic_time() + ms * 1000;

	while (g_get_monotonic_time() < end)
		g_main_context_iteration(NULL, FALSE);
}

/* The culprits. */
static NOINLINE void conn_free(struct conn *c) { free(c); }
static NOINLINE void conn_gfree(struct conn *c) { g_free(c); }
static NOINLINE void conn_unref(GObject *o) { g_object_unref(o); }

/* A source on data in this frame, run and removed before the frame returns. */
static NOINLINE void stack_data_round(void)
{
	struct conn c = { .ticks = 0 };
	guint id;

	ncb = 0;
	id = g_timeout_add(1, on_tick, &c);
	spin(5);
	g_source_remove(id);
	assert_true(ncb > 0);
}

/*
 * Data used by source after source keeps its tracker between holds: on
 * this thread's stack (no stack note, and nothing when the frame is
 * reused), in static memory, and in heap memory freed after the last
 * source and allocated again.
 */
static void kept_trackers_are_silent(void **state)
{
	(void)state;
	EXPECT_SILENT({
		static struct conn st;

		for (int i = 0; i < 3; i++)
			stack_data_round();
		for (int i = 0; i < 3; i++) {
			struct conn *h = malloc(sizeof(*h));

			g_source_remove(g_timeout_add(60000, on_tick, &st));
			g_source_remove(g_idle_add(on_tick, h));
			g_source_remove(g_timeout_add(60000, on_tick, h));
			free(h);
		}
	});
}

/* A timeout's data freed while attached: reported; the source is gone, its callback never runs. */
static void timeout_data_freed_is_reported_and_removed(void **state)
{
	struct conn *c = malloc(sizeof(*c));

	(void)state;
	ncb = 0;
	g_timeout_add(1, on_tick, c);
	EXPECT_FREE_REPORT("conn_free", 1, conn_free(c),
			   "object type: glib_source_data hint: on_tick");
	spin(20);
	assert_int_equal(ncb, 0);
}

/* g_idle_add_full with a notify: the fixup destroys the source without the notify (no double free). */
static void idle_data_gfreed_is_reported_without_notify(void **state)
{
	struct conn *c = g_malloc(sizeof(*c));

	(void)state;
	ncb = notified = 0;
	g_idle_add_full(G_PRIORITY_DEFAULT_IDLE, on_tick, c, count_notify);
	EXPECT_FREE_REPORT("conn_gfree", 1, conn_gfree(c), "object type: glib_source_data");
	spin(10);
	assert_int_equal(ncb, 0);
	assert_int_equal(notified, 0);
}

/* Two sources, one data pointer: one report, both destroyed. */
static void shared_data_one_report_both_removed(void **state)
{
	struct conn *c = malloc(sizeof(*c));
	GSource *s = g_timeout_source_new(1);

	(void)state;
	ncb = 0;
	g_source_set_callback(s, on_tick, c, NULL);
	g_source_attach(s, NULL);
	g_idle_add(on_tick, c);
	EXPECT_FREE_REPORT("conn_free", 1, conn_free(c), "object type: glib_source_data");
	spin(20);
	assert_int_equal(ncb, 0);
	assert_true(g_source_is_destroyed(s));
	g_source_unref(s);
}

/* A GObject whose last reference goes while a timeout holds it (g_slice through malloc). */
static void gobject_unref_to_zero_is_reported(void **state)
{
	GObject *o = g_object_new(G_TYPE_OBJECT, NULL);

	(void)state;
	if (!g_getenv("G_SLICE") || !strstr(g_getenv("G_SLICE"), "always-malloc"))
		skip();
	ncb = 0;
	g_timeout_add(1, on_tick, o);
	EXPECT_FREE_REPORT("conn_unref", 1, conn_unref(o), "object type: glib_source_data");
	spin(20);
	assert_int_equal(ncb, 0);
}

static gboolean once(gpointer data) { (void)data; ncb++; return G_SOURCE_REMOVE; }

static gboolean once_free(gpointer data)
{
	ncb++;
	free(data);
	return G_SOURCE_REMOVE;
}

static gboolean twice_then_free(gpointer data)
{
	struct conn *c = data;

	if (++c->ticks < 2)
		return G_SOURCE_CONTINUE;
	ncb++;
	g_free(c);
	return G_SOURCE_REMOVE;
}

/* g_source_remove or g_source_destroy, then the free; one-shots that returned G_SOURCE_REMOVE. */
static void removed_or_finished_then_freed_is_silent(void **state)
{
	(void)state;
	EXPECT_SILENT({
		struct conn *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b)), *d = malloc(sizeof(*d));
		struct conn *e = malloc(sizeof(*e)), *f = g_new0(struct conn, 1);
		GSource *s = g_timeout_source_new(1000);
		guint id;

		ncb = 0;
		id = g_timeout_add(1000, on_tick, a);
		g_source_remove(id);
		free(a);
		g_source_set_callback(s, on_tick, b, NULL);
		g_source_attach(s, NULL);
		g_source_destroy(s);
		free(b);
		g_source_set_callback(s, on_tick, d, NULL);	/* on a destroyed source: never held */
		g_source_unref(s);
		free(d);
		g_idle_add(once, e);
		g_timeout_add(1, once_free, malloc(sizeof(struct conn)));
		g_timeout_add(1, twice_then_free, f);
		spin(30);
		free(e);
		assert_int_equal(ncb, 3);
	});
}

/* The notify frees the data; the callback replaced; g_source_remove_by_user_data. */
static void notify_replace_and_by_user_data_are_silent(void **state)
{
	(void)state;
	EXPECT_SILENT({
		struct conn *a = g_new0(struct conn, 1), *b = malloc(sizeof(*b)), *c = malloc(sizeof(*c));
		GSource *s = g_timeout_source_new(1000);

		g_idle_add_full(G_PRIORITY_DEFAULT_IDLE, once, a, g_free);
		g_source_set_callback(s, on_tick, b, NULL);
		g_source_attach(s, NULL);
		g_source_set_callback(s, on_tick, c, NULL);	/* b is let go */
		free(b);
		assert_true(g_source_remove_by_user_data(c));
		free(c);
		spin(10);
		g_source_unref(s);
	});
}

/* Not pointers: NULL, GINT_TO_POINTER, a string literal; nothing held, nothing reported. */
static void non_pointers_are_not_held(void **state)
{
	(void)state;
	EXPECT_SILENT({
		guint a = g_timeout_add(1000, on_tick, NULL);
		guint b = g_timeout_add(1000, on_tick, GINT_TO_POINTER(42));
		guint c = g_idle_add(on_tick, (gpointer)("x" + 1));

		g_source_remove(a);
		g_source_remove(b);
		g_source_remove(c);
	});
}

static gpointer adder(gpointer ctx)
{
	for (int i = 0; i < 200; i++) {
		GSource *s = g_idle_source_new();

		g_source_set_callback(s, once_free, malloc(sizeof(struct conn)), NULL);
		g_source_attach(s, ctx);
		g_source_unref(s);
		if (i % 10 == 0)
			g_usleep(100);
	}
	return NULL;
}

/* Threads adding sources to a context another thread runs (GLib's own locking). */
static void threads_are_silent(void **state)
{
	(void)state;
	EXPECT_SILENT({
		GMainContext *ctx = g_main_context_new();
		GThread *t[3];

		ncb = 0;
		for (int i = 0; i < 3; i++)
			t[i] = g_thread_new("adder", adder, ctx);
		for (int i = 0; i < 3; i++)
			g_thread_join(t[i]);
		while (g_main_context_iteration(ctx, FALSE))
			;
		assert_int_equal(ncb, 600);
		g_main_context_unref(ctx);
	});
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(timeout_data_freed_is_reported_and_removed),
		cmocka_unit_test(idle_data_gfreed_is_reported_without_notify),
		cmocka_unit_test(shared_data_one_report_both_removed),
		cmocka_unit_test(gobject_unref_to_zero_is_reported),
		cmocka_unit_test(removed_or_finished_then_freed_is_silent),
		cmocka_unit_test(notify_replace_and_by_user_data_are_silent),
		cmocka_unit_test(non_pointers_are_not_held),
		cmocka_unit_test(kept_trackers_are_silent),
		cmocka_unit_test(threads_are_silent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
