/* SPDX-License-Identifier: MIT */
/*
 * held-uring.c - io_uring requests as held memory (held-io.h): a read,
 * write, readv, writev, recv, send, recvmsg or sendmsg submitted through
 * liburing holds its buffers until its completion is posted to the
 * completion ring.  preload/uring.c reads the requests the kernel took
 * from the submission ring; this file answers the free check.
 *
 * Done or not is read from the completion ring itself, which stays mapped
 * until io_uring_queue_exit (interposed: the ring's records end there).
 * The kernel posts a request's completion after its submission, at a CQ
 * index at or past the tail seen before the submit (t0); completions the
 * program consumed stay in the ring's memory until the kernel wraps round
 * and writes over them.  So: a CQE with the request's user_data between
 * t0 and the tail means done; none, with the ring not wrapped past t0,
 * means still in flight.  Anything less certain counts as done (a missed
 * report, never a false one): the ring wrapped past t0, completions
 * waiting in the kernel's overflow list, another request with the same
 * user_data completing first.
 */
#define _GNU_SOURCE
#include <stddef.h>

#include "held-io.h"

#define IORING_SQ_CQ_OVERFLOW_	(1U << 1)	/* <linux/io_uring.h>'s */

struct cqe16 {
	uint64_t user_data;
	int32_t res;
	uint32_t flags;
};

/*
 * The ring's words are read through odebug_read_mem() first: a ring the
 * program unmapped without io_uring_queue_exit (or while it was inside
 * libodebug, where the call goes unseen) is gone, and what its request
 * became cannot be known (done, as anything uncertain).  A ring still
 * mapped whole is then read in place.
 */
static bool ring_mapped(const struct odebug_held_io_req *r)
{
	size_t last = ((size_t)r->cq_mask << (4 + r->cqe_shift)) + sizeof(struct cqe16) - 1;
	unsigned int word;
	char byte;

	return odebug_read_mem(&word, r->sq_flags, sizeof(word)) == sizeof(word) &&
	       odebug_read_mem(&word, r->cq_tail, sizeof(word)) == sizeof(word) &&
	       odebug_read_mem(&byte, r->cqes, 1) == 1 &&
	       odebug_read_mem(&byte, (const char *)r->cqes + last, 1) == 1;
}

/* In flight: no CQE of its user_data posted since its submit.  No lock held. */
bool odebug_held_uring_live(const struct odebug_held_io_req *r)
{
	unsigned int tail, i;
	const char *cqes = r->cqes;

	if (!ring_mapped(r))
		return false;
	if (__atomic_load_n(r->sq_flags, __ATOMIC_ACQUIRE) & IORING_SQ_CQ_OVERFLOW_)
		return false;
	tail = __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE);
	if (tail - r->cq_t0 > r->cq_entries)
		return false;	/* wrapped past: unknown */
	for (i = r->cq_t0; i != tail; i++) {
		const struct cqe16 *c = (const void *)(cqes + ((size_t)(i & r->cq_mask) <<
								(4 + r->cqe_shift)));

		if (__atomic_load_n(&c->user_data, __ATOMIC_RELAXED) == r->user_data)
			return false;
	}
	return true;
}

/* <linux/io_uring.h>'s opcodes, named as the kernel's io_uring tracepoints name them. */
static const char *op_name(int op)
{
	switch (op) {
	case 1: return "readv";
	case 2: return "writev";
	case 9: return "sendmsg";
	case 10: return "recvmsg";
	case 22: return "read";
	case 23: return "write";
	case 26: return "send";
	case 27: return "recv";
	default: return "request";
	}
}

static const char *role_name(uint8_t role)
{
	switch (role) {
	case ODEBUG_HELD_IO_IOVEC: return "iovec array";
	case ODEBUG_HELD_IO_MSGHDR: return "msghdr";
	default: return "buffer";
	}
}

/* "io_uring read on fd 5 (ring 0x...), user_data 0x..., buffer 0x... (4096 bytes)" */
void odebug_held_uring_describe(const struct odebug_held_io_req *r, uint8_t role,
				struct odebug_buf *b)
{
	odebug_puts(b, "io_uring ");
	odebug_puts(b, op_name(r->op));
	odebug_puts(b, r->fixed ? " on registered file " : " on fd ");
	odebug_put_dec(b, (unsigned long)r->fd);
	odebug_puts(b, " (ring ");
	odebug_put_hex(b, r->ring);
	odebug_puts(b, "), user_data ");
	odebug_put_hex(b, (uintptr_t)r->user_data);
	if (r->len && role == ODEBUG_HELD_IO_BUFFER) {
		odebug_puts(b, ", buffer ");
		odebug_put_hex(b, r->buf);
		odebug_puts(b, " (");
		odebug_put_dec(b, r->len);
		odebug_puts(b, " bytes)");
	} else {
		odebug_puts(b, ", its ");
		odebug_puts(b, role_name(role));
	}
	odebug_puts(b, ", not completed");
}
