/* SPDX-License-Identifier: MIT */
/*
 * The io_uring family of held memory (lib/checks/held/held-uring.c): a buffer freed
 * while a request submitted through liburing still has it (no completion
 * posted) is "free active" of type io_uring, named at the free.  A
 * request completed first (consumed or not), memory held again after a
 * correct release, and a fork child's free are silent, as is (no crash)
 * the free of a buffer whose ring was unmapped without
 * io_uring_queue_exit.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "held-test.h"

static struct io_uring ring;

static int setup(void **state)
{
	(void)state;
	return io_uring_queue_init(8, &ring, 0) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	io_uring_queue_exit(&ring);
	return 0;
}

/* The culprit: frees a buffer a request still has. */
static __attribute__((noinline)) void buf_free(void *p)
{
	free(p);
}

static void finish(int wfd, unsigned int n)
{
	struct io_uring_cqe *cqe;

	if (wfd >= 0)
		assert_int_equal(write(wfd, "xxxxxxxx", 8), 8);
	while (n--) {
		assert_int_equal(io_uring_wait_cqe(&ring, &cqe), 0);
		io_uring_cqe_seen(&ring, cqe);
	}
}

/* A read from an empty pipe: reported at the free with its holder. */
static void pending_read_freed_is_reported(void **state)
{
	char *buf = malloc(64), holder[160];
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
	int p[2];

	(void)state;
	assert_int_equal(pipe(p), 0);
	io_uring_prep_read(sqe, p[0], buf, 64, 0);
	io_uring_sqe_set_data64(sqe, 42);
	assert_int_equal(io_uring_submit(&ring), 1);
	snprintf(holder, sizeof(holder),
		 "holder: io_uring read on fd %d (ring %p), user_data 0x2a, buffer %p (64 bytes)",
		 p[0], (void *)&ring, (void *)buf);
	EXPECT_HELD_REPORT("buf_free", buf_free(buf), "object type: io_uring", holder);
	buf = malloc(64);	/* the same block, most likely: the late read lands there */
	finish(p[1], 1);
	free(buf);
	close(p[0]);
	close(p[1]);
}

/* readv: each buffer of the iovec array is held. */
static void pending_readv_buffer_is_reported(void **state)
{
	char *a = malloc(32), *b = malloc(32);
	struct iovec iov[2] = { { a, 32 }, { b, 32 } };
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
	int p[2];

	(void)state;
	assert_int_equal(pipe(p), 0);
	io_uring_prep_readv(sqe, p[0], iov, 2, 0);
	assert_int_equal(io_uring_submit(&ring), 1);
	EXPECT_HELD_REPORT("buf_free", buf_free(b), "object type: io_uring",
			   "holder: io_uring readv on fd");
	b = malloc(32);		/* the same block, most likely: the late read lands there */
	finish(p[1], 1);
	free(a);
	free(b);
	close(p[0]);
	close(p[1]);
}

/* Completed then freed: consumed, not yet consumed, and the block held again. */
static void completed_then_freed_is_silent(void **state)
{
	int fd = open("/proc/self/exe", O_RDONLY);

	(void)state;
	assert_true(fd >= 0);
	EXPECT_SILENT({
		for (int i = 0; i < 40; i++) {
			char *buf = malloc(64);
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
			struct io_uring_cqe *cqe;

			io_uring_prep_read(sqe, fd, buf, 64, 0);
			io_uring_sqe_set_data64(sqe, 7);	/* the same user_data each time */
			assert_int_equal(io_uring_submit_and_wait(&ring, 1), 1);
			assert_int_equal(io_uring_peek_cqe(&ring, &cqe), 0);
			if (i & 1)
				io_uring_cqe_seen(&ring, cqe);
			free(buf);	/* done: consumed or not */
			if (!(i & 1))
				io_uring_cqe_seen(&ring, cqe);
		}
	});
	close(fd);
}

/* A fork child has none of its parent's requests. */
static void fork_child_is_silent(void **state)
{
	char *buf = malloc(64);
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
	int p[2], status;
	pid_t pid;

	(void)state;
	assert_int_equal(pipe(p), 0);
	io_uring_prep_read(sqe, p[0], buf, 64, 0);
	assert_int_equal(io_uring_submit(&ring), 1);
	pid = fork();
	if (pid == 0) {
		stats_mark();
		free(buf);
		_exit(stats_delta().warnings ? 1 : 0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	finish(p[1], 1);
	EXPECT_SILENT(free(buf));
	close(p[0]);
	close(p[1]);
}

/*
 * A ring unmapped by hand, without io_uring_queue_exit: what the request
 * became cannot be read any more, so its buffer's free is silent (a
 * missed report, never a crash in free()).
 */
static void ring_unmapped_unseen_is_silent(void **state)
{
	char *buf = malloc(64);
	struct io_uring r;
	struct io_uring_sqe *sqe;
	int p[2];

	(void)state;
	assert_int_equal(io_uring_queue_init(4, &r, 0), 0);
	assert_int_equal(pipe(p), 0);
	sqe = io_uring_get_sqe(&r);
	io_uring_prep_read(sqe, p[0], buf, 64, 0);
	assert_int_equal(io_uring_submit(&r), 1);
	assert_int_equal(munmap(r.sq.sqes, r.sq.ring_entries * sizeof(struct io_uring_sqe)), 0);
	if (r.cq.ring_ptr != r.sq.ring_ptr)
		assert_int_equal(munmap(r.cq.ring_ptr, r.cq.ring_sz), 0);
	assert_int_equal(munmap(r.sq.ring_ptr, r.sq.ring_sz), 0);
	EXPECT_SILENT(free(buf));
	close(r.ring_fd);
	close(p[0]);
	close(p[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pending_read_freed_is_reported),
		cmocka_unit_test(pending_readv_buffer_is_reported),
		cmocka_unit_test(completed_then_freed_is_silent),
		cmocka_unit_test(fork_child_is_silent),
		cmocka_unit_test(ring_unmapped_unseen_is_silent),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
