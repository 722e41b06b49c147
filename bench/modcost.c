/* SPDX-License-Identifier: MIT */
/*
 * modcost.c - what an annotation module adds to the library calls it wraps,
 * for one library (built once per module: -DMOD_LIBEVENT, -DMOD_GLIB,
 * -DMOD_LIBUV).  Each cycle is a correct use the module annotates from
 * start to end; its annotated calls are the calls of the cycle in which the
 * module's code runs (a wrapper, or a callback of the module's that the
 * library calls):
 *   libevent: a connection's change of state in the 1.4 API, as memcached
 *             makes it: event_del + event_set + event_base_set + event_add
 *             of one event, a timer (3: event_set is wrapped, and so are
 *             the event_assign it calls through libevent's PLT and
 *             event_add), and the same of an event on a pipe's descriptor
 *             (3; event_add begins its watch of the descriptor);
 *   glib:     g_timeout_add with a data pointer + g_source_remove (2:
 *             g_timeout_add is wrapped; the source's end in g_source_remove
 *             runs the module's callback unref);
 *   libuv:    uv_timer_init + uv_close + uv_run(NOWAIT) running the close
 *             callback (3: two wrapped, the close trampoline in uv_run), and
 *             uv_write of 1 byte to a pipe + uv_run(NOWAIT) running its
 *             callback + a read draining it (2: uv_write wrapped, the write
 *             trampoline in uv_run).
 * The program runs itself again in three configurations, alternated, 5
 * rounds: ODEBUG unset (libodebug preloaded, the plain anchor), ODEBUG=1
 * with modules=none, and ODEBUG=1 with the module; it prints the median
 * and the minimum ns per cycle of each (on a loaded machine the minimum is
 * the least disturbed run), and per call of the cycle's annotated calls
 * what the module adds over modules=none (both track one object of the
 * program's own: track_one_elsewhere()) and over ODEBUG unset.
 *   modcost LIBODEBUG MODULE_PATH [CYCLES]
 * Under callgrind, `modcost --child N` runs the loop alone (the function
 * cycles() holds it: --toggle-collect=cycles).
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <dlfcn.h>

#include "bench-stats.h"
#include "odebug.h"

#if defined(MOD_LIBEVENT)
#include <event2/event.h>
#include <event2/event_compat.h>
#include <event2/event_struct.h>
#define NWORK 2
static const char *const work_name[NWORK] = { "event_del+event_set+event_base_set+event_add",
					      "the same, an event on a descriptor" };
static const int work_calls[NWORK] = { 3, 3 };
#elif defined(MOD_GLIB)
#include <glib.h>
#define NWORK 1
static const char *const work_name[NWORK] = { "g_timeout_add+g_source_remove" };
static const int work_calls[NWORK] = { 2 };
#elif defined(MOD_LIBUV)
#include <uv.h>
#define NWORK 2
static const char *const work_name[NWORK] = { "uv_timer_init+uv_close+uv_run",
					      "uv_write+uv_run+read" };
static const int work_calls[NWORK] = { 3, 2 };
#else
#error "build with -DMOD_LIBEVENT, -DMOD_GLIB or -DMOD_LIBUV"
#endif

static double ns_between(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) * 1e9 + (b->tv_nsec - a->tv_nsec);
}

#if defined(MOD_LIBEVENT)
static void on_event(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
}

/*
 * @n changes of state of one persistent event: a timer (w 0), or a read
 * event on a pipe's descriptor (w 1: event_add and event_del each make an
 * epoll_ctl).
 */
__attribute__((noinline, noclone, used)) static void cycles(int w, long n)
{
	static struct event_base *base;
	static struct event ev;
	static int fds[2];
	struct timeval tv = { 60, 0 };
	int fd = -1;
	short what = EV_PERSIST;

	if (!base) {
		base = event_base_new();
		if (pipe(fds))
			abort();
		event_assign(&ev, base, -1, EV_PERSIST, on_event, NULL);
	}
	if (w == 1) {
		fd = fds[0];
		what |= EV_READ;
	}
	for (long i = 0; i < n; i++) {
		event_del(&ev);
		event_set(&ev, fd, what, on_event, NULL);
		event_base_set(base, &ev);
		event_add(&ev, &tv);
	}
}
#elif defined(MOD_GLIB)
static gboolean on_timeout(gpointer data)
{
	(void)data;
	return G_SOURCE_CONTINUE;
}

/* @n sources added with a data pointer and removed before they fire. */
__attribute__((noinline, noclone, used)) static void cycles(int w, long n)
{
	static void *data;

	(void)w;
	if (!data)
		data = malloc(64);
	for (long i = 0; i < n; i++)
		g_source_remove(g_timeout_add(60000, on_timeout, data));
}
#elif defined(MOD_LIBUV)
static void on_close(uv_handle_t *h)
{
	(void)h;
}

static void on_write(uv_write_t *req, int status)
{
	(void)req;
	(void)status;
}

