/* SPDX-License-Identifier: MIT */
/*
 * The epoll family of held memory (lib/checks/held/held.c): memory freed while an
 * epoll set holds it as a registration's data.ptr is "free active" of
 * type epoll, named at the free, and the fixup deletes the registration
 * so the freed pointer is never delivered; every correct order is silent.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/eventfd.h>
#include <sys/wait.h>

#include "held-test.h"

struct conn {
	int fd;
	char name[44];
	long bytes;
};

static int ep, efd;

static int setup(void **state)
{
	(void)state;
	ep = epoll_create1(EPOLL_CLOEXEC);
	efd = eventfd(0, EFD_NONBLOCK);
	return ep < 0 || efd < 0;
}

static int teardown(void **state)
{
	(void)state;
	close(efd);
	close(ep);
	return 0;
}

static int reg(int set, int op, int fd, uint32_t events, void *ptr)
{
	struct epoll_event ev = { .events = events, .data.ptr = ptr };

	return epoll_ctl(set, op, fd, &ev);
}

/* The culprit: frees a connection that is still registered. */
static __attribute__((noinline)) void conn_free_registered(struct conn *c)
{
	free(c);
}

/* An event on @fd (eventfd), then the events @set returns at once. */
static int poke_and_wait(int set, int fd, struct epoll_event *out, int max)
{
	uint64_t v;

	eventfd_write(fd, 1);
	int n = epoll_wait(set, out, max, 0);
	if (read(fd, &v, sizeof(v)) < 0)
		v = 0;
	return n;
}

/*
 * Freed while registered: reported at the free, with the holder; after
 * the fixup the registration is gone, the block is reused intact, and an
 * event on the descriptor delivers nothing.
 */
static void free_while_registered_is_reported_and_deleted(void **state)
{
	struct conn *c = malloc(sizeof(*c)), *again;
	struct epoll_event out[4];
	char holder[80];

	(void)state;
	assert_int_equal(reg(ep, EPOLL_CTL_ADD, efd, EPOLLIN, c), 0);
	snprintf(holder, sizeof(holder), "holder: registered on epoll fd %d for fd %d, data.ptr %p",
		 ep, efd, (void *)c);
	EXPECT_HELD_REPORT("conn_free_registered", conn_free_registered(c),
			   "object type: epoll", holder);
	again = malloc(sizeof(*again));
	assert_ptr_equal(again, c);	/* glibc's tcache hands the block back */
	memset(again, 0x5a, sizeof(*again));
	EXPECT_SILENT(assert_int_equal(poke_and_wait(ep, efd, out, 4), 0));
	for (size_t i = 0; i < sizeof(*again); i++)
		assert_int_equal(((unsigned char *)again)[i], 0x5a);
	/* The registration is gone: ADD works again. */
	assert_int_equal(reg(ep, EPOLL_CTL_ADD, efd, EPOLLIN, again), 0);
	assert_int_equal(epoll_ctl(ep, EPOLL_CTL_DEL, efd, NULL), 0);
	EXPECT_SILENT(free(again));
}

/* A MOD from a descriptor number to a pointer holds it; realloc is a free too. */
static void mod_to_pointer_then_realloc_is_reported(void **state)
{
	struct conn *c = malloc(sizeof(*c));
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = efd };

	(void)state;
	assert_int_equal(epoll_ctl(ep, EPOLL_CTL_ADD, efd, &ev), 0);
	assert_int_equal(reg(ep, EPOLL_CTL_MOD, efd, EPOLLIN, c), 0);
	EXPECT_HELD_REPORT("mod_to_pointer_then_realloc_is_reported",
			   c = realloc(c, 1 << 20), "object type: epoll");
	assert_int_equal(epoll_ctl(ep, EPOLL_CTL_DEL, efd, NULL), -1);	/* the fixup's */
	free(c);
}

/* One-shot: delivered, then re-armed by MOD: held again. */
static void oneshot_rearmed_is_held_again(void **state)
{
	struct conn *c = malloc(sizeof(*c));
	struct epoll_event out[4];

	(void)state;
	assert_int_equal(reg(ep, EPOLL_CTL_ADD, efd, EPOLLIN | EPOLLONESHOT, c), 0);
	assert_int_equal(poke_and_wait(ep, efd, out, 4), 1);
	assert_ptr_equal(out[0].data.ptr, c);
	assert_int_equal(reg(ep, EPOLL_CTL_MOD, efd, EPOLLIN | EPOLLONESHOT, c), 0);
	EXPECT_HELD_REPORT("conn_free_registered", conn_free_registered(c),
			   "object type: epoll", "(EPOLLONESHOT)");
	assert_int_equal(poke_and_wait(ep, efd, out, 4), 0);
}

