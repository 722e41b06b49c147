/* SPDX-License-Identifier: MIT */
/*
 * evprog.c - programs on the system's libevent, one per scenario
 * (evprog NAME), for the libevent module's suite (test-libevent.c): each
 * misuse frees the memory of a pending event in a function named after
 * it; the correct patterns end the same way without the misuse.  Every
 * scenario ends by running the loop once and printing "end N" (N: the
 * events still pending in the base, 0 when the fixup removed the freed
 * one; libevent's own events not counted).  What the program reads back
 * from libevent that is not its own is printed as a "wrong:" line.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/event_compat.h>
#include <event2/event_struct.h>
#include <event2/thread.h>

struct conn {
	int id;
	struct event ev;
	char pad[32];
};

static struct timeval soon = { 0, 1000 }, later = { 60, 0 };
static int pending_before;	/* libevent's own events in the base */

void evtail_readd(evutil_socket_t fd, short what, void *arg);	/* evtail.c */

#define CHECK(cond)	do { if (!(cond)) printf("wrong: %s\n", #cond); } while (0)

static void on_event(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
}

static int count_one(const struct event_base *b, const struct event *e, void *arg)
{
	(void)b;
	(void)e;
	(*(int *)arg)++;
	return 0;
}

static int pending(struct event_base *base)
{
	int n = 0;

	event_base_foreach_event(base, count_one, &n);
	return n;
}

static struct conn *conn_open(struct event_base *base, short what)
{
	struct conn *c = calloc(1, sizeof(*c));

	event_assign(&c->ev, base, -1, what, on_event, c);
	event_add(&c->ev, &later);
	return c;
}

/* Misuses: each frees the memory of a pending event. */
void drop_pending_conn(struct event_base *base);
void drop_pending_conn(struct event_base *base)
{
	free(conn_open(base, EV_PERSIST));
}

void drop_pending_timer(struct event_base *base);
void drop_pending_timer(struct event_base *base)
{
	struct conn *c = calloc(1, sizeof(*c));

	evtimer_assign(&c->ev, base, on_event, c);
	evtimer_add(&c->ev, &later);
	free(c);
}

void drop_new_event(struct event_base *base);
void drop_new_event(struct event_base *base)
{
	struct event *ev = event_new(base, -1, EV_PERSIST, on_event, NULL);

	event_add(ev, &later);
	free(ev);		/* not event_free() */
}

void drop_legacy_set(struct event_base *base);
void drop_legacy_set(struct event_base *base)
{
	struct conn *c = calloc(1, sizeof(*c));

	evtimer_set(&c->ev, on_event, c);	/* event_set(): the 1.4 API */
	event_base_set(base, &c->ev);
	evtimer_add(&c->ev, &later);
	free(c);
}

void drop_readded_oneshot(struct event_base *base);
void drop_readded_oneshot(struct event_base *base)
{
	struct conn *c = conn_open(base, 0);

	event_del(&c->ev);
	event_add(&c->ev, &soon);
	event_base_loop(base, EVLOOP_ONCE);	/* fires: no longer pending */
	event_add(&c->ev, &later);		/* pending again */
	free(c);
}

/* A one-shot event re-added by a tail call at the end of its callback. */
void drop_readded_by_tail_call(struct event_base *base);
void drop_readded_by_tail_call(struct event_base *base)
{
	struct conn *c = calloc(1, sizeof(*c));

	event_assign(&c->ev, base, -1, 0, evtail_readd, &c->ev);
	event_add(&c->ev, &soon);
	event_base_loop(base, EVLOOP_ONCE);	/* fires: the callback adds it again */
	CHECK(event_pending(&c->ev, EV_TIMEOUT, NULL));
	free(c);
}

/* Memory used as a mutex, then, without a free, as a pending event. */
void drop_event_after_mutex(struct event_base *base);
void drop_event_after_mutex(struct event_base *base)
{
	union {
		struct event ev;
		pthread_mutex_t m;
	} *u = calloc(1, sizeof(*u));

	pthread_mutex_init(&u->m, NULL);
	pthread_mutex_lock(&u->m);
	pthread_mutex_unlock(&u->m);
	event_assign(&u->ev, base, -1, EV_PERSIST, on_event, NULL);
	event_add(&u->ev, &later);
	free(u);
}

/* Correct patterns. */
static void del_then_free(struct event_base *base)
{
	struct conn *c = conn_open(base, EV_PERSIST);

	event_add(&c->ev, &later);	/* re-adding a pending event is legal */
	event_del(&c->ev);
	free(c);
}

