/* SPDX-License-Identifier: MIT */
/*
 * held-io.c - what holding AIO and io_uring buffers adds to a submission:
 * the mean time of one aio_read() and of one io_uring_submit() of one
 * read (the submitting call alone, the wait outside the clock), over N
 * requests on a file of the page cache.  Run it with ODEBUG unset and
 * with ODEBUG=1 (bench/held-io.sh does).
 */
#define _GNU_SOURCE
#include <aio.h>
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "bench-stats.h"

#define N 20000

int main(int argc, char **argv)
{
	int fd = open(argc > 1 ? argv[1] : "/proc/self/exe", O_RDONLY);
	static char buf[16][512];
	struct io_uring ring;
	double t, aio = 0, uring = 0;
	int i;

	if (fd < 0 || io_uring_queue_init(8, &ring, 0))
		return 1;
	for (i = 0; i < N; i++) {
		struct aiocb cb = { .aio_fildes = fd, .aio_buf = buf[i % 16], .aio_nbytes = 512 };
		const struct aiocb *l[1] = { &cb };

		t = bench_ns(CLOCK_MONOTONIC);
		if (aio_read(&cb))
			return 1;
		aio += bench_ns(CLOCK_MONOTONIC) - t;
		while (aio_error(&cb) == EINPROGRESS)
			aio_suspend(l, 1, NULL);
	}
	for (i = 0; i < N; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
		struct io_uring_cqe *cqe;

		io_uring_prep_read(sqe, fd, buf[i % 16], 512, 0);
		t = bench_ns(CLOCK_MONOTONIC);
		if (io_uring_submit(&ring) != 1)
			return 1;
		uring += bench_ns(CLOCK_MONOTONIC) - t;
		io_uring_wait_cqe(&ring, &cqe);
		io_uring_cqe_seen(&ring, cqe);
	}
	printf("aio_read %.0f ns, io_uring_submit %.0f ns (mean of %d)\n", aio / N, uring / N, N);
	io_uring_queue_exit(&ring);
	return 0;
}
