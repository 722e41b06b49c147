/* SPDX-License-Identifier: MIT */
/*
 * held-io.c - memory held by asynchronous I/O in flight (held-io.h):
 * its records, the trackers' state, the query at the free check and the
 * fixup.  The families (held-aio.c, held-uring.c) say whether a request
 * is still in flight, undo it and name it.
 *
 * A record is (held word, request); a request holds one to six words
 * (an aiocb and its buffer; an iovec array and its first buffers).
 * Records are the store's (held-store.h: family ODEBUG_HOLD_IO, the
 * request kept beside), chained by request and by word.  A record stays
 * until the word's free check finds its request complete, the same
 * request key is submitted again, or its ring is torn down: nothing is
 * done when a request completes, so its tracker stays ACTIVE and the
 * free of a completed request's memory costs one query of the family
 * (aio_error, a look at the completion ring).
 *
 * A fork() child inherits the records but none of the requests: records
 * made before the fork count as complete (the store's fork generation:
 * no system call per submission).
 */
#define _GNU_SOURCE
#include "builtin.h"
#include "held-io.h"
#include "held-store.h"

#define BATCH		16

/* A copy of a record: the store's part and ours. */
struct rec {
	struct odebug_hold h;
	struct odebug_hold_io io;
};

/* The chain key of @r's records: every word of one request on one chain. */
static uint64_t chain_key(const struct odebug_held_io_req *r)
{
	return r->key * 31 + r->key2 * 4 + r->family;
}

static bool same_req(const struct odebug_held_io_req *a, const struct odebug_held_io_req *b)
{
	return a->family == b->family && a->key == b->key && a->key2 == b->key2;
}

static struct odebug_hold *add(const struct odebug_held_io_req *r, uintptr_t addr, uint8_t role)
{
	struct odebug_hold *h;
	struct odebug_hold_io *io;

	h = odebug_hold_add(ODEBUG_HOLD_IO, chain_key(r), 0, addr & ~(uintptr_t)7);
	if (!h)
		return NULL;
	io = odebug_hold_io_of(h);
	io->at = addr;
	io->role = role;
	io->r = *r;
	return h;
}

/* Records holding @word (either family's: they share its tracker).  Locked. */
static unsigned int count(uintptr_t word)
{
	return odebug_hold_holding(ODEBUG_HOLD_IO, word, 0);
}

static const struct debug_obj_descr *descr_of(int family)
{
	return family == ODEBUG_HELD_IO_AIO ? &odebug_aio_descr : &odebug_uring_descr;
}

/*
 * The tracker of @word made ACTIVE (@want, named by @family's type) or
 * INACTIVE (held.c): a tracker of the other family's type at that word
 * stands for both.
 */
static void apply(uintptr_t word, int family, bool want)
{
	odebug_held_track((void *)(word + ODEBUG_HELD_IO_OFFSET), descr_of(family),
			  descr_of(3 - family), want);
}

static bool holds(uintptr_t word, int family)
{
	unsigned int n;

	(void)family;
	odebug_hold_lock();
	n = count(word);
	odebug_hold_unlock();
	return n > 0;
}

/* The tracker agrees with the records (held.c's odebug_held_settle()). */
static void settle(uintptr_t word, int family)
{
	odebug_held_settle(word, family, holds, apply);
}

/*
 * After a successful submission: the request holds @addrs.  What the same
 * request key held before (an aiocb submitted again, an SQ slot used
 * again) ends first: the family's own rules say the old request is over.
 */