/* Two sets hold one connection: one report, both registrations deleted. */
static void two_sets_one_report_both_deleted(void **state)
{
	int ep2 = epoll_create1(0);
	struct conn *c = malloc(sizeof(*c));
	struct epoll_event out[4];

	(void)state;
	assert_int_equal(reg(ep, EPOLL_CTL_ADD, efd, EPOLLIN, c), 0);
	assert_int_equal(reg(ep2, EPOLL_CTL_ADD, efd, EPOLLIN, c), 0);
	EXPECT_HELD_REPORT("conn_free_registered", conn_free_registered(c),
			   "object type: epoll", "and 1 more");
	assert_int_equal(poke_and_wait(ep, efd, out, 4), 0);
	assert_int_equal(poke_and_wait(ep2, efd, out, 4), 0);
	close(ep2);
}

/*
 * Closing an epoll set ends its own registrations' holds only: sets that
 * register the same descriptor, and sets beside it, keep theirs.  Each
 * set also registers 40 descriptors of its own (more than a close drops
 * in one batch).
 */
#define SETS	8
#define OWN	40

static void closing_a_set_keeps_the_other_sets_holds(void **state)
{
	int set[SETS], fds[OWN], i, j;
	struct conn *shared[SETS], *own[SETS][OWN];
	struct stats_delta d;

	(void)state;
	for (j = 0; j < OWN; j++)
		fds[j] = eventfd(0, 0);
	for (i = 0; i < SETS; i++) {
		set[i] = epoll_create1(0);
		shared[i] = malloc(sizeof(struct conn));
		assert_int_equal(reg(set[i], EPOLL_CTL_ADD, efd, EPOLLIN, shared[i]), 0);
		for (j = 0; j < OWN; j++) {
			own[i][j] = malloc(sizeof(struct conn));
			assert_int_equal(reg(set[i], EPOLL_CTL_ADD, fds[j], EPOLLIN, own[i][j]), 0);
		}
	}
	for (i = 0; i < SETS; i += 2)
		close(set[i]);
	for (i = 0; i < SETS; i++) {
		if (i % 2 == 0) {
			EXPECT_SILENT({
				free(shared[i]);
				for (j = 0; j < OWN; j++)
					free(own[i][j]);
			});
			continue;
		}
		/* Counted, not matched by text: a report repeated from here is not printed again. */
		stats_mark();
		capture_start();
		conn_free_registered(shared[i]);
		conn_free_registered(own[i][OWN - 1]);
		free(capture_stop());
		d = stats_delta();
		assert_int_equal(d.warnings, 2);
		assert_int_equal(d.fixups, 2);
		close(set[i]);
		EXPECT_SILENT({
			for (j = 0; j < OWN - 1; j++)
				free(own[i][j]);
		});
	}
	for (j = 0; j < OWN; j++)
		close(fds[j]);
}

/*
 * Two sets whose descriptor numbers share a list in the store's index by
 * set (the hash of lib/checks/held/held-store.h, odebug_hold_hash()): closing one
 * ends the other's holds neither.  Skipped when no such pair is below
 * the descriptor limit.
 */
static uint32_t store_hash(uint64_t v)
{
	return (uint32_t)((v * 0x9e3779b97f4a7c15ull) >> (64 - 14));
}

static void sets_sharing_a_list_keep_their_own_holds(void **state)
{
	struct rlimit rl;
	struct conn *p = malloc(sizeof(*p)), *q = malloc(sizeof(*q));
	struct stats_delta d;
	int a, b = 0, x, y;

	(void)state;
	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur > 65536)
		rl.rlim_cur = 65536;
	for (a = 100; a < 200 && !b; a++)
		for (b = a + 1; b < (int)rl.rlim_cur && store_hash((uint64_t)a) != store_hash((uint64_t)b); b++)
			;
	if (!b || b >= (int)rl.rlim_cur) {
		free(p);
		free(q);
		skip();
	}
	a--;
	x = epoll_create1(0);
	y = epoll_create1(0);
	assert_int_equal(dup2(x, a), a);
	assert_int_equal(dup2(y, b), b);
	close(x);
	close(y);
	assert_int_equal(reg(a, EPOLL_CTL_ADD, efd, EPOLLIN, p), 0);
	assert_int_equal(reg(b, EPOLL_CTL_ADD, efd, EPOLLIN, q), 0);
	close(a);
	EXPECT_SILENT(free(p));
	stats_mark();
	capture_start();
	conn_free_registered(q);
	free(capture_stop());
	d = stats_delta();
	assert_int_equal(d.warnings, 1);
	close(b);
}