static void fired_oneshot_freed(struct event_base *base)
{
	struct conn *c = conn_open(base, 0);
	struct event *ev = evtimer_new(base, on_event, NULL);

	event_del(&c->ev);
	event_add(&c->ev, &soon);
	evtimer_add(ev, &soon);
	event_base_loop(base, EVLOOP_ONCE);
	while (event_pending(&c->ev, EV_TIMEOUT, NULL) || evtimer_pending(ev, NULL))
		event_base_loop(base, EVLOOP_ONCE);
	free(c);
	free(ev);	/* fired: the memory holds no pending event */
}

static void new_then_event_free(struct event_base *base)
{
	struct event *ev = event_new(base, -1, EV_PERSIST, on_event, NULL);

	event_add(ev, &later);
	event_free(ev);	/* deletes it */
}

static void base_free_owns(struct event_base *unused)
{
	struct event_base *base = event_base_new();
	struct conn *a = conn_open(base, EV_PERSIST), *b = conn_open(base, 0);

	(void)unused;
	event_base_free(base);	/* deletes a and b */
	free(a);
	free(b);
}

static void internal_events(struct event_base *base)
{
	struct bufferevent *bev;
	char buf[8];
	int sv[2];

	socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	bev = bufferevent_socket_new(base, sv[0], BEV_OPT_CLOSE_ON_FREE);
	bufferevent_enable(bev, EV_READ | EV_WRITE);
	bufferevent_write(bev, "ping", 4);
	event_base_once(base, -1, EV_TIMEOUT, on_event, NULL, &soon);
	event_base_loop(base, EVLOOP_ONCE);
	event_base_loop(base, EVLOOP_NONBLOCK);
	if (read(sv[1], buf, sizeof(buf)) < 0)
		perror("read");
	bufferevent_free(bev);
	close(sv[1]);
	event_base_loop(base, EVLOOP_ONCE);	/* the once-event fires */
}

/* What the callbacks and finalizers were given. */
static void *fired_arg[4];
static int nfired, nfinal;
static struct event *final_ev[2];
static void *final_arg[2];

static void on_fire(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	if (nfired < 4)
		fired_arg[nfired++] = arg;
}

static void on_final(struct event *ev, void *arg)
{
	if (nfinal < 2) {
		final_ev[nfinal] = ev;
		final_arg[nfinal++] = arg;
	}
}

/* The finalizer of an event inside a struct conn frees the conn. */
static void on_final_free(struct event *ev, void *arg)
{
	on_final(ev, arg);
	free(arg);
}

/* event_base_foreach_event(): the program's callback and argument. */
static int count_mine(const struct event_base *b, const struct event *e, void *arg)
{
	(void)b;
	if (event_get_callback(e) == on_fire && event_get_callback_arg(e) != e)
		(*(int *)arg)++;
	else if (event_get_callback(e) == on_fire)
		(*(int *)arg) += 100;	/* event_self_cbarg() */
	return 0;
}

static bool fired(const void *arg)
{
	int i;

	for (i = 0; i < nfired; i++)
		if (fired_arg[i] == arg)
			return true;
	return false;
}

/*
 * One-shot events made by event_assign(), event_set() and event_new()
 * (with event_self_cbarg()) read back as given, fire with their own
 * arguments, and are freed after firing.
 */
static void own_oneshots(struct event_base *base)
{
	struct conn *c = calloc(1, sizeof(*c)), *d = calloc(1, sizeof(*d));
	struct event_base *b;
	struct event *self;
	event_callback_fn cb;
	evutil_socket_t fd;
	void *arg;
	short what;
	int n = 0;

	event_assign(&c->ev, base, -1, 0, on_fire, c);
	event_get_assignment(&c->ev, &b, &fd, &what, &cb, &arg);
	CHECK(b == base && fd == -1 && what == 0 && cb == on_fire && arg == c);
	CHECK(event_get_callback(&c->ev) == on_fire);
	CHECK(event_get_callback_arg(&c->ev) == c);
	event_set(&d->ev, -1, 0, on_fire, d);
	event_base_set(base, &d->ev);
	CHECK(event_get_callback(&d->ev) == on_fire && event_get_callback_arg(&d->ev) == d);
	self = event_new(base, -1, 0, on_fire, event_self_cbarg());
	CHECK(event_get_callback(self) == on_fire && event_get_callback_arg(self) == self);
	event_add(&c->ev, &soon);
	event_add(&d->ev, &soon);
	event_add(self, &soon);
	event_base_foreach_event(base, count_mine, &n);
	CHECK(n == 102);
	while (event_base_get_num_events(base, EVENT_BASE_COUNT_ADDED) > pending_before)
		event_base_loop(base, EVLOOP_ONCE);
	CHECK(nfired == 3 && fired(c) && fired(d) && fired(self));
	free(c);		/* fired: nothing pending in the memory */
	free(d);
	event_free(self);
}