void odebug_held_io_take(const struct odebug_held_io_req *r, const uintptr_t *addrs,
			 const uint8_t *roles, unsigned int n)
{
	uintptr_t old[BATCH], now[8];
	unsigned int nold = 0, nnow = 0, i;
	struct odebug_hold *h, *next;

	if (!odebug_holds_mapped())
		return;
	odebug_hold_lock();
	for (h = odebug_hold_at(*odebug_hold_khead(ODEBUG_HOLD_IO, chain_key(r)));
	     h && nold < BATCH; h = next) {
		next = odebug_hold_at(h->knext);
		if (h->family == ODEBUG_HOLD_IO && same_req(&odebug_hold_io_of(h)->r, r))
			old[nold++] = odebug_hold_drop(h);
	}
	for (i = 0; i < n && i < 8; i++)
		if (addrs[i] && add(r, addrs[i], roles[i]))
			now[nnow++] = addrs[i] & ~(uintptr_t)7;
	odebug_hold_unlock();
	for (i = 0; i < nold; i++)
		settle(old[i], r->family);
	for (i = 0; i < nnow; i++)
		settle(now[i], r->family);
}

/* A ring torn down: every record of it goes (a rare call: all are looked at). */
void odebug_held_io_end_key(int family, uint64_t key)
{
	uintptr_t words[32];
	unsigned int n, i;
	uint32_t j;

	if (!odebug_load(&odebug_holds))
		return;
	do {
		n = 0;
		odebug_hold_lock();
		for (j = 1; j <= odebug_holds->used && n < 32; j++) {
			struct odebug_hold *h = odebug_hold_at(j);

			if (h->addr && h->family == ODEBUG_HOLD_IO &&
			    odebug_hold_io_of(h)->r.family == family &&
			    odebug_hold_io_of(h)->r.key == key)
				words[n++] = odebug_hold_drop(h);
		}
		odebug_hold_unlock();
		for (i = 0; i < n; i++)
			settle(words[i], family);
	} while (n == 32);
}

/* Copies of the records of @word; at most BATCH.  Locks. */
static unsigned int snapshot(uintptr_t word, struct rec *out)
{
	const struct odebug_hold *h;
	unsigned int n = 0;

	if (!odebug_load(&odebug_holds))
		return 0;
	odebug_hold_lock();
	for (h = odebug_hold_at(*odebug_hold_ahead(word)); h && n < BATCH;
	     h = odebug_hold_at(h->anext)) {
		if (h->addr == word && h->family == ODEBUG_HOLD_IO) {
			out[n].h = *h;
			out[n++].io = *odebug_hold_io_of(h);
		}
	}
	odebug_hold_unlock();
	return n;
}

/* Is @c's request still in flight?  Another process's (a fork parent's) never is.  No lock held. */
static bool live(const struct rec *c)
{
	if (c->h.gen != odebug_load(&odebug_hold_gen))
		return false;
	if (c->io.r.family == ODEBUG_HELD_IO_AIO)
		return odebug_held_aio_live(&c->io.r);
	return odebug_held_uring_live(&c->io.r);
}

/* Drop the record @c copied, if it is still there. */
static void drop_copy(const struct rec *c)
{
	struct odebug_hold *h;

	odebug_hold_lock();
	for (h = odebug_hold_at(*odebug_hold_ahead(c->h.addr)); h; h = odebug_hold_at(h->anext)) {
		const struct odebug_hold_io *io = odebug_hold_io_of(h);

		if (h->addr == c->h.addr && h->family == ODEBUG_HOLD_IO && io->at == c->io.at &&
		    same_req(&io->r, &c->io.r)) {
			odebug_hold_drop(h);
			break;
		}
	}
	odebug_hold_unlock();
}

/*
 * The request @c's record belongs to is over: every record of it goes,
 * not only @c's word's.  Its other words' answers would be asked of the
 * request again, and an aiocb freed first may hold anything by then.
 * The trackers of its other words are made to agree; @c's word's is the
 * free check's.
 */
static void end_req(const struct rec *c)
{
	uintptr_t words[BATCH];
	struct odebug_hold *h, *next;
	unsigned int n, i;

	do {
		n = 0;
		odebug_hold_lock();
		for (h = odebug_hold_at(*odebug_hold_khead(ODEBUG_HOLD_IO, chain_key(&c->io.r)));
		     h && n < BATCH; h = next) {
			next = odebug_hold_at(h->knext);
			if (h->family == ODEBUG_HOLD_IO && h->gen == c->h.gen &&
			    same_req(&odebug_hold_io_of(h)->r, &c->io.r))
				words[n++] = odebug_hold_drop(h);
		}
		odebug_hold_unlock();
		for (i = 0; i < n; i++)
			if (words[i] != c->h.addr)
				settle(words[i], c->io.r.family);
	} while (n == BATCH);
}