/* With origins=1 (the suite's second run), the report shows where the hold was taken. */
static void origins_show_the_registration(void **state)
{
	struct conn *c = malloc(sizeof(*c));
	const char *o = getenv("ODEBUG_OPTIONS");

	(void)state;
	if (!o || !strstr(o, "origins=1")) {	/* the first run: another case shows the rest */
		free(c);
		return;
	}
	assert_int_equal(reg(ep, EPOLL_CTL_ADD, efd, EPOLLIN, c), 0);
	EXPECT_HELD_REPORT("conn_free_registered", conn_free_registered(c),
			   "object activated at:", "reg");
}

/* --- must not be reported ------------------------------------------- */

static void correct_orders_are_silent(void **state)
{
	struct conn *c;
	int ep2, fd2;

	(void)state;
	EXPECT_SILENT({	/* DEL, then free */
		c = malloc(sizeof(*c));
		reg(ep, EPOLL_CTL_ADD, efd, EPOLLIN, c);
		epoll_ctl(ep, EPOLL_CTL_DEL, efd, NULL);
		free(c);
	});
	EXPECT_SILENT({	/* close of the registered descriptor, then free */
		c = malloc(sizeof(*c));
		fd2 = eventfd(0, 0);
		reg(ep, EPOLL_CTL_ADD, fd2, EPOLLIN, c);
		close(fd2);
		free(c);
	});
	EXPECT_SILENT({	/* close of the epoll set, then free */
		c = malloc(sizeof(*c));
		ep2 = epoll_create1(0);
		reg(ep2, EPOLL_CTL_ADD, efd, EPOLLIN, c);
		close(ep2);
		free(c);
	});
	EXPECT_SILENT({	/* MOD to another value, then free */
		struct conn *d = malloc(sizeof(*d));

		c = malloc(sizeof(*c));
		reg(ep, EPOLL_CTL_ADD, efd, EPOLLIN, c);
		reg(ep, EPOLL_CTL_MOD, efd, EPOLLIN, d);
		free(c);
		epoll_ctl(ep, EPOLL_CTL_DEL, efd, NULL);
		free(d);
	});
	EXPECT_SILENT({	/* a failed ADD holds nothing */
		c = malloc(sizeof(*c));
		assert_int_equal(reg(ep, EPOLL_CTL_ADD, 12345, EPOLLIN, c), -1);
		assert_int_equal(errno, EBADF);
		free(c);
	});
}

static void oneshot_delivered_is_silent(void **state)
{
	struct conn *c = malloc(sizeof(*c));
	struct epoll_event out[4];

	(void)state;
	EXPECT_SILENT({
		reg(ep, EPOLL_CTL_ADD, efd, EPOLLIN | EPOLLONESHOT, c);
		assert_int_equal(poke_and_wait(ep, efd, out, 4), 1);
		free(c);	/* disabled in the kernel until a MOD */
	});
	epoll_ctl(ep, EPOLL_CTL_DEL, efd, NULL);
}

/* data.fd, u32 and u64 values are not pointers; nothing frees them. */
static void fd_u32_u64_registrations_are_silent(void **state)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int fds[3];
	char *blocks[64];

	(void)state;
	EXPECT_SILENT({
		for (int i = 0; i < 3; i++)
			fds[i] = eventfd(0, 0);
		memset(&ev.data, 0xff, sizeof(ev.data));	/* data.fd leaves the upper half */
		ev.data.fd = fds[0];
		epoll_ctl(ep, EPOLL_CTL_ADD, fds[0], &ev);
		ev.data.u32 = 7;
		epoll_ctl(ep, EPOLL_CTL_ADD, fds[1], &ev);
		ev.data.u64 = 0x1234;
		epoll_ctl(ep, EPOLL_CTL_ADD, fds[2], &ev);
		for (int i = 0; i < 64; i++)
			blocks[i] = malloc(24 + 16 * i);
		for (int i = 0; i < 64; i++)
			free(blocks[i]);
		for (int i = 0; i < 3; i++)
			close(fds[i]);
	});
}