/*
 * event_finalize() of a pending one-shot event whose finalizer frees its
 * conn, and event_free_finalize() of a pending event_new() event: each
 * finalizer gets its own event and argument, and libevent's release of the
 * memory is silent.
 */
static void own_finalizers(struct event_base *base)
{
	struct conn *c = calloc(1, sizeof(*c));
	struct event *ev = event_new(base, -1, 0, on_fire, &nfinal);

	event_assign(&c->ev, base, -1, 0, on_fire, c);
	event_add(&c->ev, &later);
	event_add(ev, &later);
	event_finalize(0, &c->ev, on_final_free);
	event_free_finalize(0, ev, on_final);
	while (nfinal < 2 && event_base_loop(base, EVLOOP_ONCE) == 0)
		;
	CHECK(nfinal == 2);
	CHECK((final_ev[0] == &c->ev && final_arg[0] == c) ||
	      (final_ev[1] == &c->ev && final_arg[1] == c));
	CHECK((final_ev[0] == ev && final_arg[0] == &nfinal) ||
	      (final_ev[1] == ev && final_arg[1] == &nfinal));
	CHECK(nfired == 0);
}

/* An event in a frame: added and deleted before the frame returns. */
static void __attribute__((noinline)) stack_frame(struct event_base *base)
{
	struct event ev;

	event_assign(&ev, base, -1, EV_PERSIST, on_event, NULL);
	event_add(&ev, &later);
	event_del(&ev);
}

static void stack_event_deleted(struct event_base *base)
{
	stack_frame(base);
	free(malloc(64));	/* a call into libodebug from the caller's frame */
	stack_frame(base);	/* the same bytes, made an event again */
}

/* A conn's memory used again as a mutex, without a free in between. */
static void reused_as_mutex(struct event_base *base)
{
	union {
		struct event ev;
		pthread_mutex_t m;
	} *u = malloc(sizeof(*u));

	event_assign(&u->ev, base, -1, EV_PERSIST, on_event, NULL);
	event_add(&u->ev, &later);
	event_del(&u->ev);
	memset(u, 0, sizeof(*u));
	pthread_mutex_init(&u->m, NULL);
	pthread_mutex_lock(&u->m);
	pthread_mutex_unlock(&u->m);
	pthread_mutex_destroy(&u->m);	/* glibc marks it destroyed: kind -1 */
	free(u);
}

/* The same, the event deleted before the free. */
static void mutex_then_deleted_event(struct event_base *base)
{
	union {
		struct event ev;
		pthread_mutex_t m;
	} *u = calloc(1, sizeof(*u));

	pthread_mutex_init(&u->m, NULL);
	pthread_mutex_lock(&u->m);
	pthread_mutex_unlock(&u->m);
	event_assign(&u->ev, base, -1, EV_PERSIST, on_event, NULL);
	event_add(&u->ev, &later);
	event_del(&u->ev);
	free(u);
}

static struct event_base *shared;

static void *worker(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < 2000; i++) {
		struct conn *c = conn_open(shared, i & 1 ? EV_PERSIST : 0);

		event_active(&c->ev, EV_TIMEOUT, 0);
		event_del(&c->ev);
		free(c);
	}
	return NULL;
}

static void locked_threads(struct event_base *unused)
{
	pthread_t t[2];
	int i;

	(void)unused;
	shared = event_base_new();
	for (i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (i = 0; i < 20; i++)
		event_base_loop(shared, EVLOOP_NONBLOCK);
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	event_base_loop(shared, EVLOOP_NONBLOCK);
	event_base_free(shared);
}

/* Whether libodebug loaded the module into this process. */
static void module_mapped(struct event_base *unused)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0;

	(void)unused;
	while (f && fgets(line, sizeof(line), f))
		n += strstr(line, "libodebug-libevent.so") != NULL;
	if (f)
		fclose(f);
	printf("module %s\n", n ? "mapped" : "absent");
}

static bool fd_open(int fd)
{
	return fcntl(fd, F_GETFD) != -1;
}