/*
 * At the free check, before "free active" is reported for one of our
 * trackers: each request holding the word is asked; the complete ones'
 * records go, each request's all at once.  True when none is in flight:
 * the free check then drops the tracker silently.
 */
bool odebug_held_io_released(const struct odebug_snapshot *o)
{
	struct rec c[BATCH];
	unsigned int n, i, inflight = 0;

	n = snapshot(o->addr - ODEBUG_HELD_IO_OFFSET, c);
	for (i = 0; i < n; i++) {
		/*
		 * A returned frame's aiocb is whatever was written over it
		 * since: glibc's answer would be read from that.  Counted as
		 * ended (a missed report); the completion ring is not in the
		 * frame, so io_uring's answer stands.
		 */
		if (!(o->dead && c[i].io.r.family == ODEBUG_HELD_IO_AIO) && live(&c[i]))
			inflight++;
		else
			end_req(&c[i]);
	}
	return !inflight;
}

/*
 * fixup_free: AIO requests holding the word are cancelled (aio_cancel;
 * what glibc cannot cancel is said); io_uring has nothing to undo.  The
 * word's records go, and the tracker is left INACTIVE.
 */
static bool fixup_free(void *t, enum debug_obj_state state)
{
	uintptr_t word = (uintptr_t)t - ODEBUG_HELD_IO_OFFSET;
	struct rec c[BATCH];
	unsigned int n, i;

	if (state != ODEBUG_STATE_ACTIVE)
		return false;
	while ((n = snapshot(word, c))) {
		for (i = 0; i < n; i++) {
			if (c[i].io.r.family == ODEBUG_HELD_IO_AIO && live(&c[i]))
				odebug_held_aio_fixup(&c[i].io.r);
			drop_copy(&c[i]);
		}
	}
	apply(word, ODEBUG_HELD_IO_AIO, false);
	return true;
}

const struct debug_obj_descr odebug_aio_descr = {
	.name = "aio",
	.is_static_object = odebug_held_any_value,
	.fixup_free = fixup_free,
};

const struct debug_obj_descr odebug_uring_descr = {
	.name = "io_uring",
	.is_static_object = odebug_held_any_value,
	.fixup_free = fixup_free,
};

/* The report's holder line: the first request in flight holding the word. */
bool odebug_held_io_describe(const struct odebug_snapshot *o, char *buf, size_t cap)
{
	struct rec c[BATCH];
	struct odebug_buf b;
	unsigned int n, i, first = BATCH, more = 0;

	n = snapshot(o->addr - ODEBUG_HELD_IO_OFFSET, c);
	for (i = 0; i < n; i++) {
		if (!live(&c[i]))
			continue;
		if (first == BATCH)
			first = i;
		else
			more++;
	}
	if (first == BATCH)
		return false;
	odebug_buf_init_mem(&b, buf, cap - 1);
	if (c[first].io.r.family == ODEBUG_HELD_IO_AIO)
		odebug_held_aio_describe(&c[first].io.r, c[first].io.role, &b);
	else
		odebug_held_uring_describe(&c[first].io.r, c[first].io.role, &b);
	odebug_held_end_line(&b, buf, more);
	return true;
}

static bool io_released(const struct odebug_snapshot *o)
{
	return odebug_held_io_descr(o->descr) && odebug_held_io_released(o);
}

static bool io_describe(const struct odebug_snapshot *o, char *buf, size_t cap)
{
	return odebug_held_io_descr(o->descr) && odebug_held_io_describe(o, buf, cap);
}

ODEBUG_CHECKER(held_io) = {
	.name = "AIO and io_uring",
	.released = io_released,
	.describe = io_describe,
};