/* The same memory registered again after a free and a reuse. */
static void reregistered_after_reuse_is_silent(void **state)
{
	(void)state;
	EXPECT_SILENT({
		for (int i = 0; i < 100; i++) {
			struct conn *c = malloc(sizeof(*c));

			reg(ep, EPOLL_CTL_ADD, efd, EPOLLIN, c);
			if (i % 2)
				epoll_ctl(ep, EPOLL_CTL_DEL, efd, NULL);
			else
				reg(ep, EPOLL_CTL_MOD, efd, EPOLLIN, NULL);
			free(c);
			if (!(i % 2))
				epoll_ctl(ep, EPOLL_CTL_DEL, efd, NULL);
		}
	});
}

/* Many threads registering, moving and deleting their own connections at once. */
static void *churn(void *arg)
{
	int set = *(int *)arg, fd = eventfd(0, 0);

	for (int i = 0; i < 2000; i++) {
		struct conn *c = malloc(sizeof(*c)), *d = malloc(sizeof(*d));

		reg(set, EPOLL_CTL_ADD, fd, EPOLLIN, c);
		reg(set, EPOLL_CTL_MOD, fd, EPOLLIN | (i % 3 ? 0 : EPOLLONESHOT), d);
		free(c);
		if (i % 5 == 0) {
			close(fd);
			fd = eventfd(0, 0);
		} else {
			epoll_ctl(set, EPOLL_CTL_DEL, fd, NULL);
		}
		free(d);
	}
	close(fd);
	return NULL;
}

static void concurrent_epoll_ctl_is_silent(void **state)
{
	pthread_t t[8];

	(void)state;
	EXPECT_SILENT({
		for (int i = 0; i < 8; i++)
			pthread_create(&t[i], NULL, churn, &ep);
		for (int i = 0; i < 8; i++)
			pthread_join(t[i], NULL);
	});
}

/* A fork child frees what its parent registered: the parent's hold, not its own. */
static void fork_child_is_silent(void **state)
{
	struct conn *c = malloc(sizeof(*c));
	int status;
	pid_t pid;

	(void)state;
	reg(ep, EPOLL_CTL_ADD, efd, EPOLLIN, c);
	EXPECT_SILENT({
		pid = fork();
		if (pid == 0) {
			stats_mark();
			free(c);
			_exit(stats_delta().warnings ? 1 : 0);
		}
		waitpid(pid, &status, 0);
	});
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_SILENT({
		epoll_ctl(ep, EPOLL_CTL_DEL, efd, NULL);
		free(c);
	});
}

/* A registration that went with a close we did not see (dup2 over it): asked of the kernel. */
static void unseen_close_is_silent(void **state)
{
	struct conn *c = malloc(sizeof(*c));
	int fd = eventfd(0, 0), other = eventfd(0, 0);

	(void)state;
	EXPECT_SILENT({
		reg(ep, EPOLL_CTL_ADD, fd, EPOLLIN, c);
		dup2(other, fd);	/* closes the registered file: the kernel's registration goes */
		free(c);
	});
	close(fd);
	close(other);
}

/*
 * A one-shot registration's event taken through a dup() of the set's
 * descriptor: the kernel disabled it all the same, so it holds nothing.
 */
static void oneshot_delivered_through_a_dup_is_silent(void **state)
{
	struct conn *c = malloc(sizeof(*c));
	struct epoll_event out[4];
	int ep2 = dup(ep);

	(void)state;
	EXPECT_SILENT({
		reg(ep, EPOLL_CTL_ADD, efd, EPOLLIN | EPOLLONESHOT, c);
		assert_int_equal(poke_and_wait(ep2, efd, out, 4), 1);
		free(c);	/* disabled in the kernel until a MOD */
	});
	epoll_ctl(ep, EPOLL_CTL_DEL, efd, NULL);
	close(ep2);
}

/*
 * The same with every descriptor in use when the free comes (a server at
 * its limit): the set's fdinfo cannot be opened, and an unknown answer
 * is no report.
 */