static void on_read_close_then_del(evutil_socket_t fd, short what, void *arg)
{
	(void)what;
	CHECK(close(fd) == 0);
	event_del(arg);
}

/*
 * A descriptor closed while its event is pending, the event deleted or
 * freed right after (libevent's own evdns and evhttp, and its tests, do
 * this): the close is made, and nothing is reported.
 */
static void closed_then_deleted(struct event_base *base)
{
	int p[2], q[2], r[2];
	struct event *a, *b, *c;

	CHECK(!pipe(p) && !pipe(q) && !pipe(r));
	a = event_new(base, p[0], EV_READ | EV_PERSIST, on_event, NULL);
	event_add(a, NULL);
	CHECK(close(p[0]) == 0);
	CHECK(!fd_open(p[0]));
	event_del(a);
	b = event_new(base, q[0], EV_READ | EV_PERSIST, on_event, NULL);
	event_add(b, NULL);
	CHECK(close(q[0]) == 0);
	CHECK(!fd_open(q[0]));
	event_free(b);
	c = event_new(base, r[0], EV_READ | EV_PERSIST, on_read_close_then_del, NULL);
	event_assign(c, base, r[0], EV_READ | EV_PERSIST, on_read_close_then_del, c);
	event_add(c, NULL);
	CHECK(write(r[1], "x", 1) == 1);
	event_base_loop(base, EVLOOP_ONCE);
	CHECK(!fd_open(r[0]));
	event_free(a);
	event_free(c);
	close(p[1]), close(q[1]), close(r[1]);
}

static void on_read_close(evutil_socket_t fd, short what, void *arg)
{
	(void)what;
	event_free(arg);
	close(fd);
}

/* Every end of the watch before the close: silent. */
static void watch_ended_then_closed(struct event_base *base)
{
	struct event_base *other = event_base_new();
	struct event *a, *b, *c, *d, *e;
	int p[2], q[2], r[2], s[2], t[2];

	CHECK(!pipe(p) && !pipe(q) && !pipe(r) && !pipe(s) && !pipe(t));
	a = event_new(base, p[0], EV_READ | EV_PERSIST, on_event, NULL);
	event_add(a, NULL);
	event_del(a);
	CHECK(close(p[0]) == 0);
	b = event_new(base, q[0], EV_READ | EV_PERSIST, on_event, NULL);
	event_add(b, NULL);
	event_free(b);
	CHECK(close(q[0]) == 0);
	c = event_new(base, r[0], EV_READ, on_event, NULL);	/* a one-shot */
	event_add(c, NULL);
	CHECK(write(r[1], "x", 1) == 1);
	while (event_pending(c, EV_READ, NULL))
		event_base_loop(base, EVLOOP_ONCE);
	CHECK(close(r[0]) == 0);
	d = event_new(base, s[0], EV_READ | EV_PERSIST, on_read_close, NULL);
	event_assign(d, base, s[0], EV_READ | EV_PERSIST, on_read_close, d);
	event_add(d, NULL);
	CHECK(write(s[1], "x", 1) == 1);
	event_base_loop(base, EVLOOP_ONCE);
	CHECK(!fd_open(s[0]));
	e = event_new(other, t[0], EV_READ | EV_PERSIST, on_event, NULL);
	event_add(e, NULL);
	event_base_free(other);	/* deletes e */
	CHECK(close(t[0]) == 0);
	event_free(a);
	event_free(c);
	free(e);
	close(p[1]), close(q[1]), close(r[1]), close(s[1]), close(t[1]);
}

/*
 * A descriptor closed while its event stays pending: reported at the
 * loop's next poll (here event_base_dispatch()'s), with this close's
 * stack, and the fixup deletes the event.
 */
static void closed_left_pending(struct event_base *base)
{
	struct event *a;
	int p[2];

	CHECK(!pipe(p));
	a = event_new(base, p[0], EV_READ | EV_PERSIST, on_event, NULL);
	event_add(a, NULL);
	CHECK(close(p[0]) == 0);	/* the culprit: the event stays pending */
	CHECK(!fd_open(p[0]));
	event_base_loopexit(base, &soon);
	event_base_dispatch(base);
	printf("pending after the poll: %d\n", event_pending(a, EV_READ, NULL) != 0);
	event_free(a);
	close(p[1]);
}

static void on_read_close_only(evutil_socket_t fd, short what, void *arg)
{
	(void)what;
	(void)arg;
	CHECK(close(fd) == 0);	/* the culprit: no event_del() */
}

