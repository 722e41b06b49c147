/* SPDX-License-Identifier: MIT */
/*
 * report.c - what a misuse looks like, and what follows it:
 *
 *   ODEBUG: free active (active state 0) object: 0x... object type: timer hint: cb+0x0
 *   ODEBUG: in thread 4242 (worker) of pid 4240
 *       #0 0x... in conn_close+0x2d (/usr/bin/app+0x1c40) at conn.c:88
 *   ODEBUG: object initialised at:
 *       #0 ...
 *
 * Every report is counted in "warnings".  A report a suppression matches
 * is counted in "suppressed" and not printed; of the others, the first
 * max_reports are printed whole (text or JSON, to the sink), later ones
 * print nothing.  Then abort_on_error or halt_on_error act.  Called with no
 * lock of ours held; reports are serialised by the report lock, which also
 * guards the symboliser.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#define MAX_FRAMES 128

/* The selftest's descriptor: its reports are counted, never printed. */
const struct debug_obj_descr *odebug_quiet_descr;

static unsigned long printed, stack_notes;
static odebug_mutex_t report_mutex;
static int report_owner;	/* tid holding report_mutex, for nesting */

/* Under report_mutex: the culprit's frames and the report's text. */
static struct odebug_frame frames[MAX_FRAMES];
static char text[128 * 1024];

static const char *const state_names[ODEBUG_STATE_MAX] = {
	[ODEBUG_STATE_NONE] = "none",
	[ODEBUG_STATE_INIT] = "initialized",
	[ODEBUG_STATE_INACTIVE] = "inactive",
	[ODEBUG_STATE_ACTIVE] = "active",
	[ODEBUG_STATE_DESTROYED] = "destroyed",
	[ODEBUG_STATE_NOTAVAILABLE] = "not available",
};

void odebug_report_lock(void)
{
	odebug_mutex_lock(&report_mutex);
	report_owner = odebug_gettid();
}

/* For debug_object_print: never waits. */
bool odebug_report_trylock(void)
{
	if (!odebug_mutex_trylock(&report_mutex))
		return false;
	report_owner = odebug_gettid();
	return true;
}

void odebug_report_unlock(void)
{
	report_owner = 0;
	odebug_mutex_unlock(&report_mutex);
}

/* A forked child: fresh lock, its own first reports. */
void odebug_report_child(void)
{
	odebug_mutex_init(&report_mutex);
	report_owner = 0;
	printed = 0;
	odebug_store(&stack_notes, 0);
}

static bool json(void)
{
	return !strcmp(odebug_opt.log_format, "json");
}

/* --- text ------------------------------------------------------------ */

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

/* "name+0xoff", or the address itself. */
static void put_symbol(struct odebug_buf *b, const struct odebug_frame *f)
{
	if (f->func[0]) {
		odebug_puts(b, f->func);
		odebug_putc(b, '+');
		odebug_put_hex(b, f->func_off);
	} else {
		odebug_put_hex(b, f->pc);
	}
}

/* "    #3 0x55d0c0a81c40 in conn_close+0x2d (/usr/bin/app+0x1c40) at conn.c:88" */
static void put_frame(struct odebug_buf *b, int index, const struct odebug_frame *f)
{
	odebug_puts(b, "    #");
	odebug_put_dec(b, (unsigned long)index);
	odebug_putc(b, ' ');
	odebug_put_hex(b, f->pc);
	odebug_puts(b, " in ");
	odebug_puts(b, f->func[0] ? f->func : "??");
	if (f->func[0]) {
		odebug_putc(b, '+');
		odebug_put_hex(b, f->func_off);
	}
	if (f->module) {
		odebug_puts(b, " (");
		odebug_puts(b, f->module);
		odebug_putc(b, '+');
		odebug_put_hex(b, f->module_off);
		odebug_putc(b, ')');
	}
	if (f->file[0]) {
		odebug_puts(b, " at ");
		odebug_puts(b, f->file);
		odebug_putc(b, ':');
		odebug_put_dec(b, f->line);
	}
	odebug_putc(b, '\n');
}

/* --- JSON ------------------------------------------------------------ */

static void put_json_hex(struct odebug_buf *b, uintptr_t v)
{
	odebug_putc(b, '"');
	odebug_put_hex(b, v);
	odebug_putc(b, '"');
}

