/* SPDX-License-Identifier: MIT */
/*
 * uring.c - liburing's submitting functions interposed: the requests the
 * kernel takes from the submission ring hold their buffers until their
 * completion is posted (lib/checks/held/held-uring.c).
 *
 * liburing 2.x's prep helpers and io_uring_get_sqe are inline: the
 * requests are only seen in the ring.  Each interposer reads the kernel's
 * SQ head and CQ tail, makes the real call, and then reads the SQEs
 * between the head before and the head after: exactly the ones the
 * kernel took in this call (a call that took none, or failed, holds
 * nothing).  Disabled, one branch and a tail call; return value and errno
 * unchanged.
 *
 * libodebug exports these names in liburing's version nodes, as it does
 * glibc's: a program linked with liburing binds to ours first, and ours
 * forward to the next definition (dlvsym(RTLD_NEXT), found at the first
 * call: liburing is loaded by then, and may be loaded by dlopen long after
 * our constructor).  A program without liburing never calls them.
 *
 * Not seen: rings set up with IORING_SETUP_SQPOLL (the kernel takes SQEs
 * without a call), registered buffers (READ_FIXED, WRITE_FIXED: the
 * registration holds them, not a request), provided buffers
 * (IOSQE_BUFFER_SELECT), requests with IOSQE_CQE_SKIP_SUCCESS (no
 * completion is posted when they succeed), raw io_uring_enter system
 * calls and rings not made by liburing.  With IORING_FEAT_SUBMIT_STABLE
 * (Linux 5.5 on) the kernel copied iovec arrays and msghdrs at the
 * submit: only their buffers are held.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <liburing.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "held-io.h"
#include "interpose.h"

#define CHECKING odebug_load(&odebug_held_on)

#define VEC_MAX	4	/* buffers held per iovec array */

/* Where the ring stood before the call. */
struct before {
	unsigned int sq_head, cq_tail;
	bool skip;
};

static void look(struct io_uring *ring, struct before *s)
{
	s->skip = (ring->flags & IORING_SETUP_SQPOLL) || !odebug_held_active();
	if (s->skip)
		return;
	s->sq_head = __atomic_load_n(ring->sq.khead, __ATOMIC_ACQUIRE);
	s->cq_tail = __atomic_load_n(ring->cq.ktail, __ATOMIC_ACQUIRE);
}

/* @n bytes at @src, or false: the program's pointer may be bad (the kernel said EFAULT). */
static bool peek(void *dst, uintptr_t src, size_t n)
{
	struct iovec l = { dst, n }, r = { (void *)src, n };

	return syscall(SYS_process_vm_readv, odebug_gettid(), &l, 1UL, &r, 1UL, 0UL) == (long)n;
}

/* The buffers of an iovec array: up to VEC_MAX of them into @addrs. */
static unsigned int vec(uintptr_t iov, unsigned long cnt, uintptr_t *addrs, uint8_t *roles)
{
	struct iovec v[VEC_MAX];
	unsigned int n = 0, i;

	if (cnt > VEC_MAX)
		cnt = VEC_MAX;
	if (!cnt || !peek(v, iov, cnt * sizeof(v[0])))
		return 0;
	for (i = 0; i < cnt; i++)
		if (v[i].iov_len) {
			addrs[n] = (uintptr_t)v[i].iov_base;
			roles[n++] = ODEBUG_HELD_IO_BUFFER;
		}
	return n;
}

/* One SQE the kernel took: what it holds. */
static void took(struct io_uring *ring, const struct io_uring_sqe *sqe, unsigned int slot,
		 unsigned int t0)
{
	struct odebug_held_io_req r = {
		.family = ODEBUG_HELD_IO_URING, .op = sqe->opcode, .fd = sqe->fd,
		.key = (uintptr_t)ring->cq.ktail, .key2 = slot, .user_data = sqe->user_data,
		.cq_tail = ring->cq.ktail, .cqes = ring->cq.cqes,
		.cq_mask = *ring->cq.kring_mask, .cq_entries = *ring->cq.kring_entries,
		.cq_t0 = t0, .cqe_shift = !!(ring->flags & IORING_SETUP_CQE32),
		.fixed = !!(sqe->flags & IOSQE_FIXED_FILE), .sq_flags = ring->sq.kflags,
		.ring = (uintptr_t)ring,
	};
	bool stable = ring->features & IORING_FEAT_SUBMIT_STABLE;
	uintptr_t addrs[8];
	uint8_t roles[8];
	unsigned int n = 0;
	struct msghdr m;

	if (sqe->flags & (IOSQE_BUFFER_SELECT | IOSQE_CQE_SKIP_SUCCESS))
		return;
	switch (sqe->opcode) {
	case IORING_OP_READ:
	case IORING_OP_WRITE:
	case IORING_OP_RECV:
	case IORING_OP_SEND:
		if (!sqe->len)
			return;
		r.buf = (uintptr_t)sqe->addr;
		r.len = sqe->len;
		addrs[n] = r.buf;
		roles[n++] = ODEBUG_HELD_IO_BUFFER;
		break;
	case IORING_OP_READV:
	case IORING_OP_WRITEV:
		if (!stable) {
			addrs[n] = (uintptr_t)sqe->addr;
			roles[n++] = ODEBUG_HELD_IO_IOVEC;
		}
		n += vec((uintptr_t)sqe->addr, sqe->len, addrs + n, roles + n);
		break;
	case IORING_OP_RECVMSG:
	case IORING_OP_SENDMSG:
		if (!peek(&m, (uintptr_t)sqe->addr, sizeof(m)))
			return;
		if (!stable) {
			addrs[n] = (uintptr_t)sqe->addr;
			roles[n++] = ODEBUG_HELD_IO_MSGHDR;
			addrs[n] = (uintptr_t)m.msg_iov;
			roles[n++] = ODEBUG_HELD_IO_IOVEC;
		}
		n += vec((uintptr_t)m.msg_iov, m.msg_iovlen, addrs + n, roles + n);
		break;
	default:
		return;
	}
	if (n)
		odebug_held_io_take(&r, addrs, roles, n);
}

