/* SPDX-License-Identifier: MIT */
/*
 * The GLib module (modules/glib/glib-odebug.c), loaded by libodebug
 * (module_path) or, with the argument "preload", preloaded before GLib:
 * the data pointer of a source still attached, freed with free(),
 * g_free() or the last g_object_unref(), is reported at the free naming
 * the culprit and (loaded) the sources holding it, and the fixup keeps
 * the sources without ever calling the program's function or notify
 * again, so the program's own later g_source_remove() still works; every
 * order GLib's documentation gives is silent, a source destroyed or given
 * another callback during its own dispatch included.  GLib's warnings and
 * criticals are fatal here: the fixup must make GLib say nothing.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <glib.h>
#include <glib-object.h>
#include <gio/gio.h>
#include <glib-unix.h>

#include "odebug-fdsan.h"

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

/* Run it until @want callbacks ran (at most 5 s: a loaded machine), then @ms more. */
static void spin_until(int want, int ms)
{
	for (int i = 0; i < 5000 && ncb < want; i++)
		spin(1);
	spin(ms);
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
	spin_until(1, 0);
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

/*
 * A timeout's data freed while attached: reported; the source stays, its
 * dispatches call nothing of the program's (and GLib does not warn of a
 * missing callback), and the program's own g_source_remove() succeeds.
 */
static void timeout_data_freed_is_reported_and_never_called(void **state)
{
	struct conn *c = malloc(sizeof(*c));
	guint id;

	(void)state;
	ncb = 0;
	id = g_timeout_add(1, on_tick, c);
	EXPECT_FREE_REPORT("conn_free", 1, conn_free(c),
			   "object type: glib_source_data hint: on_tick");
	spin(20);
	assert_int_equal(ncb, 0);
	assert_true(g_source_remove(id));
}

/* The program frees the data, then removes the source at once: the fixup left it to remove. */
static void freed_then_removed_at_once_is_no_critical(void **state)
{
	struct conn *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	guint t, i;

	(void)state;
	ncb = 0;
	t = g_timeout_add_seconds(30, on_tick, a);
	i = g_idle_add(on_tick, b);
	EXPECT_FREE_REPORT("conn_free", 1, conn_free(a), "object type: glib_source_data");
	assert_true(g_source_remove(t));
	EXPECT_FREE_REPORT("conn_free", 1, conn_free(b), "object type: glib_source_data");
	assert_true(g_source_remove(i));
	spin(10);
	assert_int_equal(ncb, 0);
}

/*
 * g_idle_add_full with a notify: never called, nor the notify (no double
 * free); the idle, ready at every iteration, ends at its next dispatch
 * instead of spinning the loop.
 */
static void idle_data_gfreed_is_reported_without_notify(void **state)
{
	struct conn *c = g_malloc(sizeof(*c));
	guint id;

	(void)state;
	ncb = notified = 0;
	id = g_idle_add_full(G_PRIORITY_DEFAULT_IDLE, on_tick, c, count_notify);
	EXPECT_FREE_REPORT("conn_gfree", 1, conn_gfree(c), "object type: glib_source_data");
	while (g_main_context_iteration(NULL, FALSE))
		;
	assert_int_equal(ncb, 0);
	assert_int_equal(notified, 0);
	assert_null(g_main_context_find_source_by_id(NULL, id));
}

/* Two sources, one data pointer: one report, neither calls the program, the timeout kept. */
static void shared_data_one_report_neither_called(void **state)
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
	assert_false(g_source_is_destroyed(s));
	g_source_destroy(s);
	g_source_unref(s);
}

static gboolean on_io(GIOChannel *ch, GIOCondition cond, gpointer data)
{
	(void)ch;
	(void)cond;
	(void)data;
	ncb++;
	return G_SOURCE_CONTINUE;
}

static void on_child(GPid pid, gint status, gpointer data)
{
	(void)pid;
	(void)status;
	(void)data;
	ncb++;
}

/*
 * An IO watch and a child watch: GLib calls their callbacks with other
 * arguments; after the fixup neither calls the program, GLib does not
 * warn, and both end at their dispatch (the readable pipe would keep an
 * IO watch ready; a child watch always ends).
 */