/* The event's own callback closes its descriptor and leaves it pending. */
static void callback_closes_left_pending(struct event_base *base)
{
	struct event *a;
	int p[2];

	CHECK(!pipe(p));
	a = event_new(base, p[0], EV_READ | EV_PERSIST, on_read_close_only, NULL);
	event_add(a, NULL);
	CHECK(write(p[1], "x", 1) == 1);
	event_base_loop(base, EVLOOP_ONCE);	/* the callback runs */
	CHECK(!fd_open(p[0]));
	event_base_loop(base, EVLOOP_NONBLOCK);	/* the next poll */
	printf("pending after the poll: %d\n", event_pending(a, EV_READ, NULL) != 0);
	event_free(a);
	close(p[1]);
}

static void *close_it(void *arg)
{
	CHECK(close(*(int *)arg) == 0);
	return NULL;
}

/*
 * Closes that end well before the loop polls again, or that the loop's
 * thread cannot judge: an event deleted, then added again on the file
 * that took the number; an event deleted from another base's callback;
 * a close made on a thread that runs no loop (not judged: the loop may
 * poll between that close and the event_del() that follows it).
 */
static void closed_then_readded_or_elsewhere(struct event_base *base)
{
	struct event *a, *b;
	int p[2], q[2], r[2];
	pthread_t t;

	CHECK(!pipe(p));
	a = event_new(base, p[0], EV_READ | EV_PERSIST, on_event, NULL);
	event_add(a, NULL);
	CHECK(close(p[0]) == 0);
	event_del(a);
	CHECK(!pipe(q) && q[0] == p[0]);	/* the number, taken again */
	event_assign(a, base, q[0], EV_READ | EV_PERSIST, on_event, NULL);
	event_add(a, NULL);
	event_base_loop(base, EVLOOP_NONBLOCK);
	event_del(a);
	event_add(a, NULL);
	CHECK(close(q[0]) == 0);
	event_del(a);
	CHECK(!pipe(r));
	b = event_new(base, r[0], EV_READ | EV_PERSIST, on_event, NULL);
	event_add(b, NULL);
	CHECK(!pthread_create(&t, NULL, close_it, &r[0]) && !pthread_join(t, NULL));
	event_base_loop(base, EVLOOP_NONBLOCK);
	event_free(b);
	event_free(a);
	close(p[1]), close(q[1]), close(r[1]);
}

static const struct {
	const char *name;
	void (*run)(struct event_base *);
} scenarios[] = {
	{ "drop_pending_conn", drop_pending_conn },
	{ "drop_pending_timer", drop_pending_timer },
	{ "drop_new_event", drop_new_event },
	{ "drop_readded_oneshot", drop_readded_oneshot },
	{ "drop_legacy_set", drop_legacy_set },
	{ "drop_readded_by_tail_call", drop_readded_by_tail_call },
	{ "drop_event_after_mutex", drop_event_after_mutex },
	{ "del_then_free", del_then_free },
	{ "fired_oneshot_freed", fired_oneshot_freed },
	{ "new_then_event_free", new_then_event_free },
	{ "base_free_owns", base_free_owns },
	{ "internal_events", internal_events },
	{ "locked_threads", locked_threads },
	{ "own_oneshots", own_oneshots },
	{ "stack_event_deleted", stack_event_deleted },
	{ "reused_as_mutex", reused_as_mutex },
	{ "mutex_then_deleted_event", mutex_then_deleted_event },
	{ "own_finalizers", own_finalizers },
	{ "module_mapped", module_mapped },
	{ "closed_then_deleted", closed_then_deleted },
	{ "watch_ended_then_closed", watch_ended_then_closed },
	{ "closed_left_pending", closed_left_pending },
	{ "callback_closes_left_pending", callback_closes_left_pending },
	{ "closed_then_readded_or_elsewhere", closed_then_readded_or_elsewhere },
};

int main(int argc, char **argv)
{
	struct event_base *base;
	size_t i;
	int before;

	evthread_use_pthreads();
	base = event_base_new();
	before = pending(base);	/* libevent's own (evthread's notify event) */
	pending_before = event_base_get_num_events(base, EVENT_BASE_COUNT_ADDED);
	for (i = 0; argc == 2 && i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
		if (!strcmp(argv[1], scenarios[i].name)) {
			scenarios[i].run(base);
			event_base_loop(base, EVLOOP_NONBLOCK);
			printf("end %d\n", pending(base) - before);
			event_base_free(base);
			return 0;
		}
	fprintf(stderr, "usage: evprog SCENARIO\n");
	return 2;
}