/* After the call: the SQEs the kernel took since @s. */
static __attribute__((noinline)) void after(struct io_uring *ring, const struct before *s)
{
	unsigned int head, mask, shift, i;
	int saved;

	if (s->skip)
		return;
	saved = errno;
	head = __atomic_load_n(ring->sq.khead, __ATOMIC_ACQUIRE);
	mask = *ring->sq.kring_mask;
	shift = !!(ring->flags & IORING_SETUP_SQE128);
	for (i = s->sq_head; i != head && i - s->sq_head <= mask; i++) {
		unsigned int slot = ring->sq.array[i & mask] & mask;

		took(ring, &ring->sq.sqes[slot << shift], slot, s->cq_tail);
	}
	errno = saved;
}

/*
 * The next definition, found at the first call (not in our constructor:
 * liburing may come later, by dlopen); its node first, then any version
 * (a copy of liburing built without versions).
 */
static void *find(const char *name, const char *node)
{
	void *p = dlvsym(RTLD_NEXT, name, node);

	return p ? p : dlsym(RTLD_NEXT, name);
}

#define URING(ret, name, node, params, args)					\
	static ret first_##name params;						\
	static ret (*next_##name) params = first_##name;			\
	static __attribute__((noinline)) ret first_##name params		\
	{									\
		ret (*p) params = (ret (*) params)find(#name, node);		\
										\
		if (!p)								\
			return (ret)-ENOSYS;					\
		__atomic_store_n(&next_##name, p, __ATOMIC_RELEASE);		\
		return p args;							\
	}									\
	static __attribute__((noinline)) ret on_##name params			\
	{									\
		struct before s;						\
		ret r;								\
										\
		look(ring, &s);							\
		r = next_##name args;						\
		after(ring, &s);						\
		return r;							\
	}									\
	ret odebug_u_##name params ODEBUG_EXPORT;				\
	ret odebug_u_##name params						\
	{									\
		if (likely(!CHECKING))						\
			return next_##name args;				\
		return on_##name args;						\
	}									\
	__asm__(".symver odebug_u_" #name "," #name "@@" node)

URING(int, io_uring_submit, "LIBURING_2.0", (struct io_uring *ring), (ring));
URING(int, io_uring_submit_and_wait, "LIBURING_2.0", (struct io_uring *ring, unsigned wait_nr),
      (ring, wait_nr));
URING(int, io_uring_wait_cqes, "LIBURING_2.0",
      (struct io_uring *ring, struct io_uring_cqe **cqe_ptr, unsigned wait_nr,
       struct __kernel_timespec *ts, sigset_t *sigmask), (ring, cqe_ptr, wait_nr, ts, sigmask));
URING(int, io_uring_wait_cqe_timeout, "LIBURING_2.0",
      (struct io_uring *ring, struct io_uring_cqe **cqe_ptr, struct __kernel_timespec *ts),
      (ring, cqe_ptr, ts));
URING(int, __io_uring_get_cqe, "LIBURING_2.0",
      (struct io_uring *ring, struct io_uring_cqe **cqe_ptr, unsigned submit, unsigned wait_nr,
       sigset_t *sigmask), (ring, cqe_ptr, submit, wait_nr, sigmask));
URING(int, io_uring_submit_and_wait_timeout, "LIBURING_2.2",
      (struct io_uring *ring, struct io_uring_cqe **cqe_ptr, unsigned wait_nr,
       struct __kernel_timespec *ts, sigset_t *sigmask), (ring, cqe_ptr, wait_nr, ts, sigmask));
URING(int, io_uring_submit_and_get_events, "LIBURING_2.3", (struct io_uring *ring), (ring));

/* io_uring_queue_exit: the ring's memory goes, and every record of it first. */
static void (*next_io_uring_queue_exit)(struct io_uring *ring);

void odebug_u_io_uring_queue_exit(struct io_uring *ring) ODEBUG_EXPORT;
void odebug_u_io_uring_queue_exit(struct io_uring *ring)
{
	void (*next)(struct io_uring *) = __atomic_load_n(&next_io_uring_queue_exit,
							   __ATOMIC_ACQUIRE);

	if (unlikely(!next)) {
		next = (void (*)(struct io_uring *))find("io_uring_queue_exit", "LIBURING_2.0");
		if (!next)
			return;
		__atomic_store_n(&next_io_uring_queue_exit, next, __ATOMIC_RELEASE);
	}
	if (unlikely(CHECKING) && odebug_held_live()) {
		int saved = errno;

		odebug_held_io_end_key(ODEBUG_HELD_IO_URING, (uintptr_t)ring->cq.ktail);
		errno = saved;
	}
	next(ring);
}
__asm__(".symver odebug_u_io_uring_queue_exit,io_uring_queue_exit@@LIBURING_2.0");