static void io_and_child_watch_data_freed_are_never_called(void **state)
{
	struct conn *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	int fd[2];
	guint io, child;
	GIOChannel *ch;
	pid_t pid;

	(void)state;
	ncb = 0;
	assert_int_equal(pipe(fd), 0);
	ch = g_io_channel_unix_new(fd[0]);
	io = g_io_add_watch(ch, G_IO_IN, on_io, a);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	child = g_child_watch_add(pid, on_child, b);
	EXPECT_FREE_REPORT("conn_free", 1, conn_free(a), "object type: glib_source_data hint: on_io");
	EXPECT_FREE_REPORT("conn_free", 1, conn_free(b),
			   "object type: glib_source_data hint: on_child");
	assert_int_equal(write(fd[1], "x", 1), 1);
	for (int i = 0; i < 2000 && (g_main_context_find_source_by_id(NULL, io) ||
				     g_main_context_find_source_by_id(NULL, child)); i++)
		spin(1);
	assert_null(g_main_context_find_source_by_id(NULL, io));
	assert_null(g_main_context_find_source_by_id(NULL, child));
	assert_int_equal(ncb, 0);
	g_io_channel_unref(ch);
	close(fd[0]);
	close(fd[1]);
}

/* The report's holder line: each source holding the data, by id, name, callback and context. */
static void holder_line_names_the_sources(void **state)
{
	struct conn *c = malloc(sizeof(*c)), *d = malloc(sizeof(*d)), *e = malloc(sizeof(*e));
	GSource *s = g_timeout_source_new(60000);
	GMainContext *ctx = g_main_context_default();
	char line[320];
	guint id[3];

	(void)state;
	g_source_set_name(s, "conn-timer");
	g_source_set_callback(s, on_tick, c, NULL);
	id[0] = g_source_attach(s, NULL);
	snprintf(line, sizeof(line),
		 "ODEBUG: holder: GLib source %u \"conn-timer\" (callback %p, context %p)\n", id[0],
		 (void *)on_tick, (void *)ctx);
	EXPECT_FREE_REPORT("conn_free", 1, conn_free(c), line);
	assert_true(g_source_remove(id[0]));
	g_source_unref(s);

	/* Two holders, both named (the latest first); a third is counted. */
	id[0] = g_timeout_add(60000, on_tick, d);
	id[1] = g_timeout_add(60000, on_tick, d);
	snprintf(line, sizeof(line),
		 "ODEBUG: holder: GLib source %u (callback %p, context %p); source %u (callback %p, "
		 "context %p)\n", id[1], (void *)on_tick, (void *)ctx, id[0], (void *)on_tick,
		 (void *)ctx);
	EXPECT_FREE_REPORT("conn_free", 1, conn_free(d), line);
	assert_true(g_source_remove(id[0]));
	assert_true(g_source_remove(id[1]));
	id[0] = g_timeout_add(60000, on_tick, e);
	id[1] = g_timeout_add(60000, on_tick, e);
	id[2] = g_timeout_add(60000, on_tick, e);
	snprintf(line, sizeof(line), "ODEBUG: holder: GLib source %u (callback %p, context %p); "
		 "source %u (callback %p, context %p); and 1 more\n", id[2], (void *)on_tick,
		 (void *)ctx, id[1], (void *)on_tick, (void *)ctx);
	EXPECT_FREE_REPORT("conn_free", 1, conn_free(e), line);
	for (int i = 0; i < 3; i++)
		assert_true(g_source_remove(id[i]));
}

/* A GObject whose last reference goes while a timeout holds it (g_slice through malloc). */
static void gobject_unref_to_zero_is_reported(void **state)
{
	GObject *o = g_object_new(G_TYPE_OBJECT, NULL);
	guint id;

	(void)state;
	if (!g_getenv("G_SLICE") || !strstr(g_getenv("G_SLICE"), "always-malloc"))
		skip();
	ncb = 0;
	id = g_timeout_add(1, on_tick, o);
	EXPECT_FREE_REPORT("conn_unref", 1, conn_unref(o), "object type: glib_source_data");
	spin(20);
	assert_int_equal(ncb, 0);
	assert_true(g_source_remove(id));
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
		spin_until(3, 10);
		free(e);
		assert_int_equal(ncb, 3);
	});
}