/* @n handle lives (w 0) or pipe writes (w 1). */
__attribute__((noinline, noclone, used)) static void cycles(int w, long n)
{
	static uv_loop_t loop;
	static uv_pipe_t out;
	static int fds[2] = { -1, -1 };
	static uv_timer_t t;	/* static, as a handle inside the program's heap structure */
	static uv_write_t req;
	char c = 'x', sink[64];
	uv_buf_t buf = uv_buf_init(&c, 1);

	if (fds[0] < 0) {
		uv_loop_init(&loop);
		if (pipe(fds))
			exit(1);
		uv_pipe_init(&loop, &out, 0);
		uv_pipe_open(&out, fds[1]);
	}
	for (long i = 0; i < n; i++) {
		if (w == 0) {
			uv_timer_init(&loop, &t);
			uv_close((uv_handle_t *)&t, on_close);
		} else {
			uv_write(&req, (uv_stream_t *)&out, &buf, 1, on_write);
		}
		uv_run(&loop, UV_RUN_NOWAIT);
		if (w == 1 && read(fds[0], sink, sizeof(sink)) < 0)
			exit(1);
	}
}
#endif

/*
 * One object of the program's own, tracked from start to end when libodebug
 * is enabled: a program with ODEBUG=1 tracks something (its mutexes, with
 * the default check_pthread=1), and libodebug's free() costs more once it
 * does (BENCHMARKS.md, the release path), in every configuration alike.
 * Through dlsym(): the bench does not link libodebug, it is preloaded.
 */
static void track_one_elsewhere(void)
{
	static const struct debug_obj_descr descr = { .name = "modcost_elsewhere" };
	static long object;
	void (*init)(void *, const struct debug_obj_descr *) =
		(void (*)(void *, const struct debug_obj_descr *))dlsym(RTLD_DEFAULT, "debug_object_init");

	if (init)
		init(&object, &descr);
}

/* The child: ns per cycle of workload @w, after a tenth as many to warm. */
static double child(int w, long n)
{
	struct timespec a, b;

	track_one_elsewhere();
	cycles(w, n / 10);
	clock_gettime(CLOCK_MONOTONIC, &a);
	cycles(w, n);
	clock_gettime(CLOCK_MONOTONIC, &b);
	return ns_between(&a, &b) / (double)n;
}

/* One child run in a configuration: unset (@opts NULL), or ODEBUG=1 with @opts. */
static double run(char *self, const char *lib, const char *opts, int w, long n)
{
	char buf[64] = "", arg_w[16], arg_n[32];
	int fd[2];
	pid_t pid;

	snprintf(arg_w, sizeof(arg_w), "%d", w);
	snprintf(arg_n, sizeof(arg_n), "%ld", n);
	if (pipe(fd))
		exit(1);
	pid = fork();
	if (pid == 0) {
		dup2(fd[1], 1);
		setenv("LD_PRELOAD", lib, 1);
		if (opts) {
			setenv("ODEBUG", "1", 1);
			setenv("ODEBUG_OPTIONS", opts, 1);
		} else {
			unsetenv("ODEBUG");
		}
		execl(self, self, "--time", arg_w, arg_n, (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	if (read(fd[0], buf, sizeof(buf) - 1) < 0)
		buf[0] = '\0';
	close(fd[0]);
	waitpid(pid, NULL, 0);
	return atof(buf);
}

int main(int argc, char **argv)
{
	char opts[600], optsnone[620];
	double off[5], on[5], none[5];
	long n = 200000;

	if (argc == 4 && !strcmp(argv[1], "--time")) {
		printf("%f\n", child(atoi(argv[2]), atol(argv[3])));
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "--child")) {
		track_one_elsewhere();
		cycles(atoi(argv[2]), atol(argv[3]));
		return 0;
	}
	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: modcost LIBODEBUG MODULE_PATH [CYCLES]\n"
				"       modcost --child WORKLOAD CYCLES   (callgrind)\n");
		return 2;
	}
	if (argc == 4)
		n = atol(argv[3]);
	snprintf(opts, sizeof(opts), "module_path=%s:check_pthread=0", argv[2]);
	snprintf(optsnone, sizeof(optsnone), "%s:modules=none", opts);
	for (int w = 0; w < NWORK; w++) {
		for (int i = 0; i < 5; i++) {
			off[i] = run(argv[0], argv[1], NULL, w, n);
			on[i] = run(argv[0], argv[1], opts, w, n);
			none[i] = run(argv[0], argv[1], optsnone, w, n);
		}
		qsort(off, 5, sizeof(double), bench_cmp_double);
		qsort(on, 5, sizeof(double), bench_cmp_double);
		qsort(none, 5, sizeof(double), bench_cmp_double);
		printf("%s: ns per cycle, median [min]: ODEBUG unset %.1f [%.1f], "
		       "ODEBUG=1 modules=none %.1f [%.1f], ODEBUG=1 with the module %.1f [%.1f]\n",
		       work_name[w], off[2], off[0], none[2], none[0], on[2], on[0]);
		printf("  per annotated call (%d a cycle), the module adds: over modules=none "
		       "%.1f ns median, %.1f ns min (goal: at most 50); over ODEBUG unset "
		       "%.1f ns median, %.1f ns min\n", work_calls[w],
		       (on[2] - none[2]) / work_calls[w], (on[0] - none[0]) / work_calls[w],
		       (on[2] - off[2]) / work_calls[w], (on[0] - off[0]) / work_calls[w]);
	}
	return 0;
}