static void put_json_frame(struct odebug_buf *b, const struct odebug_frame *f)
{
	odebug_puts(b, "{\"address\":");
	put_json_hex(b, f->pc);
	odebug_puts(b, ",\"function\":");
	if (f->func[0]) {
		odebug_put_json_str(b, f->func);
		odebug_puts(b, ",\"offset\":");
		put_json_hex(b, f->func_off);
	} else {
		odebug_puts(b, "null,\"offset\":null");
	}
	odebug_puts(b, ",\"module\":");
	if (f->module) {
		odebug_put_json_str(b, f->module);
		odebug_puts(b, ",\"module_offset\":");
		put_json_hex(b, f->module_off);
	} else {
		odebug_puts(b, "null,\"module_offset\":null");
	}
	odebug_puts(b, ",\"file\":");
	if (f->file[0]) {
		odebug_put_json_str(b, f->file);
		odebug_puts(b, ",\"line\":");
		odebug_put_dec(b, f->line);
	} else {
		odebug_puts(b, "null,\"line\":null");
	}
	odebug_putc(b, '}');
}

static void put_json_time(struct odebug_buf *b)
{
	struct timespec ts;
	struct tm tm;
	char iso[40];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(iso, sizeof(iso), "%Y-%m-%dT%H:%M:%S", &tm);
	odebug_putc(b, '"');
	odebug_puts(b, iso);
	odebug_putc(b, '.');
	odebug_putc(b, (char)('0' + ts.tv_nsec / 100000000));
	odebug_putc(b, (char)('0' + ts.tv_nsec / 10000000 % 10));
	odebug_putc(b, (char)('0' + ts.tv_nsec / 1000000 % 10));
	odebug_puts(b, "Z\"");
}

/* --- the pieces of a report ------------------------------------------ */

/* Why there is no hint and no fixup: the object's memory is gone. */
static void put_gone_line(struct odebug_buf *b, const struct odebug_snapshot *o)
{
	if (o->flags & ODEBUG_SNAP_FRAME_GONE) {
		odebug_puts(b, "ODEBUG: the object was on this thread's stack in a frame that has "
			    "returned; its memory may be reused: no hint, no fixup, tracking dropped");
		odebug_puts(b, odebug_opt.origins ? "\n" :
			    " (origins=1 shows where it was initialised and activated)\n");
	}
	if (o->flags & ODEBUG_SNAP_UNLOADED) {
		odebug_puts(b, "ODEBUG: the object was in ");
		odebug_puts(b, o->module ? o->module : "a module");
		odebug_puts(b, ", unloaded by this dlclose(): no hint, no fixup, tracking dropped\n");
	}
}

static void put_stack(struct odebug_buf *b, const struct odebug_frame *fs, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		if (json()) {
			if (i)
				odebug_putc(b, ',');
			put_json_frame(b, &fs[i]);
		} else {
			put_frame(b, i, &fs[i]);
		}
	}
}

/* An origin stack from the depot, named frame by frame. */
static void put_origin(struct odebug_buf *b, uint32_t id, const char *title,
		       const char *key)
{
	const uintptr_t *pcs;
	struct odebug_frame f;
	int i, n = odebug_depot_get(id, &pcs);

	if (!n)
		return;
	if (json()) {
		odebug_puts(b, ",\"");
		odebug_puts(b, key);
		odebug_puts(b, "\":[");
	} else {
		odebug_puts(b, "ODEBUG: ");
		odebug_puts(b, title);
		odebug_puts(b, ":\n");
	}
	for (i = 0; i < n; i++) {
		odebug_symbolize(pcs[i], true, &f);
		if (json()) {
			if (i)
				odebug_putc(b, ',');
			put_json_frame(b, &f);
		} else {
			put_frame(b, i, &f);
		}
	}
	if (json())
		odebug_putc(b, ']');
}

