/* SPDX-License-Identifier: MIT */
/*
 * held-io.c - the records of memory held by asynchronous I/O in flight
 * (held-io.h): who holds which word, the trackers' state, the query at
 * the free check and the fixup.  The families (held-aio.c,
 * held-uring.c) say whether a request is still in flight, undo it and
 * name it.
 *
 * A record is (held word, request); a request holds one to six words
 * (an aiocb and its buffer; an iovec array and its first buffers).
 * Records live in one mapping made at the first hold, chained by request
 * key and by word, guarded by one spinlock under which nothing else is
 * called.  A record stays until the word's free check finds its request
 * complete, the same request key is submitted again, or its ring is torn
 * down: nothing is done when a request completes, so its tracker stays
 * ACTIVE and the free of a completed request's memory costs one query
 * of the family (aio_error, a look at the completion ring).
 *
 * A fork() child inherits the mapping but none of the requests: records
 * made before the fork count as complete (a fork generation, bumped in
 * the child by an atfork handler: no system call per submission), and
 * the child's first hold empties the table.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <string.h>

#include "builtin.h"
#include "held-io.h"
#include "lock.h"

#define RECS_MAX	65536u	/* beyond, nothing more is held */
#define HASH_BITS	14
#define BATCH		16

struct rec {
	uintptr_t held;		/* the held word; 0: a free record */
	uintptr_t addr;		/* the held address as given */
	uint8_t role;
	uint32_t knext, anext;	/* chains by request and by word: index + 1, 0 ends */
	struct odebug_held_io_req r;
};

struct recs {
	uint32_t khead[1u << HASH_BITS], ahead[1u << HASH_BITS];
	uint32_t free_list, used;
	uint16_t gen;		/* the fork generation the records are of */
	struct rec h[RECS_MAX];
};

static struct recs *R;
static odebug_spinlock_t lock;
static uint16_t gen;	/* this process's: one more in each fork() child */

/* In a fork() child (registered once the records exist): none of them is its own. */
static void fork_child(void)
{
	odebug_store(&gen, (uint16_t)(odebug_load(&gen) + 1));
}

