/* SPDX-License-Identifier: MIT */
/*
 * held-io.h - memory held by asynchronous I/O in flight: POSIX AIO (the
 * aiocb and its buffer, lib/checks/held/held-aio.c) and io_uring requests submitted
 * through liburing (their buffers, iovec arrays and msghdrs,
 * lib/checks/held/held-uring.c).  A request is held until it completed, which each
 * family asks at the free check (aio_error, the completion ring): no
 * completion call is watched, so a request nobody waits for is still
 * judged exactly.
 *
 * lib/checks/held/held-io.c keeps their records, in lib/checks/held/held-store.c's store: one
 * per held 8-byte word (the aiocb, a
 * buffer, an iovec array...), each naming its request.  The tracker of a
 * word sits at its byte 7 (held.h's scheme: the families of lib/checks/held/held.c
 * count up from 1, these two share the last offset), ACTIVE while a
 * record holds the word; a free that covers it asks the family whether
 * the request is still in flight before anything is reported.
 */
#ifndef ODEBUG_HELD_IO_H
#define ODEBUG_HELD_IO_H

#include <stdbool.h>
#include <stdint.h>

#include "held.h"

#define ODEBUG_HELD_IO_OFFSET	7	/* the tracker: the word's last byte */

enum odebug_held_io_family {
	ODEBUG_HELD_IO_AIO = 1,
	ODEBUG_HELD_IO_URING = 2,
};

enum odebug_held_io_role {
	ODEBUG_HELD_IO_BUFFER,
	ODEBUG_HELD_IO_AIOCB,
	ODEBUG_HELD_IO_IOVEC,
	ODEBUG_HELD_IO_MSGHDR,
};

/* One request, as a record keeps it (a copy per held word). */
struct odebug_held_io_req {
	uint8_t family, op;		/* op: the family's own code (LIO_READ, IORING_OP_READ) */
	int fd;
	uint64_t key, key2;		/* aio: the aiocb; io_uring: the ring's CQ and the SQ slot */
	uint64_t user_data;		/* io_uring */
	const unsigned int *cq_tail;	/* io_uring: the kernel's CQ tail */
	const void *cqes;		/* io_uring: the CQ entries */
	unsigned int cq_mask, cq_entries, cq_t0;	/* t0: the CQ tail before the submit */
	uint8_t cqe_shift;		/* 1: 32-byte CQEs (IORING_SETUP_CQE32) */
	uint8_t fixed;			/* io_uring: fd is a registered file's index */
	const unsigned int *sq_flags;	/* io_uring: the kernel's SQ flags (CQ overflow) */
	uintptr_t ring;			/* io_uring: the program's struct io_uring */
	unsigned long len;		/* the buffer's bytes */
	uintptr_t buf;			/* the buffer (for the report) */
};

extern ODEBUG_HIDDEN const struct debug_obj_descr odebug_aio_descr, odebug_uring_descr;

/* The request @r holds @addrs (@roles): replaces what the same request key held. */
void odebug_held_io_take(const struct odebug_held_io_req *r, const uintptr_t *addrs,
			 const uint8_t *roles, unsigned int n);
/* Every request of @family whose key is @key ends (a ring torn down). */
void odebug_held_io_end_key(int family, uint64_t key);

/* lib/checks/held/held.c's dispatch: one of ours? */
static inline bool odebug_held_io_descr(const struct debug_obj_descr *d)
{
	return d == &odebug_aio_descr || d == &odebug_uring_descr;
}
bool odebug_held_io_released(const struct odebug_snapshot *o);
bool odebug_held_io_describe(const struct odebug_snapshot *o, char *buf, size_t cap);

/* What each family says (lib/checks/held/held-aio.c, lib/checks/held/held-uring.c): no lock held. */
bool odebug_held_aio_live(const struct odebug_held_io_req *r);
void odebug_held_aio_fixup(const struct odebug_held_io_req *r);
void odebug_held_aio_describe(const struct odebug_held_io_req *r, uint8_t role,
			      struct odebug_buf *b);
bool odebug_held_uring_live(const struct odebug_held_io_req *r);
void odebug_held_uring_describe(const struct odebug_held_io_req *r, uint8_t role,
				struct odebug_buf *b);

/* What preload/aio.c gives lib/checks/held/held-aio.c: glibc's aio_error and aio_cancel. */
struct odebug_held_aio_ops {
	int (*error)(const void *aiocb);
	int (*cancel)(int fd, void *aiocb);
};
extern ODEBUG_HIDDEN const struct odebug_held_aio_ops *odebug_held_aio_ops;

/* The AIO events (preload/aio.c), after the real call succeeded. */
void odebug_held_aio_submit(const void *aiocb, int op);

#endif /* ODEBUG_HELD_IO_H */