static void format(struct odebug_buf *b, const struct odebug_snapshot *o,
		   const char *op, void *hint, int nframes)
{
	struct odebug_frame h;
	char name[17] = "";

	odebug_symbolize((uintptr_t)hint, false, &h);
	if (!json()) {
		odebug_puts(b, "ODEBUG: ");
		odebug_puts(b, op);
		odebug_putc(b, ' ');
		odebug_puts(b, state_names[o->state]);
		odebug_puts(b, " (active state ");
		odebug_put_dec(b, o->astate);
		odebug_puts(b, ") object: ");
		odebug_put_hex(b, o->addr);
		odebug_puts(b, " object type: ");
		odebug_puts(b, odebug_snapshot_type(o));
		odebug_puts(b, " hint: ");
		put_symbol(b, &h);
		odebug_putc(b, '\n');
		put_gone_line(b, o);
		put_thread_line(b);
		put_stack(b, frames, nframes);
		put_origin(b, o->init_stack, "object initialised at", NULL);
		put_origin(b, o->activate_stack, "object activated at", NULL);
		return;
	}
	prctl(PR_GET_NAME, name, 0, 0, 0);
	odebug_puts(b, "{\"op\":");
	odebug_put_json_str(b, op);
	odebug_puts(b, ",\"state\":");
	odebug_put_json_str(b, state_names[o->state]);
	odebug_puts(b, ",\"astate\":");
	odebug_put_dec(b, o->astate);
	odebug_puts(b, ",\"address\":");
	put_json_hex(b, o->addr);
	odebug_puts(b, ",\"type\":");
	odebug_put_json_str(b, odebug_snapshot_type(o));
	if (o->flags & ODEBUG_SNAP_FRAME_GONE)
		odebug_puts(b, ",\"frame_gone\":true");
	if (o->flags & ODEBUG_SNAP_UNLOADED) {
		odebug_puts(b, ",\"unloaded_module\":");
		odebug_put_json_str(b, o->module ? o->module : "");
	}
	odebug_puts(b, ",\"hint\":");
	if (h.func[0] || h.pc) {
		struct odebug_buf hb;
		char hs[160];

		odebug_buf_init_mem(&hb, hs, sizeof(hs) - 1);
		put_symbol(&hb, &h);
		hs[hb.len] = '\0';
		odebug_put_json_str(b, hs);
	} else {
		odebug_puts(b, "null");
	}
	odebug_puts(b, ",\"thread\":{\"tid\":");
	odebug_put_dec(b, (unsigned long)odebug_gettid());
	odebug_puts(b, ",\"name\":");
	odebug_put_json_str(b, name);
	odebug_puts(b, "},\"pid\":");
	odebug_put_dec(b, (unsigned long)getpid());
	odebug_puts(b, ",\"time\":");
	put_json_time(b);
	odebug_puts(b, ",\"frames\":[");
	put_stack(b, frames, nframes);
	odebug_putc(b, ']');
	put_origin(b, o->init_stack, NULL, "initialised_at");
	put_origin(b, o->activate_stack, NULL, "activated_at");
	odebug_puts(b, "}\n");
}

/* The culprit's frames, ours skipped, named. */
static int collect_frames(bool culprit)
{
	void *pcs[MAX_FRAMES + 32];
	int i, n, first, depth = (int)odebug_opt.stack_depth;

	if (!culprit)
		return 0;
	n = odebug_backtrace(pcs, depth + 32);
	first = odebug_backtrace_skip(pcs, n);
	for (i = first; i < n && i - first < depth; i++)
		odebug_symbolize((uintptr_t)pcs[i], true, &frames[i - first]);
	return i - first;
}

/* abort_on_error / halt_on_error, after a counted, unsuppressed report. */
static void act_on_error(void)
{
	if (odebug_opt.abort_on_error)
		abort();
	if (odebug_opt.halt_on_error)
		_exit(odebug_opt.exitcode ? (int)odebug_opt.exitcode : 1);
}

static void report(const struct odebug_snapshot *o, const char *op, bool culprit)
{
	struct odebug_buf b;
	void *hint = NULL;
	int nframes = 0;
	bool rules = odebug_suppress_any();

	/* After an out-of-memory switch-off the table is gone: say nothing. */
	if (odebug_load(&odebug_mode) != ODEBUG_MODE_ON)
		return;
	odebug_inc(&odebug_warnings);
	if (o->descr == odebug_quiet_descr && !o->type_name)
		return;
	if (!rules && odebug_load(&printed) >= odebug_opt.max_reports) {
		debug_objects_report_hook(op, (void *)o->addr, odebug_snapshot_type(o));
		act_on_error();		/* counted only: no lock, no backtrace */
		return;
	}
	if (report_owner == odebug_gettid()) {
		/* a report from inside a report (a signal handler) */
		debug_objects_report_hook(op, (void *)o->addr, odebug_snapshot_type(o));
		return;
	}
	odebug_report_lock();
	if (rules) {
		if (odebug_suppress_needs_frames())
			nframes = collect_frames(culprit);
		if (odebug_suppress_match(odebug_snapshot_type(o), op, frames, nframes)) {
			odebug_inc(&odebug_suppressed);
			odebug_report_unlock();
			return;
		}
	}
	if (printed < odebug_opt.max_reports) {
		printed++;
		if (!nframes)
			nframes = collect_frames(culprit);
		if (!(o->flags & (ODEBUG_SNAP_FRAME_GONE | ODEBUG_SNAP_UNLOADED)) &&
		    o->descr->debug_hint)
			hint = o->descr->debug_hint((void *)o->addr);
		odebug_buf_init_mem(&b, text, sizeof(text) - 1);
		format(&b, o, op, hint, nframes);
		if (b.len == b.cap && b.len)
			text[b.len - 1] = '\n';	/* truncated: still whole lines */
		odebug_sink_write(text, b.len);
	}
	odebug_report_unlock();
	debug_objects_report_hook(op, (void *)o->addr, odebug_snapshot_type(o));
	act_on_error();
}