static void unseen_close_at_the_descriptor_limit_is_silent(void **state)
{
	struct conn *c = malloc(sizeof(*c));
	int fd = eventfd(0, 0), other = eventfd(0, 0), fill[256], n = 0;
	struct rlimit old, lim;
	struct stats_delta d;

	(void)state;
	reg(ep, EPOLL_CTL_ADD, fd, EPOLLIN, c);
	dup2(other, fd);	/* the kernel's registration goes, unseen */
	getrlimit(RLIMIT_NOFILE, &old);
	lim = old;
	lim.rlim_cur = (rlim_t)(other > fd ? other : fd) + 64;
	setrlimit(RLIMIT_NOFILE, &lim);
	while (n < 256 && (fill[n] = dup(0)) >= 0)
		n++;
	assert_true(n < 256);
	stats_mark();	/* no capture: it would need a descriptor */
	free(c);
	d = stats_delta();
	while (n > 0)
		close(fill[--n]);
	setrlimit(RLIMIT_NOFILE, &old);
	close(fd);
	close(other);
	assert_int_equal(d.warnings, 0);
}

/*
 * An epoll set closed by a call not interposed (close_range): its
 * registrations are gone with it, and /proc has no fdinfo for it.
 */
static void set_closed_unseen_is_silent(void **state)
{
	struct conn *c = malloc(sizeof(*c));
	int set = epoll_create1(0);

	(void)state;
	EXPECT_SILENT({
		reg(set, EPOLL_CTL_ADD, efd, EPOLLIN, c);
		assert_int_equal(close_range((unsigned int)set, (unsigned int)set, 0), 0);
		free(c);
	});
}

/* Registering with pointers in a loop, so that a fork often lands while the records' lock is held. */
static volatile int forking;

static void *register_loop(void *arg)
{
	int set = epoll_create1(0), fd = eventfd(0, 0);
	struct conn *c = malloc(sizeof(*c));

	(void)arg;
	while (__atomic_load_n(&forking, __ATOMIC_RELAXED)) {
		reg(set, EPOLL_CTL_ADD, fd, EPOLLIN, c);
		epoll_ctl(set, EPOLL_CTL_DEL, fd, NULL);
	}
	free(c);
	close(fd);
	close(set);
	return NULL;
}

/*
 * fork() while other threads register: each child closes a registered
 * descriptor (async-signal-safe, as a child of a threaded process may)
 * and exits; none may wait for a lock another thread held at the fork.
 */
static void fork_while_registering_does_not_hang(void **state)
{
	struct conn *c = malloc(sizeof(*c));
	int fd = eventfd(0, 0), hung = 0;
	pthread_t t[2];

	(void)state;
	assert_int_equal(reg(ep, EPOLL_CTL_ADD, fd, EPOLLIN, c), 0);
	forking = 1;
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, register_loop, NULL);
	for (int round = 0; round < 100 && !hung; round++) {
		pid_t pid = fork();
		int status = 0;

		if (pid == 0) {
			close(fd);
			_exit(0);
		}
		for (int ms = 0; ms < 5000; ms++) {
			if (waitpid(pid, &status, WNOHANG) == pid)
				break;
			if (ms == 4999) {
				hung = 1;
				kill(pid, SIGKILL);
				waitpid(pid, &status, 0);
			}
			usleep(1000);
		}
	}
	forking = 0;
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	assert_int_equal(hung, 0);
	close(fd);
	free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(free_while_registered_is_reported_and_deleted),
		cmocka_unit_test(mod_to_pointer_then_realloc_is_reported),
		cmocka_unit_test(oneshot_rearmed_is_held_again),
		cmocka_unit_test(two_sets_one_report_both_deleted),
		cmocka_unit_test(closing_a_set_keeps_the_other_sets_holds),
		cmocka_unit_test(sets_sharing_a_list_keep_their_own_holds),
		cmocka_unit_test(origins_show_the_registration),
		cmocka_unit_test(correct_orders_are_silent),
		cmocka_unit_test(oneshot_delivered_is_silent),
		cmocka_unit_test(fd_u32_u64_registrations_are_silent),
		cmocka_unit_test(reregistered_after_reuse_is_silent),
		cmocka_unit_test(concurrent_epoll_ctl_is_silent),
		cmocka_unit_test(fork_child_is_silent),
		cmocka_unit_test(unseen_close_is_silent),
		cmocka_unit_test(oneshot_delivered_through_a_dup_is_silent),
		cmocka_unit_test(unseen_close_at_the_descriptor_limit_is_silent),
		cmocka_unit_test(set_closed_unseen_is_silent),
		cmocka_unit_test(fork_while_registering_does_not_hang),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
