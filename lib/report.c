/* SPDX-License-Identifier: MIT */
/*
 * report.c - what a misuse looks like:
 *
 *   ODEBUG: free active (active state 0) object: 0x... object type: timer hint: cb+0x0
 *   ODEBUG: in thread 4242 (worker) of pid 4240
 *       #0 0x... in conn_close+0x2d (/usr/bin/app+0x1c40)
 *
 * Every report is counted in "warnings"; the first max_reports are printed
 * whole, later ones print nothing.  Called with no lock of ours held; the
 * backtrace is taken and named only when the report is printed.
 */
#define _GNU_SOURCE
#include <sys/prctl.h>
#include <unistd.h>

#include "internal.h"

/* The selftest's descriptor: its reports are counted, never printed. */
const struct debug_obj_descr *odebug_quiet_descr;

static unsigned long printed, stack_notes;

static const char *const state_names[ODEBUG_STATE_MAX] = {
	[ODEBUG_STATE_NONE] = "none",
	[ODEBUG_STATE_INIT] = "initialized",
	[ODEBUG_STATE_INACTIVE] = "inactive",
	[ODEBUG_STATE_ACTIVE] = "active",
	[ODEBUG_STATE_DESTROYED] = "destroyed",
	[ODEBUG_STATE_NOTAVAILABLE] = "not available",
};

/* A forked child prints its own first reports. */
void odebug_report_reset(void)
{
	odebug_store(&printed, 0);
	odebug_store(&stack_notes, 0);
}

static void put_thread_line(struct odebug_buf *b)
{
	char name[17] = "";

	prctl(PR_GET_NAME, name, 0, 0, 0);
	odebug_puts(b, "ODEBUG: in thread ");
	odebug_put_dec(b, (unsigned long)odebug_gettid());
	odebug_puts(b, " (");
	odebug_puts(b, name);
	odebug_puts(b, ") of pid ");
	odebug_put_dec(b, (unsigned long)getpid());
	odebug_putc(b, '\n');
}

/* The caller's frames, ours skipped, one line each. */
static void put_backtrace(struct odebug_buf *b)
{
	void *pcs[128 + 32];
	int i, n, first, depth = (int)odebug_opt.stack_depth;

	n = odebug_backtrace(pcs, depth + 32);
	first = odebug_backtrace_skip(pcs, n);
	for (i = first; i < n && i - first < depth; i++)
		odebug_put_frame(b, i - first, (uintptr_t)pcs[i]);
}

/**
 * odebug_report - count a misuse, and print it while under the limit
 * @o:	the tracker as it was when the misuse was found
 * @op:	the operation: "init", "activate", "free", ...
 */
void odebug_report(const struct odebug_snapshot *o, const char *op)
{
	struct odebug_buf b;
	void *hint = NULL;

	/* After an out-of-memory switch-off the table is gone: say nothing. */
	if (odebug_load(&odebug_mode) != ODEBUG_MODE_ON)
		return;
	odebug_inc(&odebug_warnings);
	if (o->descr == odebug_quiet_descr)
		return;
	if (odebug_inc(&printed) >= odebug_opt.max_reports)
		return;

	if (o->descr->debug_hint)
		hint = o->descr->debug_hint((void *)o->addr);
	odebug_buf_init(&b, 2);
	odebug_puts(&b, "ODEBUG: ");
	odebug_puts(&b, op);
	odebug_putc(&b, ' ');
	odebug_puts(&b, state_names[o->state]);
	odebug_puts(&b, " (active state ");
	odebug_put_dec(&b, o->astate);
	odebug_puts(&b, ") object: ");
	odebug_put_hex(&b, o->addr);
	odebug_puts(&b, " object type: ");
	odebug_puts(&b, o->descr->name);
	odebug_puts(&b, " hint: ");
	odebug_put_symbol(&b, (uintptr_t)hint, false);
	odebug_putc(&b, '\n');
	put_thread_line(&b);
	put_backtrace(&b);
	odebug_flush(&b);
}

/**
 * odebug_report_on_stack - an object's on-stack annotation is wrong
 *
 * Not a warning (as in the kernel): printed five times at most, with a
 * backtrace, never counted.
 */
void odebug_report_on_stack(uintptr_t addr, uintptr_t stack, bool is_on_stack)
{
	struct odebug_buf b;

	if (odebug_inc(&stack_notes) >= 5)
		return;
	odebug_buf_init(&b, 2);
	odebug_puts(&b, "ODEBUG: object ");
	odebug_put_hex(&b, addr);
	odebug_puts(&b, is_on_stack ? " is on stack " : " is NOT on stack ");
	odebug_put_hex(&b, stack);
	odebug_puts(&b, is_on_stack ? ", but NOT annotated.\n" : ", but annotated.\n");
	put_thread_line(&b);
	put_backtrace(&b);
	odebug_flush(&b);
}
