/* SPDX-License-Identifier: MIT */
/*
 * origin.c - origins=1: the annotating caller's stack, saved in the depot,
 * without unwinding it again when the same call chain comes back.
 *
 * A full unwind costs about 11 ns a frame, and the depot's lookup takes its
 * lock.  But the same call site tends to come back with the same chain, at
 * the same stack depth.  On x86-64 each return address of the chain sits
 * at a fixed place on the stack (just below its caller's stack pointer), so
 * each thread keeps a small cache keyed by our caller's return address and
 * the stack slot holding it, with the slots of every frame of the chain
 * found on the first unwind.  A hit re-reads those slots and compares them
 * with the chain's return addresses: if every one matches, the unwinder
 * would walk the same frames (each frame's size follows from its code
 * address), and the depot id is reused.  Any mismatch, or a chain whose
 * slots were not all found on this thread's stack (a signal on an
 * alternate stack, say), unwinds as before.  The stacks saved are exactly
 * as deep as stack_depth says: the cache only remembers the unwind's id.
 */
#define _GNU_SOURCE
#include <pthread.h>

#include "report.h"

#define MAX_FRAMES	(ODEBUG_MAX_FRAMES + ODEBUG_FRAME_SLACK)
#define WAYS		32		/* entries per thread, direct-mapped */

struct origin_entry {
	uintptr_t pc, slot;		/* the key: our caller's return address, where */
	uint32_t id, n;			/* depot id; frames checked */
	uintptr_t *pcs;			/* n return addresses, innermost first */
	uint16_t *step;			/* words from one slot to the next */
};

#if defined(__x86_64__)

static ODEBUG_TLS struct origin_entry *cache;	/* this thread's, mapped on first use */
static ODEBUG_TLS int cache_failed;
static pthread_key_t cache_key;
static bool cache_key_ok;
static size_t frames;			/* per entry: stack_depth + our frames */

static size_t cache_bytes(void)
{
	return WAYS * (sizeof(struct origin_entry) + frames * (sizeof(uintptr_t) + sizeof(uint16_t)));
}

/* At thread exit; a later call (another key's destructor) unwinds. */
static void cache_drop(void *p)
{
	cache = NULL;
	cache_failed = 1;
	odebug_unmap(p, cache_bytes());
}

void odebug_origin_init(void)
{
	frames = odebug_opt.stack_depth + ODEBUG_FRAME_SLACK;
	cache_key_ok = pthread_key_create(&cache_key, cache_drop) == 0;
}

static struct origin_entry *cache_get(void)
{
	char *p;
	size_t i;

	if (likely(cache) || cache_failed || !cache_key_ok)
		return cache;
	odebug_guard_enter();
	p = odebug_map(cache_bytes());
	if (p && pthread_setspecific(cache_key, p) == 0) {
		struct origin_entry *e = (struct origin_entry *)p;
		uintptr_t *pcs = (uintptr_t *)(e + WAYS);
		uint16_t *step = (uint16_t *)(pcs + WAYS * frames);

		for (i = 0; i < WAYS; i++) {
			e[i].pcs = pcs + i * frames;
			e[i].step = step + i * frames;
		}
		cache = e;
	} else {
		if (p)
			odebug_unmap(p, cache_bytes());
		cache_failed = 1;
	}
	odebug_guard_exit();
	return cache;
}

static struct origin_entry *way(uintptr_t pc, uintptr_t slot)
{
	return &cache[((pc ^ (slot >> 4)) * 0x9e3779b97f4a7c15ull) >> (64 - 5)];
}

/*
 * Both read other functions' stack frames, ASan's redzones included: not
 * instrumented, as an unwinder is not.
 */
#define STACK_READER __attribute__((no_sanitize_address))

/* The chain at @slot is the one @e remembers: every return address in place. */
STACK_READER static bool same_chain(const struct origin_entry *e, const uintptr_t *slot)
{
	uint32_t i;

	for (i = 1; i < e->n; i++) {
		slot += e->step[i];
		if (*slot != e->pcs[i])
			return false;
	}
	return true;
}

/*
 * Find where each of @pcs (pcs[0] at @slot) is stored, each above the one
 * before, within this thread's stack.  False when one is not there, and
 * when @slot is not on this thread's stack as learned (a signal handler on
 * an alternate stack, a coroutine's): memory above such a stack may be
 * unmapped, so nothing beyond it is read.
 */
STACK_READER static bool find_slots(struct origin_entry *e, uintptr_t *const *pcs_in, int n,
		       const uintptr_t *slot)
{
	const uintptr_t *pcs = (const uintptr_t *)pcs_in, *top = (const uintptr_t *)odebug_stack_top();
	int i;

	if ((size_t)n > frames || (uintptr_t)slot < odebug_tls.stack_lo ||
	    (const uintptr_t *)slot >= top)
		return false;
	e->pcs[0] = pcs[0];
	e->step[0] = 0;
	for (i = 1; i < n; i++) {
		const uintptr_t *s = slot + 1;
		const uintptr_t *end = top - slot > 65535 ? slot + 65535 : top;

		while (s < end && *s != pcs[i])
			s++;
		if (s >= end)
			return false;
		e->pcs[i] = pcs[i];
		e->step[i] = (uint16_t)(s - slot);
		slot = s;
	}
	e->n = (uint32_t)n;
	return true;
}
#else
void odebug_origin_init(void) {}
#endif

/*
 * The caller's stack, stored in the depot: its id, 0 when there is none.
 * Called on the API path before any lock is taken.
 */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-omit-frame-pointer")))
#endif
__attribute__((noinline)) uint32_t odebug_origin_here(void)
{
	void *pcs[MAX_FRAMES];
	int n, skip, keep, k;
	uint32_t id;
#if defined(__x86_64__)
	uintptr_t pc = (uintptr_t)__builtin_return_address(0);
	uintptr_t *slot = (uintptr_t *)__builtin_frame_address(0) + 1;
	struct origin_entry *e = NULL;

	/* The frame pointer's slot holds our return address, or no cache. */
	if (*slot == pc && cache_get()) {
		e = way(pc, (uintptr_t)slot);
		if (e->pc == pc && e->slot == (uintptr_t)slot && same_chain(e, slot))
			return e->id;
	}
#endif
	n = odebug_backtrace(pcs, (int)odebug_opt.stack_depth + ODEBUG_FRAME_SLACK);
	skip = odebug_backtrace_skip(pcs, n);
	keep = n - skip;
	if (keep > (int)odebug_opt.stack_depth)
		keep = (int)odebug_opt.stack_depth;
	id = odebug_depot_save(pcs + skip, keep);
#if defined(__x86_64__)
	/* Remember the chain from our caller to the last frame saved. */
	for (k = 0; k < skip && (uintptr_t)pcs[k] != pc; k++)
		;
	if (e && id && k < skip) {
		e->pc = 0;	/* invalid until complete */
		odebug_stack_prepare();	/* the bounds the search stays within */
		if (find_slots(e, (uintptr_t *const *)(pcs + k), skip + keep - k, slot)) {
			e->id = id;
			e->slot = (uintptr_t)slot;
			e->pc = pc;
		}
	}
#else
	(void)k;
#endif
	return id;
}