/* The mapping, at the first hold; false when it cannot be made. */
static bool mapped(void)
{
	static int failed;
	struct recs *m;

	if (likely(odebug_load(&R)))
		return true;
	if (odebug_load(&failed))
		return false;
	m = odebug_map(sizeof(*m));
	if (!m) {
		odebug_store(&failed, 1);
		return false;
	}
	m->gen = odebug_load(&gen);
	if (__atomic_compare_exchange_n(&R, &(struct recs *){ NULL }, m, false,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		pthread_atfork(NULL, NULL, fork_child);
	else
		odebug_unmap(m, sizeof(*m));
	return true;
}

/* The lock, with the re-entry guard set (as held.c's). */
static void rec_lock(void)
{
	odebug_guard_enter();
	odebug_spin_lock(&lock);
}

static void rec_unlock(void)
{
	odebug_spin_unlock(&lock);
	odebug_guard_exit();
}

static uint32_t hash64(uint64_t v)
{
	return (uint32_t)((v * 0x9e3779b97f4a7c15ull) >> (64 - HASH_BITS));
}

static uint32_t *khead(const struct odebug_held_io_req *r)
{
	return &R->khead[hash64(r->key * 31 + r->key2 * 4 + r->family)];
}

static uint32_t *ahead(uintptr_t word) { return &R->ahead[hash64(word)]; }

static bool same_req(const struct odebug_held_io_req *a, const struct odebug_held_io_req *b)
{
	return a->family == b->family && a->key == b->key && a->key2 == b->key2;
}

static void unchain(uint32_t *head, uint32_t idx, bool by_key)
{
	uint32_t *p = head;

	while (*p && *p != idx)
		p = by_key ? &R->h[*p - 1].knext : &R->h[*p - 1].anext;
	if (*p)
		*p = by_key ? R->h[idx - 1].knext : R->h[idx - 1].anext;
}

/* Unchain and free a record; returns its word.  Locked. */
static uintptr_t drop(struct rec *h)
{
	uint32_t idx = (uint32_t)(h - R->h) + 1;
	uintptr_t word = h->held;

	unchain(khead(&h->r), idx, true);
	unchain(ahead(word), idx, false);
	h->held = 0;
	h->knext = R->free_list;
	R->free_list = idx;
	return word;
}

/* A child's first hold: the parent's records are no requests of its own.  Locked. */
static void forget_all(uint16_t now)
{
	memset(R->khead, 0, sizeof(R->khead));
	memset(R->ahead, 0, sizeof(R->ahead));
	R->free_list = 0;
	R->used = 0;
	R->gen = now;
}

static struct rec *add(const struct odebug_held_io_req *r, uintptr_t addr, uint8_t role)
{
	static int said;
	struct rec *h;
	uint32_t idx;

	if (R->free_list) {
		idx = R->free_list;
		R->free_list = R->h[idx - 1].knext;
	} else if (R->used < RECS_MAX) {
		idx = ++R->used;
	} else {
		if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
			odebug_message("65536 asynchronous I/O holds recorded: new requests "
				       "are not checked from now on", (char *)NULL);
		return NULL;
	}
	h = &R->h[idx - 1];
	*h = (struct rec){ .held = addr & ~(uintptr_t)7, .addr = addr, .role = role, .r = *r };
	h->knext = *khead(r);
	*khead(r) = idx;
	h->anext = *ahead(h->held);
	*ahead(h->held) = idx;
	return h;
}

static unsigned int count(uintptr_t word)
{
	unsigned int n = 0;
	uint32_t i;

	for (i = *ahead(word); i; i = R->h[i - 1].anext)
		n += R->h[i - 1].held == word;
	return n;
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
	rec_lock();
	n = count(word);
	rec_unlock();
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
	uint32_t j;
	uint16_t g;

	if (!mapped())
		return;
	g = odebug_load(&gen);
	rec_lock();
	if (R->gen != g)
		forget_all(g);
	for (j = *khead(r); j && nold < BATCH; ) {
		struct rec *h = &R->h[j - 1];

		j = h->knext;
		if (same_req(&h->r, r))
			old[nold++] = drop(h);
	}
	for (i = 0; i < n && i < 8; i++)
		if (addrs[i] && add(r, addrs[i], roles[i]))
			now[nnow++] = addrs[i] & ~(uintptr_t)7;
	rec_unlock();
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

	if (!odebug_load(&R))
		return;
	do {
		n = 0;
		rec_lock();
		for (j = 1; j <= R->used && n < 32; j++) {
			struct rec *h = &R->h[j - 1];

			if (h->held && h->r.family == family && h->r.key == key)
				words[n++] = drop(h);
		}
		rec_unlock();
		for (i = 0; i < n; i++)
			settle(words[i], family);
	} while (n == 32);
}

/* Copies of the records of @word; at most BATCH.  Locks. */
static unsigned int snapshot(uintptr_t word, struct rec *out)
{
	unsigned int n = 0;
	uint32_t i;

	if (!odebug_load(&R))
		return 0;
	rec_lock();
	for (i = *ahead(word); i && n < BATCH; i = R->h[i - 1].anext)
		if (R->h[i - 1].held == word)
			out[n++] = R->h[i - 1];
	rec_unlock();
	return n;
}

/* Is @c's request still in flight?  Another process's (a fork parent's) never is.  No lock held. */
static bool live(const struct rec *c)
{
	if (odebug_load(&R)->gen != odebug_load(&gen))
		return false;
	if (c->r.family == ODEBUG_HELD_IO_AIO)
		return odebug_held_aio_live(&c->r);
	return odebug_held_uring_live(&c->r);
}

/* Drop the record @c copied, if it is still there. */
static void drop_copy(const struct rec *c)
{
	uint32_t i;

	rec_lock();
	for (i = *ahead(c->held); i; i = R->h[i - 1].anext) {
		struct rec *h = &R->h[i - 1];

		if (h->held == c->held && h->addr == c->addr && same_req(&h->r, &c->r)) {
			drop(h);
			break;
		}
	}
	rec_unlock();
}

/*
 * At the free check, before "free active" is reported for one of our
 * trackers: each request holding the word is asked; the complete ones'
 * records go.  True when none is in flight: the free check then drops
 * the tracker silently.
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
		if (!(o->dead && c[i].r.family == ODEBUG_HELD_IO_AIO) && live(&c[i]))
			inflight++;
		else
			drop_copy(&c[i]);
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
			if (c[i].r.family == ODEBUG_HELD_IO_AIO && live(&c[i]))
				odebug_held_aio_fixup(&c[i].r);
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
	if (c[first].r.family == ODEBUG_HELD_IO_AIO)
		odebug_held_aio_describe(&c[first].r, c[first].role, &b);
	else
		odebug_held_uring_describe(&c[first].r, c[first].role, &b);
	if (more) {
		odebug_puts(&b, ", and ");
		odebug_put_dec(&b, more);
		odebug_puts(&b, " more");
	}
	buf[b.len] = '\0';
	return true;
}
