/* SPDX-License-Identifier: MIT */
/*
 * The libuv module (modules/libuv/uv-odebug.c), loaded by libodebug:
 * a handle freed before its close callback, a request freed before its
 * callback and a loop freed without a successful uv_loop_close() are each
 * reported at the free, naming the culprit, the type and whether the
 * handle was active (started), open but not started, or closing; every order libuv's documentation gives is
 * silent.  There is no fixup: a test that frees memory libuv still links
 * never runs that loop again (its loop is leaked).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/socket.h>
#include <uv.h>

#include "mod-test.h"

#define NOINLINE __attribute__((noinline))

static uv_loop_t *loop_new(void)
{
	uv_loop_t *loop = malloc(sizeof(*loop));

	assert_non_null(loop);
	assert_int_equal(uv_loop_init(loop), 0);
	return loop;
}

/* Run @loop until nothing is left, close it and free it: silent. */
static void loop_done(uv_loop_t *loop)
{
	assert_int_equal(uv_run(loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(uv_loop_close(loop), 0);
	free(loop);
}

static int ticks;
static void on_tick(uv_timer_t *t) { (void)t; ticks++; }
static void on_close(uv_handle_t *h) { (void)h; }
static void on_close_free(uv_handle_t *h) { free(h); }

/* The culprits: each frees memory libuv still holds. */
static NOINLINE void timer_drop(uv_timer_t *t) { free(t); }
static NOINLINE void req_drop(void *req) { free(req); }
static NOINLINE void loop_drop(uv_loop_t *loop) { free(loop); }

/* A started timer freed: "uv_timer", its callback as the hint, "active (started)". */
static void started_timer_freed_is_reported(void **state)
{
	uv_loop_t *loop = loop_new();
	uv_timer_t *t = malloc(sizeof(*t));
	char loopline[64];

	(void)state;
	snprintf(loopline, sizeof(loopline), "ODEBUG: holder: libuv loop %p;", (void *)loop);
	uv_timer_init(loop, t);
	uv_timer_start(t, on_tick, 1000, 1000);
	EXPECT_FREE_REPORT("timer_drop", 0, timer_drop(t),
			   "object type: uv_timer hint: on_tick", loopline,
			   "the handle is active (started); no fixup can take it back",
			   "uv_close() it, free it in the close callback\n",
			   "ODEBUG: not fixed up: the type has no fixup for this");
}

/* Started, then stopped: open again, not started. */
static void stopped_timer_freed_is_reported(void **state)
{
	uv_loop_t *loop = loop_new();
	uv_timer_t *t = malloc(sizeof(*t));

	(void)state;
	uv_timer_init(loop, t);
	uv_timer_start(t, on_tick, 1000, 1000);
	uv_timer_stop(t);
	EXPECT_FREE_REPORT("timer_drop", 0, timer_drop(t), "object type: uv_timer",
			   "the handle is open, not started (initialised, uv_close not called); no fixup can take it back");
}

/* Initialised, never started: the loop's handle queue links it all the same. */
static void initialised_timer_freed_is_reported(void **state)
{
	uv_loop_t *loop = loop_new();
	uv_timer_t *t = malloc(sizeof(*t));

	(void)state;
	uv_timer_init(loop, t);
	EXPECT_FREE_REPORT("timer_drop", 0, timer_drop(t), "object type: uv_timer",
			   "the handle is open, not started (initialised, uv_close not called); no fixup can take it back");
}

/* uv_close() called on a started timer, its callback not run yet: "closing", the close callback as the hint. */
static void closing_timer_freed_is_reported(void **state)
{
	uv_loop_t *loop = loop_new();
	uv_timer_t *t = malloc(sizeof(*t));

	(void)state;
	uv_timer_init(loop, t);
	uv_timer_start(t, on_tick, 1000, 0);
	uv_close((uv_handle_t *)t, on_close);
	EXPECT_FREE_REPORT("timer_drop", 0, timer_drop(t),
			   "object type: uv_timer hint: on_close",
			   "the handle is closing (uv_close called, its close callback not run yet); no fixup can take it back");
}

static void on_write(uv_write_t *req, int status) { (void)req; (void)status; }

/* A write in flight freed before its callback. */
static void write_in_flight_freed_is_reported(void **state)
{
	uv_loop_t *loop = loop_new();
	uv_pipe_t *p = malloc(sizeof(*p));
	uv_write_t *req = malloc(sizeof(*req));
	uv_buf_t buf = uv_buf_init("ping", 4);
	int sv[2];

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	uv_pipe_init(loop, p, 0);
	assert_int_equal(uv_pipe_open(p, sv[0]), 0);
	assert_int_equal(uv_write(req, (uv_stream_t *)p, &buf, 1, on_write), 0);
	EXPECT_FREE_REPORT("req_drop", 0, req_drop(req),
			   "object type: uv_write (in flight) hint: on_write");
}

static void on_stat(uv_fs_t *req) { (void)req; }

/* A uv_fs_stat() whose callback has not run (the worker has finished). */
static void fs_in_flight_freed_is_reported(void **state)
{
	uv_loop_t *loop = loop_new();
	uv_fs_t *req = malloc(sizeof(*req));

	(void)state;
	assert_int_equal(uv_fs_stat(loop, req, "/", on_stat), 0);
	usleep(100000);		/* the thread pool is done with the request */
	EXPECT_FREE_REPORT("req_drop", 0, req_drop(req),
			   "object type: uv_fs (in flight) hint: on_stat");
}

static void work(uv_work_t *req) { (void)req; }
static void after_work(uv_work_t *req, int status) { (void)req; (void)status; }

static void work_in_flight_freed_is_reported(void **state)
{
	uv_loop_t *loop = loop_new();
	uv_work_t *req = malloc(sizeof(*req));

	(void)state;
	assert_int_equal(uv_queue_work(loop, req, work, after_work), 0);
	usleep(100000);
	EXPECT_FREE_REPORT("req_drop", 0, req_drop(req),
			   "object type: uv_work (in flight) hint: after_work");
}

static void on_resolved(uv_getaddrinfo_t *req, int status, struct addrinfo *res)
{
	(void)req;
	(void)status;
	uv_freeaddrinfo(res);
}

static void getaddrinfo_in_flight_freed_is_reported(void **state)
{
	uv_loop_t *loop = loop_new();
	uv_getaddrinfo_t *req = malloc(sizeof(*req));
	struct addrinfo hints = { .ai_family = AF_INET, .ai_flags = AI_NUMERICHOST };

	(void)state;
	assert_int_equal(uv_getaddrinfo(loop, req, on_resolved, "127.0.0.1", NULL, &hints), 0);
	usleep(100000);
	EXPECT_FREE_REPORT("req_drop", 0, req_drop(req),
			   "object type: uv_getaddrinfo (in flight) hint: on_resolved");
}

/* uv_loop_close() said UV_EBUSY (a timer open), and the loop was freed. */
static void busy_loop_freed_is_reported(void **state)
{
	uv_loop_t *loop = loop_new();
	uv_timer_t *t = malloc(sizeof(*t));

	(void)state;
	uv_timer_init(loop, t);
	EXPECT_SILENT(assert_int_equal(uv_loop_close(loop), UV_EBUSY));
	EXPECT_FREE_REPORT("loop_drop", 0, loop_drop(loop), "object type: uv_loop (not closed)");
}

static int closed;
static void on_close_count(uv_handle_t *h) { (void)h; closed++; }

static void on_once_close(uv_timer_t *t)
{
	ticks++;
	uv_close((uv_handle_t *)t, on_close_free);
}

/*
 * Memory closed as one handle type and initialised as another: its report
 * names the type in use (a tracker kept between uses keeps no old type).
 */
static void reused_as_another_type_is_reported_as_it(void **state)
{
	uv_loop_t *loop = loop_new();
	union { uv_timer_t t; uv_check_t c; } *u = malloc(sizeof(*u));

	(void)state;
	uv_timer_init(loop, &u->t);
	uv_close((uv_handle_t *)&u->t, on_close);
	assert_int_equal(uv_run(loop, UV_RUN_NOWAIT), 0);
	uv_check_init(loop, &u->c);
	EXPECT_FREE_REPORT("timer_drop", 0, timer_drop(&u->t), "object type: uv_check",
			   "the handle is open, not started");
}

/*
 * An open handle initialised again: one "activate active" at that init,
 * for memory new to the module and for memory it kept a tracker of.
 */
static NOINLINE void timer_init_again(uv_loop_t *loop, uv_timer_t *t) { uv_timer_init(loop, t); }
static NOINLINE void timer_init_kept(uv_loop_t *loop, uv_timer_t *t) { uv_timer_init(loop, t); }

static void open_handle_initialised_again_is_reported(void **state)
{
	struct stats_delta d;
	char *out;

	(void)state;
	for (int round = 0; round < 2; round++) {
		uv_loop_t *loop = loop_new();	/* leaked: its handle queue now links t twice */
		uv_timer_t *t = malloc(sizeof(*t));

		if (round == 1) {	/* a tracker kept from a closed use of the same memory */
			uv_timer_init(loop, t);
			uv_close((uv_handle_t *)t, on_close);
			assert_int_equal(uv_run(loop, UV_RUN_NOWAIT), 0);
		}
		uv_timer_init(loop, t);
		stats_mark();
		capture_start();
		if (round == 0)	/* another culprit each round: a repeat is only counted */
			timer_init_again(loop, t);
		else
			timer_init_kept(loop, t);
		out = capture_stop();
		d = stats_delta();
		if (!strstr(out, "ODEBUG: activate active") || !strstr(out, "object type: uv_timer") ||
		    d.warnings != 1)
			fail_msg("round %d: %ld warnings, want one activate active:\n%s", round,
				 d.warnings, out);
		assert_culprit(out, round == 0 ? "timer_init_again" : "timer_init_kept");
		free(out);
	}
}

/* uv_close() with the free in the close callback, from a callback or from outside. */
static void free_in_close_callback_is_silent(void **state)
{
	(void)state;
	EXPECT_SILENT({
		uv_loop_t *loop = loop_new();
		uv_timer_t *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
		uv_idle_t *i = malloc(sizeof(*i));

		ticks = 0;
		uv_timer_init(loop, a);
		uv_timer_start(a, on_once_close, 1, 0);
		uv_timer_init(loop, b);
		uv_close((uv_handle_t *)b, on_close_free);
		uv_idle_init(loop, i);
		uv_close((uv_handle_t *)i, on_close_free);
		loop_done(loop);
		assert_int_equal(ticks, 1);
	});
}

/* One block: a timer, closed, then initialised again as a timer and as a check handle. */
static void reinitialised_after_close_is_silent(void **state)
{
	(void)state;
	EXPECT_SILENT({
		uv_loop_t *loop = loop_new();
		union { uv_timer_t t; uv_check_t c; } *u = malloc(sizeof(*u));

		closed = 0;
		for (int round = 0; round < 3; round++) {
			uv_timer_init(loop, &u->t);
			uv_timer_start(&u->t, on_tick, 1, 0);
			uv_run(loop, UV_RUN_DEFAULT);
			uv_close((uv_handle_t *)&u->t, on_close_count);
			uv_run(loop, UV_RUN_DEFAULT);
			uv_check_init(loop, &u->c);
			uv_close((uv_handle_t *)&u->c, on_close_count);
			uv_run(loop, UV_RUN_DEFAULT);
		}
		assert_int_equal(closed, 6);
		loop_done(loop);
		free(u);
	});
}

static void on_stat_free(uv_fs_t *req)
{
	uv_fs_req_cleanup(req);
	free(req);
}

static void on_write_free(uv_write_t *req, int status)
{
	(void)status;
	free(req);
}

static void after_work_free(uv_work_t *req, int status)
{
	(void)status;
	free(req);
}

static void on_resolved_free(uv_getaddrinfo_t *req, int status, struct addrinfo *res)
{
	(void)status;
	uv_freeaddrinfo(res);
	free(req);
}

/* Requests freed in their callbacks; a synchronous uv_fs_stat() freed after it returned. */
static void requests_freed_in_callbacks_are_silent(void **state)
{
	(void)state;
	EXPECT_SILENT({
		uv_loop_t *loop = loop_new();
		uv_pipe_t *p = malloc(sizeof(*p));
		uv_write_t *w = malloc(sizeof(*w));
		uv_fs_t *f = malloc(sizeof(*f)), *sync = malloc(sizeof(*sync));
		uv_work_t *k = malloc(sizeof(*k));
		uv_getaddrinfo_t *g = malloc(sizeof(*g));
		struct addrinfo hints = { .ai_family = AF_INET, .ai_flags = AI_NUMERICHOST };
		uv_buf_t buf = uv_buf_init("ping", 4);
		int sv[2];

		assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
		uv_pipe_init(loop, p, 0);
		uv_pipe_open(p, sv[0]);
		assert_int_equal(uv_write(w, (uv_stream_t *)p, &buf, 1, on_write_free), 0);
		assert_int_equal(uv_fs_stat(loop, f, "/", on_stat_free), 0);
		assert_int_equal(uv_queue_work(loop, k, work, after_work_free), 0);
		assert_int_equal(uv_getaddrinfo(loop, g, on_resolved_free, "127.0.0.1", NULL, &hints), 0);
		assert_int_equal(uv_fs_stat(loop, sync, "/", NULL), 0);
		uv_fs_req_cleanup(sync);
		free(sync);
		uv_run(loop, UV_RUN_DEFAULT);
		uv_close((uv_handle_t *)p, on_close_free);
		loop_done(loop);
		close(sv[1]);
	});
}

static void on_fs_poll(uv_fs_poll_t *h, int status, const uv_stat_t *prev, const uv_stat_t *cur)
{
	(void)h; (void)status; (void)prev; (void)cur;
}

/*
 * libuv's own handles: the loop's (inside it), uv_fs_poll's timer and
 * stat request (its own memory, closed and freed by libuv), the default
 * loop's.
 */
static void libuv_internal_handles_are_silent(void **state)
{
	(void)state;
	EXPECT_SILENT({
		uv_loop_t *loop = loop_new();
		uv_fs_poll_t *fp = malloc(sizeof(*fp));
		uv_timer_t *t = malloc(sizeof(*t));

		uv_fs_poll_init(loop, fp);
		assert_int_equal(uv_fs_poll_start(fp, on_fs_poll, "/", 1), 0);
		uv_timer_init(loop, t);
		uv_timer_start(t, on_tick, 20, 0);
		uv_run(loop, UV_RUN_ONCE);
		uv_close((uv_handle_t *)fp, on_close_free);
		uv_close((uv_handle_t *)t, on_close_free);
		loop_done(loop);

		uv_timer_t dt;
		uv_timer_init(uv_default_loop(), &dt);
		uv_timer_start(&dt, on_tick, 1, 0);
		uv_run(uv_default_loop(), UV_RUN_DEFAULT);
		uv_close((uv_handle_t *)&dt, NULL);
		uv_run(uv_default_loop(), UV_RUN_DEFAULT);
	});
}

struct worker {
	pthread_t thread;
	uv_async_t *wake;
	int done;
};

static void on_wake(uv_async_t *a)
{
	struct worker *w = a->data;

	if (__atomic_load_n(&w->done, __ATOMIC_ACQUIRE))
		uv_close((uv_handle_t *)a, on_close_free);
}

/* A thread of its own loop: 200 timers made, fired, closed and freed. */
static void *own_loop(void *arg)
{
	uv_loop_t *loop = loop_new();

	(void)arg;
	for (int i = 0; i < 200; i++) {
		uv_timer_t *t = malloc(sizeof(*t));

		uv_timer_init(loop, t);
		uv_timer_start(t, on_once_close, 0, 0);
		if (i % 20 == 0)
			uv_run(loop, UV_RUN_NOWAIT);
	}
	loop_done(loop);
	return NULL;
}

static void *poker(void *arg)
{
	struct worker *w = arg;

	for (int i = 0; i < 100; i++) {
		uv_async_send(w->wake);	/* libuv's own thread-safe call */
		usleep(100);
	}
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	uv_async_send(w->wake);
	return NULL;
}

/* Threads: one loop per thread, and uv_async_send() across threads. */
static void threads_are_silent(void **state)
{
	(void)state;
	EXPECT_SILENT({
		uv_loop_t *loop = loop_new();
		struct worker w = { .wake = malloc(sizeof(uv_async_t)) };
		pthread_t loops[3];

		uv_async_init(loop, w.wake, on_wake);
		w.wake->data = &w;
		for (int i = 0; i < 3; i++)
			pthread_create(&loops[i], NULL, own_loop, NULL);
		pthread_create(&w.thread, NULL, poker, &w);
		uv_run(loop, UV_RUN_DEFAULT);
		pthread_join(w.thread, NULL);
		for (int i = 0; i < 3; i++)
			pthread_join(loops[i], NULL);
		loop_done(loop);
	});
}

/* ---- descriptors a poll handle polls (watches, lib/checks/fd) ---- */

static int npoll;

static void on_poll(uv_poll_t *h, int status, int events)
{
	(void)h;
	(void)status;
	(void)events;
	npoll++;
}

static bool fd_open(int fd)
{
	return fcntl(fd, F_GETFD) != -1;
}

/* The culprit. */
static NOINLINE int close_polled(int fd) { return close(fd); }

/*
 * A close of a descriptor a started poll handle polls: reported at the
 * close, naming the handle, and not made; the program then stops and
 * closes the handle, and its own close after that is silent.
 */
static void close_while_a_poll_handle_polls_is_reported_and_not_made(void **state)
{
	uv_loop_t *loop = loop_new();
	uv_poll_t *h = malloc(sizeof(*h));
	int p[2], r = -1;
	char want[64];

	(void)state;
	assert_int_equal(pipe(p), 0);
	assert_int_equal(uv_poll_init(loop, h, p[0]), 0);
	assert_int_equal(uv_poll_start(h, UV_READABLE, on_poll), 0);
	snprintf(want, sizeof(want), "(uv_poll_start) watches fd %d", p[0]);
	EXPECT_OUTPUT(1, 1, "close_polled", r = close_polled(p[0]), "ODEBUG: close active",
		      "holder: libuv poll handle 0x", want, "this close() was not made",
		      "uv_poll_stop()");
	assert_int_equal(r, 0);
	assert_true(fd_open(p[0]));
	EXPECT_SILENT({
		uv_close((uv_handle_t *)h, on_close_free);
		loop_done(loop);
		assert_int_equal(close(p[0]), 0);
		close(p[1]);
	});
}

/* uv_poll_stop(), uv_close() (before and after its callback), then the close: silent. */
static void closes_after_the_poll_stopped_are_silent(void **state)
{
	(void)state;
	EXPECT_SILENT({
		uv_loop_t *loop = loop_new();
		uv_poll_t *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b)), *c = malloc(sizeof(*c));
		int p[2], q[2], u[2];

		assert_true(!pipe(p) && !pipe(q) && !pipe(u));
		assert_int_equal(uv_poll_init(loop, a, p[0]), 0);
		assert_int_equal(uv_poll_start(a, UV_READABLE, on_poll), 0);
		assert_int_equal(uv_poll_stop(a), 0);
		assert_int_equal(close(p[0]), 0);
		assert_int_equal(uv_poll_init(loop, b, q[0]), 0);
		assert_int_equal(uv_poll_start(b, UV_READABLE, on_poll), 0);
		uv_close((uv_handle_t *)b, on_close_free);
		assert_int_equal(close(q[0]), 0);
		assert_int_equal(uv_poll_init(loop, c, u[0]), 0);
		assert_int_equal(uv_poll_start(c, UV_READABLE, on_poll), 0);
		uv_close((uv_handle_t *)c, on_close_free);
		assert_int_equal(uv_run(loop, UV_RUN_DEFAULT), 0);	/* c's close callback */
		assert_int_equal(close(u[0]), 0);
		uv_close((uv_handle_t *)a, on_close_free);
		loop_done(loop);
		close(p[1]), close(q[1]), close(u[1]);
	});
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(started_timer_freed_is_reported),
		cmocka_unit_test(stopped_timer_freed_is_reported),
		cmocka_unit_test(initialised_timer_freed_is_reported),
		cmocka_unit_test(closing_timer_freed_is_reported),
		cmocka_unit_test(write_in_flight_freed_is_reported),
		cmocka_unit_test(fs_in_flight_freed_is_reported),
		cmocka_unit_test(work_in_flight_freed_is_reported),
		cmocka_unit_test(getaddrinfo_in_flight_freed_is_reported),
		cmocka_unit_test(busy_loop_freed_is_reported),
		cmocka_unit_test(reused_as_another_type_is_reported_as_it),
		cmocka_unit_test(open_handle_initialised_again_is_reported),
		cmocka_unit_test(free_in_close_callback_is_silent),
		cmocka_unit_test(reinitialised_after_close_is_silent),
		cmocka_unit_test(requests_freed_in_callbacks_are_silent),
		cmocka_unit_test(libuv_internal_handles_are_silent),
		cmocka_unit_test(threads_are_silent),
		unit_test_with(HELD, close_while_a_poll_handle_polls_is_reported_and_not_made),
		cmocka_unit_test(closes_after_the_poll_stopped_are_silent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
