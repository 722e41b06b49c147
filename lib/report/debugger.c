/* SPDX-License-Identifier: MIT */
/*
 * debugger.c - what a debugger needs: a function every warning calls, to
 * break on, and a description of one address that can be called from gdb
 * at any moment, even while this thread is stopped inside libodebug.
 *
 * debug_object_print() therefore ignores the re-entry guard and never
 * waits: each lock it needs is tried once, and when one is held it says
 * "busy" (or prints origin frames unnamed) instead of blocking.
 */
#define _GNU_SOURCE
#include "report-format.h"

/**
 * debug_objects_report_hook - called by every warning no suppression matched
 * @op:		the operation: "free", "init", "activate", ...
 * @addr:	the object's address
 * @type:	its descriptor's name
 *
 * Called on the culprit's thread, after the report was written (or only
 * counted, past max_reports) and with no lock of libodebug's held, before
 * abort_on_error or halt_on_error act.  It does nothing: it exists to be a
 * breakpoint ("break debug_objects_report_hook" in gdb), like
 * AddressSanitizer's __asan_on_error.
 */
ODEBUG_EXPORT __attribute__((noinline)) void
debug_objects_report_hook(const char *op, const void *addr, const char *type)
{
	/* Keep the call and the arguments: a debugger reads them here. */
	__asm__ volatile("" : : "r"(op), "r"(addr), "r"(type) : "memory");
}

/* One origin stack; named only when the report lock could be had. */
static void put_origin(struct odebug_buf *b, uint32_t id, const char *title,
		       bool named)
{
	static ODEBUG_LARGE struct odebug_frame fs[ODEBUG_MAX_FRAMES];	/* under the report lock */
	const uintptr_t *pcs;
	int i, nf, n = odebug_depot_get(id, &pcs);

	if (!n)
		return;
	odebug_puts(b, ODEBUG_PREFIX);
	odebug_puts(b, title);
	odebug_puts(b, named ? ":\n" : " (frames unnamed: a report is being written):\n");
	if (!named) {
		for (i = 0; i < n; i++) {
			odebug_puts(b, "    #");
			odebug_put_dec(b, (unsigned long)i);
			odebug_putc(b, ' ');
			odebug_put_hex(b, pcs[i]);
			odebug_putc(b, '\n');
		}
		return;
	}
	nf = odebug_symbolize(pcs, n, true, fs, ODEBUG_MAX_FRAMES);
	for (i = 0; i < nf; i++)
		odebug_put_frame(b, i, &fs[i]);
}

/**
 * debug_object_print - describe what libodebug knows of one address
 * @addr:	any address
 * @fd:		where to write (2: stderr)
 *
 * One line: whether an object starting at @addr is tracked and, if so, its
 * type, state and active state; with origins=1, the stacks where it was
 * last initialised and activated.  Callable from the program and from a
 * debugger ("call debug_object_print(p, 2)"), also while stopped inside
 * libodebug (at debug_objects_report_hook, or in a fixup): it never blocks,
 * and says "busy" when the lock it needs is held.
 */
ODEBUG_EXPORT void debug_object_print(const void *addr, int fd)
{
	struct odebug_snapshot o = { 0 };
	struct odebug_bucket *bucket;
	struct odebug_tracker *t;
	struct odebug_buf b;
	uintptr_t base;
	uint64_t w;
	bool found = false, named;

	odebug_buf_init(&b, fd);
	odebug_puts(&b, ODEBUG_PREFIX "object ");
	odebug_put_hex(&b, (uintptr_t)addr);
	if (odebug_load(&odebug_mode) != ODEBUG_MODE_ON) {
		odebug_puts(&b, ": libodebug is disabled, nothing is tracked\n");
		odebug_flush(&b);
		return;
	}
	bucket = odebug_bucket_of((uintptr_t)addr);
	if (!odebug_bucket_trylock(bucket)) {
		odebug_puts(&b, ": busy (its bucket is locked; try again)\n");
		odebug_flush(&b);
		return;
	}
	t = odebug_lookup(bucket, (uintptr_t)addr);
	o.state = odebug_tracker_read(t, &w);
	if (o.state != ODEBUG_STATE_NOTAVAILABLE) {
		found = true;
		o.descr = odebug_word_descr(w);
		o.astate = t->astate;
		o.init_stack = odebug_tracker_origin(t, ODEBUG_ORIGIN_INIT);
		o.activate_stack = odebug_tracker_origin(t, ODEBUG_ORIGIN_ACTIVATE);
	}
	odebug_bucket_unlock(bucket);
	if (!found) {
		odebug_puts(&b, " is not tracked");
		if (odebug_on_stack((uintptr_t)addr, &base))
			odebug_puts(&b, " (it is on this thread's stack)");
		odebug_putc(&b, '\n');
		odebug_flush(&b);
		return;
	}
	odebug_puts(&b, " is tracked: type ");
	odebug_puts(&b, o.descr->name);
	odebug_puts(&b, ", state ");
	odebug_puts(&b, odebug_state_names[o.state]);
	odebug_puts(&b, ", active state ");
	odebug_put_dec(&b, o.astate);
	odebug_putc(&b, '\n');
	if (o.init_stack || o.activate_stack) {
		named = odebug_report_trylock();
		if (named)
			odebug_symbolize_begin();
		put_origin(&b, o.init_stack, "object initialised at", named);
		put_origin(&b, o.activate_stack, "object activated at", named);
		if (named)
			odebug_report_unlock();
	} else if (!odebug_opt.origins) {
		odebug_puts(&b, ODEBUG_PREFIX "(run with ODEBUG_OPTIONS=origins=1 to see where it was initialised and activated)\n");
	}
	odebug_flush(&b);
}