/* Callbacks that end their own source, then free their data in the same dispatch. */
static gboolean destroy_self_then_free(gpointer data)
{
	ncb++;
	g_source_destroy(g_main_current_source());
	free(data);
	return G_SOURCE_CONTINUE;
}

static gboolean remove_own_id_then_gfree(gpointer data)
{
	ncb++;
	g_source_remove(g_source_get_id(g_main_current_source()));
	g_free(data);
	return G_SOURCE_REMOVE;
}

static gboolean replace_self_then_free(gpointer data)
{
	ncb++;
	g_source_set_callback(g_main_current_source(), once, NULL, NULL);
	free(data);
	return G_SOURCE_CONTINUE;
}

/*
 * A source that lets its callback go during its own dispatch
 * (g_source_destroy, g_source_remove of its own id, another callback set)
 * no longer holds the data: the callback's free after it is silent.
 */
static void let_go_during_own_dispatch_then_freed_is_silent(void **state)
{
	(void)state;
	EXPECT_SILENT({
		GSource *s = g_timeout_source_new(1);

		ncb = 0;
		g_source_set_callback(s, destroy_self_then_free, malloc(sizeof(struct conn)), NULL);
		g_source_attach(s, NULL);
		g_timeout_add(1, remove_own_id_then_gfree, g_new0(struct conn, 1));
		g_idle_add(replace_self_then_free, malloc(sizeof(struct conn)));
		spin_until(4, 10);
		assert_int_equal(ncb, 4);	/* the replaced one ran once() after */
		assert_true(g_source_is_destroyed(s));
		g_source_unref(s);
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

/* ---- descriptors a source polls (watches, lib/checks/fd) ---- */

static int nfd;

static gboolean on_fd(gint fd, GIOCondition cond, gpointer data)
{
	char c;

	(void)cond;
	(void)data;
	assert_int_equal(read(fd, &c, 1), 1);
	nfd++;
	return G_SOURCE_CONTINUE;
}

static gboolean on_fd_once(gint fd, GIOCondition cond, gpointer data)
{
	(void)fd;
	(void)cond;
	(void)data;
	nfd++;
	return G_SOURCE_REMOVE;
}

/* Its own callback closes the descriptor, then ends the source. */
static gboolean on_fd_close_own(gint fd, GIOCondition cond, gpointer data)
{
	(void)cond;
	(void)data;
	nfd++;
	close(fd);
	return G_SOURCE_REMOVE;
}

static bool fd_open(int fd)
{
	return fcntl(fd, F_GETFD) != -1;
}

/* The culprit. */
static NOINLINE int close_watched(int fd) { return close(fd); }

static void spin_until_fd(int want)
{
	for (int i = 0; i < 5000 && nfd < want; i++)
		spin(1);
}

/*
 * A close of a descriptor a g_unix_fd_add() source polls: reported at the
 * close, naming the source, and not made; the program then removes the
 * source, and its own close after that is silent.
 */
static void close_while_an_fd_source_polls_is_reported_and_not_made(void **state)
{
	int p[2], r = -1;
	guint id;
	char want[64];

	(void)state;
	assert_int_equal(pipe(p), 0);
	id = g_unix_fd_add(p[0], G_IO_IN, on_fd, NULL);
	snprintf(want, sizeof(want), "holder: GLib fd source id %u (g_unix_fd_add) watches fd %d",
		 id, p[0]);
	EXPECT_OUTPUT(1, 1, "close_watched", r = close_watched(p[0]), "ODEBUG: close active",
		      "object type: fd", want, "this close() was not made (it returned 0)",
		      "g_source_remove()");
	assert_int_equal(r, 0);
	assert_true(fd_open(p[0]));
	EXPECT_SILENT({
		nfd = 0;
		assert_int_equal(write(p[1], "x", 1), 1);
		spin_until_fd(1);
		assert_int_equal(nfd, 1);
		g_source_remove(id);
		assert_int_equal(close(p[0]), 0);
		assert_int_equal(close(p[1]), 0);
	});
	assert_false(fd_open(p[0]));
}

/* g_source_add_unix_fd() on a source of the program's, attached: the same. */
static void close_while_a_source_polls_its_unix_fd_is_reported(void **state)
{
	static GSourceFuncs funcs = { 0 };
	GSource *s = g_source_new(&funcs, sizeof(GSource));
	int p[2], r = -1;
	gpointer tag;
	guint id;

	(void)state;
	assert_int_equal(pipe(p), 0);
	tag = g_source_add_unix_fd(s, p[0], G_IO_IN);
	id = g_source_attach(s, NULL);
	EXPECT_OUTPUT(1, 1, "close_watched", r = close_watched(p[0]), "ODEBUG: close active",
		      "holder: GLib source id ", "(g_source_add_unix_fd) watches fd");
	assert_int_equal(r, 0);
	assert_true(id > 0);
	EXPECT_SILENT({
		g_source_remove_unix_fd(s, tag);
		assert_int_equal(close(p[0]), 0);
		g_source_destroy(s);
		g_source_unref(s);
		close(p[1]);
	});
}

/*
 * Every end of a watch before the close is silent: g_source_remove(),
 * G_SOURCE_REMOVE, a callback closing its own descriptor before it ends
 * its source, g_source_remove_unix_fd(), g_source_destroy().
 */
static void closes_after_the_watch_ended_are_silent(void **state)
{
	(void)state;
	EXPECT_SILENT({
		static GSourceFuncs funcs = { 0 };
		GSource *s = g_source_new(&funcs, sizeof(GSource)), *t;
		int a[2], b[2], c[2], d[2], e[2];
		gpointer tag;

		assert_true(!pipe(a) && !pipe(b) && !pipe(c) && !pipe(d) && !pipe(e));
		g_source_remove(g_unix_fd_add(a[0], G_IO_IN, on_fd, NULL));
		assert_int_equal(close(a[0]), 0);
		nfd = 0;
		g_unix_fd_add(b[0], G_IO_IN, on_fd_once, NULL);
		g_unix_fd_add(c[0], G_IO_IN, on_fd_close_own, NULL);
		assert_int_equal(write(b[1], "x", 1), 1);
		assert_int_equal(write(c[1], "x", 1), 1);
		spin_until_fd(2);
		assert_int_equal(nfd, 2);
		assert_false(fd_open(c[0]));
		assert_int_equal(close(b[0]), 0);
		tag = g_source_add_unix_fd(s, d[0], G_IO_IN);
		g_source_attach(s, NULL);
		g_source_remove_unix_fd(s, tag);
		assert_int_equal(close(d[0]), 0);
		t = g_source_new(&funcs, sizeof(GSource));
		g_source_add_unix_fd(t, e[0], G_IO_IN);
		g_source_attach(t, NULL);
		g_source_destroy(t);
		assert_int_equal(close(e[0]), 0);
		g_source_unref(t);
		g_source_destroy(s);
		g_source_unref(s);
		close(a[1]), close(b[1]), close(c[1]), close(d[1]), close(e[1]);
	});
}

static NOINLINE int fclose_watched(FILE *f) { return fclose(f); }

/*
 * A watch and another owner on one descriptor: the stream's own fclose()
 * under a live watch is reported (glibc's close inside it is made), and
 * silent once the watch ended; an fdsan tag keeps bionic's answers
 * (get_owner_tag, exchange) with a watch on its descriptor.
 */
static void watch_beside_a_stream_or_an_fdsan_tag(void **state)
{
	FILE *f = fopen("/dev/null", "r"), *g = fopen("/dev/null", "r");
	uint64_t tag = android_fdsan_create_owner_tag(ANDROID_FDSAN_OWNER_TYPE_UNIQUE_FD, 1);
	uint64_t tag2 = android_fdsan_create_owner_tag(ANDROID_FDSAN_OWNER_TYPE_UNIQUE_FD, 2);
	int fd = open("/dev/null", O_RDONLY), r = -1;
	guint id;

	(void)state;
	assert_true(f && g && fd >= 0);
	id = g_unix_fd_add(fileno(f), G_IO_IN, on_fd, NULL);
	EXPECT_OUTPUT(1, 0, "fclose_watched", r = fclose_watched(f), "ODEBUG: fclose active",
		      "holder: GLib fd source id", "this fclose() closed it");
	assert_int_equal(r, 0);
	g_source_remove(id);
	EXPECT_SILENT({
		g_source_remove(g_unix_fd_add(fileno(g), G_IO_IN, on_fd, NULL));
		assert_int_equal(fclose(g), 0);
		android_fdsan_exchange_owner_tag(fd, 0, tag);
		id = g_unix_fd_add(fd, G_IO_IN, on_fd, NULL);
		assert_true(android_fdsan_get_owner_tag(fd) == tag);
		android_fdsan_exchange_owner_tag(fd, tag, tag2);
		assert_true(android_fdsan_get_owner_tag(fd) == tag2);
		g_source_remove(id);
		assert_int_equal(android_fdsan_close_with_tag(fd, tag2), 0);
	});
	assert_false(fd_open(fd));
}

/*
 * GLib's own close of a descriptor its source still polls (GIO's
 * g_socket_close() before the socket's source is destroyed, as GDBus
 * does): made and silent, and the number taken by another file and
 * closed by the program after that is silent too.
 */
static void close_inside_glib_while_its_source_polls_is_made_and_silent(void **state)
{
	(void)state;
	EXPECT_SILENT({
		GSocket *sock;
		GSource *src;
		int sv[2], p[2];

		assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
		sock = g_socket_new_from_fd(sv[0], NULL);
		assert_non_null(sock);
		src = g_socket_create_source(sock, G_IO_IN, NULL);
		assert_true(g_source_attach(src, NULL) > 0);
		assert_true(g_socket_close(sock, NULL));
		assert_false(fd_open(sv[0]));
		assert_int_equal(pipe(p), 0);
		assert_int_equal(p[0], sv[0]);
		assert_int_equal(close(p[0]), 0);
		assert_int_equal(close(p[1]), 0);
		g_source_destroy(src);
		g_source_unref(src);
		g_object_unref(sock);
		close(sv[1]);
	});
}

/* Tests that need the module loaded by libodebug (its describe, its services): last. */
#define LOADED_ONLY	6

/* argv[1] "preload": the module is libodebug-glib-preload.so in LD_PRELOAD. */
int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(timeout_data_freed_is_reported_and_never_called),
		cmocka_unit_test(freed_then_removed_at_once_is_no_critical),
		cmocka_unit_test(idle_data_gfreed_is_reported_without_notify),
		cmocka_unit_test(shared_data_one_report_neither_called),
		cmocka_unit_test(io_and_child_watch_data_freed_are_never_called),
		cmocka_unit_test(gobject_unref_to_zero_is_reported),
		cmocka_unit_test(removed_or_finished_then_freed_is_silent),
		cmocka_unit_test(let_go_during_own_dispatch_then_freed_is_silent),
		cmocka_unit_test(notify_replace_and_by_user_data_are_silent),
		cmocka_unit_test(non_pointers_are_not_held),
		cmocka_unit_test(kept_trackers_are_silent),
		cmocka_unit_test(threads_are_silent),
		/* Last: libodebug calls describe only for a module it loaded. */
		cmocka_unit_test(holder_line_names_the_sources),
		unit_test_with(HELD, close_while_an_fd_source_polls_is_reported_and_not_made),
		unit_test_with(HELD, close_while_a_source_polls_its_unix_fd_is_reported),
		unit_test_with(HELD, closes_after_the_watch_ended_are_silent),
		unit_test_with(HELD, watch_beside_a_stream_or_an_fdsan_tag),
		cmocka_unit_test(close_inside_glib_while_its_source_polls_is_made_and_silent),
	};
	bool preloaded = argc > 1 && !strcmp(argv[1], "preload");

	g_log_set_always_fatal(G_LOG_FATAL_MASK | G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING);
	return _cmocka_run_group_tests("test-module-glib", tests,
				       sizeof(tests) / sizeof(tests[0]) -
				       (preloaded ? LOADED_ONLY : 0), NULL, NULL);
}