/**
 * odebug_report - count a misuse; print it while under the limit
 * @o:	the tracker as it was when the misuse was found
 * @op:	the operation: "init", "activate", "free", ...
 */
void odebug_report(const struct odebug_snapshot *o, const char *op)
{
	report(o, op, true);
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
	int nframes;

	if (odebug_inc(&stack_notes) >= 5 || report_owner == odebug_gettid())
		return;
	odebug_report_lock();
	nframes = collect_frames(true);
	odebug_buf_init_mem(&b, text, sizeof(text) - 1);
	odebug_puts(&b, "ODEBUG: object ");
	odebug_put_hex(&b, addr);
	odebug_puts(&b, is_on_stack ? " is on stack " : " is NOT on stack ");
	odebug_put_hex(&b, stack);
	odebug_puts(&b, is_on_stack ? ", but NOT annotated.\n" : ", but annotated.\n");
	put_thread_line(&b);
	for (int i = 0; i < nframes; i++)
		put_frame(&b, i, &frames[i]);
	odebug_sink_write(text, b.len);
	odebug_report_unlock();
}

/* --- at exit --------------------------------------------------------- */

/* report_active_at_exit=1: every object still ACTIVE, as "exit active". */
struct active_batch {
	struct odebug_snapshot o[64];
	size_t got, seen, skip;
};

/* Copy the ACTIVE trackers after the first @skip; true when the batch is full. */
static bool collect_active(const struct odebug_tracker *t, void *ctx)
{
	struct active_batch *a = ctx;

	if (odebug_tracker_state(t) != ODEBUG_STATE_ACTIVE || a->seen++ < a->skip)
		return false;
	odebug_tracker_snapshot(&a->o[a->got++], t);
	return a->got == 64;
}

/* One bucket, 64 objects per visit: no report is made under its lock. */
static bool report_active_bucket(struct odebug_bucket *b, uint64_t chains,
				 uintptr_t start, uintptr_t end, void *ctx)
{
	struct active_batch *a = ctx;
	size_t k;

	(void)start, (void)end;
	a->skip = 0;
	do {
		a->got = a->seen = 0;
		odebug_bucket_lock(b);
		odebug_bucket_each(b, chains, collect_active, a);
		odebug_bucket_unlock(b);
		for (k = 0; k < a->got; k++)
			report(&a->o[k], "exit", false);
		a->skip += a->got;
	} while (a->got == 64);
	return false;
}

static void report_active_objects(void)
{
	struct active_batch a;

	odebug_table_visit_all(~0ull, 0, UINTPTR_MAX, report_active_bucket, &a);
}

/**
 * odebug_report_at_exit - the exit-time options, from our destructor
 *
 * Runs after the program's atexit handlers and the destructors of objects
 * that depend on us; with exitcode set and an unsuppressed report made, it
 * flushes stdio itself and ends the process with that status.
 */
void odebug_report_at_exit(void)
{
	if (odebug_load(&odebug_mode) == ODEBUG_MODE_ON &&
	    odebug_opt.report_active_at_exit)
		report_active_objects();
	if (odebug_opt.print_stats)
		debug_objects_print_stats(2);
	if (odebug_opt.exitcode &&
	    odebug_load(&odebug_warnings) > odebug_load(&odebug_suppressed)) {
		fflush(NULL);
		_exit((int)odebug_opt.exitcode);
	}
}
