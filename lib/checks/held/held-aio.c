/* SPDX-License-Identifier: MIT */
/*
 * held-aio.c - POSIX AIO as held memory (held-io.h): aio_read, aio_write,
 * aio_fsync and lio_listio hand glibc an aiocb, which glibc writes its
 * result into when the request ends, and a buffer the request reads into
 * or writes from.  Both are held until aio_error() stops saying
 * EINPROGRESS: glibc itself answers at the free check, so a request that
 * ended is never reported, whether or not the program called aio_error
 * or aio_return.  The fixup is aio_cancel(); a request glibc's helper
 * thread already runs cannot be cancelled (AIO_NOTCANCELED), and the
 * fixup says that it still writes.
 */
#define _GNU_SOURCE
#include <aio.h>
#include <errno.h>

#include "held-io.h"

const struct odebug_held_aio_ops *odebug_held_aio_ops;

/* After a successful submission of @aiocb (@op: LIO_READ, LIO_WRITE, LIO_NOP for fsync). */
void odebug_held_aio_submit(const void *aiocb, int op)
{
	const struct aiocb *cb = aiocb;
	struct odebug_held_io_req r = {
		.family = ODEBUG_HELD_IO_AIO, .op = (uint8_t)op, .fd = cb->aio_fildes,
		.key = (uintptr_t)cb, .len = op == LIO_NOP ? 0 : cb->aio_nbytes,
		.buf = op == LIO_NOP ? 0 : (uintptr_t)cb->aio_buf,
	};
	uintptr_t addrs[2] = { (uintptr_t)cb, r.len ? r.buf : 0 };
	uint8_t roles[2] = { ODEBUG_HELD_IO_AIOCB, ODEBUG_HELD_IO_BUFFER };

	odebug_held_io_take(&r, addrs, roles, 2);
}

/* In flight while glibc's aio_error says EINPROGRESS (its lock, one load). */
bool odebug_held_aio_live(const struct odebug_held_io_req *r)
{
	int saved = errno;
	bool inflight;

	if (!odebug_held_aio_ops)
		return false;
	inflight = odebug_held_aio_ops->error((const void *)(uintptr_t)r->key) == EINPROGRESS;
	errno = saved;
	return inflight;
}

static const char *op_name(int op)
{
	return op == LIO_READ ? "read" : op == LIO_WRITE ? "write" : "fsync";
}

/* The fixup: cancelled, or said to go on. */
void odebug_held_aio_fixup(const struct odebug_held_io_req *r)
{
	struct odebug_buf b;
	int saved = errno, ret;

	ret = odebug_held_aio_ops->cancel(r->fd, (void *)(uintptr_t)r->key);
	errno = saved;
	if (ret != AIO_NOTCANCELED)
		return;
	odebug_buf_init(&b, 2);
	odebug_puts(&b, ODEBUG_PREFIX "aio_cancel: AIO_NOTCANCELED: the aio ");
	odebug_puts(&b, op_name(r->op));
	odebug_puts(&b, " on fd ");
	odebug_put_dec(&b, (unsigned long)r->fd);
	odebug_puts(&b, " runs on: ");
	if (r->op == LIO_READ)
		odebug_puts(&b, "the kernel will still write into the buffer, and ");
	odebug_puts(&b, "glibc will still write its result into the aiocb ");
	odebug_put_hex(&b, (uintptr_t)r->key);
	odebug_puts(&b, "\n");
	odebug_flush(&b);
}

/* "aio read on fd 3, aiocb 0x..., buffer 0x... (4096 bytes)" */
void odebug_held_aio_describe(const struct odebug_held_io_req *r, uint8_t role,
			      struct odebug_buf *b)
{
	(void)role;
	odebug_puts(b, "aio ");
	odebug_puts(b, op_name(r->op));
	odebug_puts(b, " on fd ");
	odebug_put_dec(b, (unsigned long)r->fd);
	odebug_puts(b, ", aiocb ");
	odebug_put_hex(b, (uintptr_t)r->key);
	if (r->len) {
		odebug_puts(b, ", buffer ");
		odebug_put_hex(b, r->buf);
		odebug_puts(b, " (");
		odebug_put_dec(b, r->len);
		odebug_puts(b, " bytes)");
	}
	odebug_puts(b, " in flight");
}
