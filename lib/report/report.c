/* SPDX-License-Identifier: MIT */
/*
 * report.c - what a misuse looks like, and what follows it:
 *
 *   ODEBUG: free active (active state 0) object: 0x... object type: timer hint: cb+0x0
 *   ODEBUG: in thread 4242 (worker) of pid 4240
 *       #0 0x... in conn_close+0x2d (/usr/bin/app+0x1c40) at conn.c:88
 *   ODEBUG: object initialised at:
 *       #0 ...
 *   ODEBUG: next step: origins=1 shows where it was initialised and activated; ...
 *
 * The kernel's header line, with " hint: ..." only when the descriptor's
 * debug_hint named a function; a built-in type says its state in words
 * instead of "(active state N)" (report-state.c).  The first printed report
 * of a process ends with the next step; with print_suppressions=1 each
 * one is followed by a suppressions line (report-advice.c).
 *
 * Every report is counted in "warnings" and in its group (group.c: same
 * cause, same group).  A report a suppression matches is counted in
 * "suppressed" and not printed; of the others, the first of each group is
 * printed whole (text or JSON, to the sink) while fewer than max_reports
 * were, and the rest print nothing.  Then abort_on_error or halt_on_error act.  Called with no
 * lock of ours held; reports are serialised by the report lock, which also
 * guards the symboliser and the static buffers below; the thread's
 * cancellation is disabled for a report's duration (no_cancel()).  What
 * may run here (no malloc, stdio, locale or timezone code, no loader call
 * under the lock, a few KiB of the caller's stack): RELIABILITY.md, "The
 * report path".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "builtin.h"
#include "report-format.h"

/* What the reports counted (debug_objects_get_stats(), print_stats=1). */
unsigned long odebug_warnings, odebug_fixups, odebug_suppressed;

/* Call a fixup, if any; count it when it fixed something.  (debugobjects.c too.) */
bool odebug_fixup(bool (*fn)(void *, enum debug_obj_state), void *addr,
		  enum debug_obj_state state)
{
	if (fn && fn(addr, state)) {
		odebug_inc(&odebug_fixups);
		return true;
	}
	return false;
}


/* The selftest's descriptor: its reports are counted, never printed. */
const struct debug_obj_descr *odebug_quiet_descr;

static unsigned long printed, stack_notes;	/* atomic: read without the lock */
/* Counts inherited from the parent (fork): exitcode looks at our own only. */
static unsigned long inherited_warnings, inherited_suppressed;
static odebug_mutex_t report_mutex;

/*
 * Set before the report lock is requested and cleared after it is
 * released: a report made on this thread meanwhile (a signal handler, a
 * debug_hint that misuses an object) is counted, never printed, and never
 * waits for the lock its own thread holds or is about to hold.
 */
static ODEBUG_TLS int in_report;

static bool json;	/* log_format, read once by odebug_report_init() */

/* Under report_mutex: a report's stacks, named, and its text. */
/* One more than shown: see name_stack(). */
static ODEBUG_LARGE struct odebug_frame frames[ODEBUG_MAX_FRAMES + 1];
static ODEBUG_LARGE struct odebug_frame init_frames[ODEBUG_MAX_FRAMES + 1], act_frames[ODEBUG_MAX_FRAMES + 1];
static struct odebug_frame hint_frames[4];
static struct report_state state;
static ODEBUG_LARGE char text[128 * 1024];

/* The states' names, in reports, the summary and debug_object_print(). */
const char *const odebug_state_names[ODEBUG_STATE_MAX] = {
	[ODEBUG_STATE_NONE] = "none",
	[ODEBUG_STATE_INIT] = "initialized",
	[ODEBUG_STATE_INACTIVE] = "inactive",
	[ODEBUG_STATE_ACTIVE] = "active",
	[ODEBUG_STATE_DESTROYED] = "destroyed",
	[ODEBUG_STATE_NOTAVAILABLE] = "not available",
};

/* After the options are parsed: what the report path needs of them. */
void odebug_report_init(void)
{
	json = !strcmp(odebug_opt_str.log_format, "json");
}

void odebug_report_lock(void)
{
	odebug_mutex_lock(&report_mutex);
}

/* For debug_object_print: never waits. */
bool odebug_report_trylock(void)
{
	return odebug_mutex_trylock(&report_mutex);
}

void odebug_report_unlock(void)
{
	odebug_mutex_unlock(&report_mutex);
}

/* A forked child: fresh lock, its own first reports, its own symboliser. */
void odebug_report_child(void)
{
	odebug_mutex_init(&report_mutex);
	odebug_store(&printed, 0);
	odebug_store(&stack_notes, 0);
	in_report = 0;
	odebug_symbolize_child();
	inherited_warnings = odebug_load(&odebug_warnings);
	inherited_suppressed = odebug_load(&odebug_suppressed);
}

/*
 * A report holds the report lock across calls that block (the symboliser's
 * wait, opening the log, writing it).  pthread_cancel() acting on one of
 * them would end the thread with the lock held and every later report in
 * every thread waiting for it; the thread's cancellation is disabled for
 * the report (which covers the asynchronous type too) and restored after,
 * when a pending deferred cancel acts at its next cancellation point.
 * pthread_setcancelstate takes no lock and leaves errno alone.
 */
static int no_cancel(void)
{
	int old = PTHREAD_CANCEL_ENABLE;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	return old;
}

static void cancel_again(int old)
{
	if (old == PTHREAD_CANCEL_ENABLE)
		pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
}

/* Take one of the max_reports printing slots, if one is left; *@first: slot 0. */
static bool take_slot(bool *first)
{
	unsigned long n = odebug_load(&printed);

	do {
		if (n >= odebug_opt.max_reports)
			return false;
	} while (!__atomic_compare_exchange_n(&printed, &n, n + 1, false,
					      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	*first = n == 0;
	return true;
}

/* --- shared pieces --------------------------------------------------- */

/* @s, cut at @cap bytes with "..." to say so. */
void odebug_put_bounded(struct odebug_buf *b, const char *s, size_t cap)
{
	size_t n = strnlen(s, cap + 1);

	if (n <= cap) {
		odebug_puts(b, s);
		return;
	}
	while (cap-- > 3)
		odebug_putc(b, *s++);
	odebug_puts(b, "...");
}

void odebug_thread_name(char name[17])
{
	memset(name, 0, 17);
	prctl(PR_GET_NAME, name, 0, 0, 0);
}

/* "name+0xoff", "name", or the address itself. */
void odebug_put_symbol(struct odebug_buf *b, const struct odebug_frame *f)
{
	if (f->func[0]) {
		odebug_puts(b, f->func);
		if (f->has_off) {
			odebug_putc(b, '+');
			odebug_put_hex(b, f->func_off);
		}
	} else {
		odebug_put_hex(b, f->pc);
	}
}

/* --- text ------------------------------------------------------------ */

static void put_thread_line(struct odebug_buf *b)
{
	char name[17];

	odebug_thread_name(name);
	odebug_puts(b, ODEBUG_PREFIX "in thread ");
	odebug_put_dec(b, (unsigned long)odebug_gettid());
	odebug_puts(b, " (");
	odebug_puts(b, name);
	odebug_puts(b, ") of pid ");
	odebug_put_dec(b, (unsigned long)getpid());
	odebug_putc(b, '\n');
}

/*
 * "    #3 0x55d0c0a81c40 in conn_close+0x2d (/usr/bin/app+0x1c40) at conn.c:88"
 * "    #2 0x55d0c0a81c40 in put_conn (inlined) (/usr/bin/app+0x1c40) at conn.h:12"
 */
void odebug_put_frame(struct odebug_buf *b, int index, const struct odebug_frame *f)
{
	odebug_puts(b, "    #");
	odebug_put_dec(b, (unsigned long)index);
	odebug_putc(b, ' ');
	odebug_put_hex(b, f->pc);
	odebug_puts(b, " in ");
	if (f->func[0])
		odebug_put_symbol(b, f);
	else
		odebug_puts(b, "??");
	if (f->inlined)
		odebug_puts(b, " (inlined)");
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

static void put_text_stack(struct odebug_buf *b, const char *title,
			   const struct odebug_frame *fs, int n, int limit)
{
	int i;

	if (title && !n)
		return;
	if (title) {
		odebug_puts(b, ODEBUG_PREFIX);
		odebug_puts(b, title);
		odebug_puts(b, ":\n");
	}
	for (i = 0; i < n && i < limit; i++)
		odebug_put_frame(b, i, &fs[i]);
	if (n > limit) {
		odebug_puts(b, "    ... ");
		odebug_put_dec(b, (unsigned long)(n - limit));
		odebug_puts(b, " more frames not shown: the report would exceed ");
		odebug_put_dec(b, (unsigned long)(b->cap / 1024));
		odebug_puts(b, " KiB\n");
	}
}

/* "thread 4123 (worker-2)" */
static void put_thread(struct odebug_buf *b, int tid, const char *name)
{
	odebug_puts(b, "thread ");
	odebug_put_dec(b, (unsigned long)tid);
	if (name[0]) {
		odebug_puts(b, " (");
		odebug_puts(b, name);
		odebug_putc(b, ')');
	}
}

/* Who holds it and who waits on it, as far as that is known. */
static void put_owner(struct odebug_buf *b, const struct report *r)
{
	const struct report_state *s = r->state;
	int i;

	if (r->holder) {
		odebug_puts(b, ODEBUG_PREFIX "holder: ");
		odebug_puts(b, r->holder);
		odebug_putc(b, '\n');
	}
	if (!s)
		return;
	if (s->owner) {
		odebug_puts(b, ODEBUG_PREFIX "held by ");
		put_thread(b, s->owner, s->owner_name);
		odebug_putc(b, '\n');
	} else if (s->holder_note) {
		odebug_puts(b, ODEBUG_PREFIX);
		odebug_puts(b, s->holder_note);
		odebug_putc(b, '\n');
	}
	if (s->nblocked) {
		odebug_puts(b, ODEBUG_PREFIX "blocked on it: ");
		for (i = 0; i < s->nblocked; i++) {
			if (i)
				odebug_puts(b, ", ");
			put_thread(b, s->blocked[i], s->blocked_name[i]);
		}
		if (s->blocked_more) {
			odebug_puts(b, " and ");
			odebug_put_dec(b, (unsigned long)s->blocked_more);
			odebug_puts(b, " more");
		}
		odebug_putc(b, '\n');
	}
	if (s->not_blocked) {
		odebug_puts(b, ODEBUG_PREFIX);
		odebug_put_dec(b, s->not_blocked);
		odebug_puts(b, s->not_blocked == 1 ? " waiter is" : " waiters are");
		odebug_puts(b, " counted but not asleep on it in the kernel now (about to "
			    "sleep, or woken): not named\n");
	}
	if (s->scan_failed && s->waiters)
		odebug_puts(b, ODEBUG_PREFIX "which threads wait is not known: /proc/self/task "
			    "cannot be read\n");
}

/* Why there is no hint and no fixup: the object's memory is gone. */
static void put_gone_line(struct odebug_buf *b, const struct odebug_snapshot *o)
{
	if (o->flags & ODEBUG_SNAP_FRAME_GONE) {
		odebug_puts(b, ODEBUG_PREFIX "the object was on this thread's stack in a frame that has "
			    "returned; its memory may be reused: no hint, no fixup, tracking dropped");
		odebug_puts(b, odebug_opt.origins ? "\n" :
			    " (origins=1 shows where it was initialised and activated)\n");
	}
	if (o->flags & ODEBUG_SNAP_UNLOADED) {
		odebug_puts(b, ODEBUG_PREFIX "the object was in ");
		odebug_put_bounded(b, o->module ? o->module : "a module", 256);
		odebug_puts(b, ", unloaded by this dlclose(): no hint, no fixup, tracking dropped\n");
	}
}

static void format_text(struct odebug_buf *b, const struct report *r, int limit)
{
	const struct odebug_snapshot *o = r->o;

	odebug_puts(b, ODEBUG_PREFIX);
	odebug_puts(b, r->op);
	odebug_putc(b, ' ');
	odebug_puts(b, odebug_state_names[o->state]);
	if (!r->state) {
		odebug_puts(b, " (active state ");
		odebug_put_dec(b, o->astate);
		odebug_putc(b, ')');
	} else if (r->state->words[0]) {
		odebug_puts(b, " (");
		odebug_puts(b, r->state->words);
		odebug_putc(b, ')');
	}
	odebug_puts(b, " object: ");
	odebug_put_hex(b, o->addr);
	odebug_puts(b, " object type: ");
	odebug_put_bounded(b, odebug_snapshot_type(o), ODEBUG_TYPE_CAP);
	if (r->hint) {
		odebug_puts(b, " hint: ");
		odebug_put_symbol(b, r->hint);
	}
	odebug_putc(b, '\n');
	put_gone_line(b, o);
	put_thread_line(b);
	put_owner(b, r);
	put_text_stack(b, NULL, r->frames, r->nframes, limit);
	put_text_stack(b, "object initialised at", r->init, r->ninit, limit);
	put_text_stack(b, "object activated at", r->act, r->nact, limit);
	if (r->fixed)
		odebug_puts(b, ODEBUG_PREFIX "fixed up: the type's fixup repaired it before this "
			    "report was printed\n");
	else if (r->unfixable)
		odebug_puts(b, ODEBUG_PREFIX "not fixed up: the type has no fixup for this; "
			    "whatever holds the object may still use its memory\n");
	if (r->suppression) {
		odebug_puts(b, ODEBUG_PREFIX "suppression: ");
		odebug_puts(b, r->suppression);
		odebug_putc(b, '\n');
	}
	if (r->next) {
		odebug_puts(b, ODEBUG_PREFIX "next step: ");
		odebug_puts(b, r->next);
		odebug_putc(b, '\n');
	}
}

/*
 * Format into text[], within what the sink takes whole.  A report that
 * does not fit is formatted again with fewer frames per stack, and says how
 * many it left out; the header alone always fits (every string in it is
 * bounded), so a report is always whole and valid.
 */
static size_t format(const struct report *r)
{
	size_t cap = odebug_sink_limit();
	struct odebug_buf b;
	int lo = 0, hi = ODEBUG_MAX_FRAMES, limit = hi;

	if (cap > sizeof(text))
		cap = sizeof(text);
	/* The most frames per stack that fit: lo always does, hi + 1 never. */
	for (;;) {
		odebug_buf_init_mem(&b, text, cap);
		if (json)
			odebug_format_json(&b, r, limit);
		else
			format_text(&b, r, limit);
		if (b.len < b.cap)
			lo = limit;
		else
			hi = limit - 1;
		if (lo == hi && limit == lo)
			return b.len;
		limit = lo == hi ? lo : (lo + hi + 1) / 2;
	}
}

/* --- the report ------------------------------------------------------ */

/* The caller's return addresses, libodebug's own frames skipped. */
static int capture(void **pcs, int max)
{
	int n = odebug_backtrace(pcs, max + ODEBUG_FRAME_SLACK);
	int first = odebug_backtrace_skip(pcs, n);

	n -= first;
	if (n > max)
		n = max;
	memmove(pcs, pcs + first, (size_t)n * sizeof(*pcs));
	return n;
}

/* The culprit's stack recorded at its call (o->culprit_pcs). */
static int recorded(const struct odebug_snapshot *o, void **pcs, int max)
{
	int n = o->culprit_n < max ? o->culprit_n : max;

	memcpy(pcs, o->culprit_pcs, (size_t)(n > 0 ? n : 0) * sizeof(*pcs));
	return n > 0 ? n : 0;
}

/*
 * Name @n addresses from @pcs into @out, libodebug's own frames left out
 * (a thread's outermost one is ours: backtrace.c); under the report lock.
 */
static int name_stack(const void *pcs, int n, struct odebug_frame *out)
{
	static uintptr_t theirs[ODEBUG_MAX_FRAMES + ODEBUG_FRAME_SLACK];
	int max = (int)odebug_opt.stack_depth;
	int got;

	if (n > (int)(sizeof(theirs) / sizeof(theirs[0])))
		n = (int)(sizeof(theirs) / sizeof(theirs[0]));
	n = odebug_backtrace_drop_own((const uintptr_t *)pcs, n, theirs);
	/* One more: odebug.h's inlined wrapper, named and dropped, took one. */
	got = odebug_symbolize(theirs, n, true, out, max + 1);

	return got > max ? max : got;
}

static int name_origin(uint32_t id, struct odebug_frame *out)
{
	const uintptr_t *pcs;
	int n = id ? odebug_depot_get(id, &pcs) : 0;

	return n ? name_stack(pcs, n, out) : 0;
}

/*
 * func: rules need the frames' names, and naming costs a round trip to the
 * symboliser (about 0.5 ms): a stack's verdict is remembered by its raw
 * addresses, type and op, so a suppressed report that repeats costs no
 * naming.  (A module unloaded and another mapped at the same addresses
 * would inherit a verdict: the cache is small, and such a report is rare.)
 * Under the report lock.
 */
#define VERDICTS 64
static struct {
	uint64_t key;
	bool suppressed;
} verdicts[VERDICTS];

static uint64_t stack_key(const struct odebug_snapshot *o, const char *op,
			  void *const *pcs, int n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	int i;

	h = (h ^ (uintptr_t)odebug_snapshot_type(o)) * 0x100000001b3ull;
	h = (h ^ (uintptr_t)op) * 0x100000001b3ull;
	for (i = 0; i < n; i++)
		h = (h ^ (uintptr_t)pcs[i]) * 0x100000001b3ull;
	return h | 1;	/* 0: an empty slot */
}

static bool is_suppressed(const struct odebug_snapshot *o, const char *op,
			  void *const *pcs, int npcs, int *nframes)
{
	uint64_t key;
	unsigned int slot;
	bool verdict;

	if (!odebug_suppress_needs_frames())
		return odebug_suppress_match(odebug_snapshot_type(o), op, NULL, 0);
	key = stack_key(o, op, pcs, npcs);
	slot = (unsigned int)(key >> 32) % VERDICTS;
	if (verdicts[slot].key == key)
		return verdicts[slot].suppressed;
	*nframes = name_stack(pcs, npcs, frames);
	verdict = odebug_suppress_match(odebug_snapshot_type(o), op, frames, *nframes);
	verdicts[slot].key = key;
	verdicts[slot].suppressed = verdict;
	return verdict;
}

/* abort_on_error / halt_on_error, after a counted, unsuppressed report. */
static void act_on_error(void)
{
	if (odebug_opt.abort_on_error)
		abort();
	if (odebug_opt.halt_on_error)
		_exit(odebug_opt.exitcode ? (int)odebug_opt.exitcode : 1);
}

/*
 * A fixup to run with the report: after the state is read and the raw
 * stack captured, before naming and printing, which take far longer (the
 * symboliser's round trips), so that a freed object's timer, watch or
 * registration stops while the report is still being written.
 */
struct fix {
	bool (*fn)(void *addr, enum debug_obj_state state);
	void *addr;
	bool done, fixed;
};

/* Run @fx's fixup now (with in_report clear: a report it makes is its own). */
static void fix_now(struct fix *fx, enum debug_obj_state st)
{
	in_report = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	fx->fixed = odebug_fixup(fx->fn, fx->addr, st);
	fx->done = true;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	in_report = 1;
}

static void report(const struct odebug_snapshot *snap, const char *op, bool culprit,
		   struct fix *fx)
{
	struct odebug_snapshot resolved = *snap;
	const struct odebug_snapshot *o = &resolved;
	void *pcs[ODEBUG_MAX_FRAMES + ODEBUG_FRAME_SLACK];
	struct report r = { .o = o, .op = op, .frames = frames, .init = init_frames,
			    .act = act_frames };
	bool rules = odebug_suppress_any(), suppressed = false, first = false;
	struct report_state now;
	char holder[ODEBUG_HOLDER_LEN];
	void *hint = NULL;
	int npcs = 0, saved_errno, group, cancel;
	bool stated = false;

	/* After an out-of-memory switch-off the table is gone: say nothing. */
	if (odebug_load(&odebug_mode) != ODEBUG_MODE_ON && !odebug_selftesting())
		return;
	odebug_inc(&odebug_warnings);
	if (o->descr == odebug_quiet_descr && !o->type_name)
		return;
	if (odebug_opt.print_stats && !(o->flags & ODEBUG_SNAP_UNLOADED))
		odebug_types_reported(o->descr);	/* the table per type at exit */
	/* A tracker's descriptor: its module may be gone (a copied name is not). */
	if (!resolved.name && !resolved.type_name)
		odebug_descr_resolve(&resolved);
	group = odebug_group_add(o, op, culprit);	/* a repeat is only counted */
	if (!rules && (group == ODEBUG_GROUP_REPEAT ||
		       odebug_load(&printed) >= odebug_opt.max_reports)) {
		debug_objects_report_hook(op, (void *)o->addr, odebug_snapshot_type(o));
		act_on_error();		/* counted only: no lock, no backtrace */
		return;
	}
	if (in_report) {
		/* a report from inside a report (a signal handler) */
		debug_objects_report_hook(op, (void *)o->addr, odebug_snapshot_type(o));
		return;
	}
	cancel = no_cancel();
	in_report = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);

	/*
	 * Outside the lock: the unwinder reads the loader's list of modules,
	 * and debug_hint is the program's code; neither may wait on the
	 * loader's lock while we hold one that a dlclose() destructor needs.
	 */
	if (culprit && o->culprit_pcs)
		npcs = recorded(o, pcs, (int)odebug_opt.stack_depth);
	else if (culprit)
		npcs = capture(pcs, (int)odebug_opt.stack_depth);
	if (!o->dead && !(o->flags & (ODEBUG_SNAP_FRAME_GONE | ODEBUG_SNAP_UNLOADED)) &&
	    o->descr->debug_hint &&
	    odebug_load(&printed) < odebug_opt.max_reports)
		hint = o->descr->debug_hint((void *)o->addr);
	if (odebug_load(&printed) < odebug_opt.max_reports &&
	    odebug_checkers_describe(o, holder, sizeof(holder)))
		r.holder = holder;	/* who holds it, in its checker's words */

	saved_errno = errno;	/* the symboliser's system calls may fail; fixups too */
	if (fx && fx->fn && !odebug_opt.abort_on_error && !odebug_opt.halt_on_error) {
		/*
		 * What the report says of the object is read before the fixup
		 * changes it (under the lock: the thread scan's buffer is shared).
		 */
		if (group != ODEBUG_GROUP_REPEAT && odebug_load(&printed) < odebug_opt.max_reports) {
			odebug_report_lock();
			stated = odebug_checkers_state(o, &now);
			odebug_report_unlock();
		}
		fix_now(fx, o->state);
		r.fixed = fx->fixed;
	}
	/* A memory release that nothing repaired: say so (unless the memory is dead). */
	r.unfixable = fx && !fx->fn && !strcmp(op, "free") && o->state == ODEBUG_STATE_ACTIVE;
	odebug_report_lock();
	odebug_symbolize_begin();
	if (rules) {
		suppressed = is_suppressed(o, op, pcs, npcs, &r.nframes);
		if (suppressed) {
			odebug_inc(&odebug_suppressed);
			odebug_group_suppressed(group);
			goto out;
		}
	}
	if (group != ODEBUG_GROUP_REPEAT && take_slot(&first)) {
		int nh;

		odebug_group_printed(group);
		if (!r.nframes)
			r.nframes = name_stack(pcs, npcs, frames);
		if (hint) {
			uintptr_t h = (uintptr_t)hint;

			nh = odebug_symbolize(&h, 1, false, hint_frames, 4);
			r.hint = nh ? &hint_frames[nh - 1] : NULL;	/* the outermost */
		}
		r.ninit = name_origin(o->init_stack, init_frames);
		r.nact = name_origin(o->activate_stack, act_frames);
		if (fx && fx->done) {
			if (stated) {
				state = now;
				r.state = &state;
			}
		} else if (odebug_checkers_state(o, &state)) {
			r.state = &state;
		}
		if (odebug_opt.print_suppressions)
			r.suppression = odebug_report_suppression(&r);
		if (first)
			r.next = odebug_report_next_step(o->descr);
		odebug_sink_write(text, format(&r));
	}
out:
	odebug_report_unlock();
	errno = saved_errno;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	in_report = 0;
	if (!suppressed) {
		debug_objects_report_hook(op, (void *)o->addr, odebug_snapshot_type(o));
		act_on_error();
	}
	cancel_again(cancel);
}

/**
 * odebug_report - count a misuse; print it while under the limit
 * @o:	the tracker as it was when the misuse was found
 * @op:	the operation: "init", "activate", "free", ...
 */
void odebug_report(const struct odebug_snapshot *o, const char *op)
{
	report(o, op, true, NULL);
}

/**
 * odebug_report_fix - report a misuse, and call its fixup
 * @o:	the tracker as it was when the misuse was found
 * @op:	the operation
 * @fn:	the descriptor's fixup (NULL: none), called with @addr and @o->state
 *
 * The fixup runs as soon as the report has what it prints of the object
 * and the culprit's raw stack, before the stacks are named and the report
 * written (struct fix); when the report is only counted, or abort_on_error
 * or halt_on_error will end the process at the report, it runs after.
 * Returns the fixup's verdict.
 */
bool odebug_report_fix(const struct odebug_snapshot *o, const char *op,
		       bool (*fn)(void *, enum debug_obj_state), void *addr)
{
	struct fix fx = { fn, addr, false, false };

	report(o, op, true, &fx);
	if (!fx.done)
		fx.fixed = odebug_fixup(fn, addr, o->state);
	return fx.fixed;
}

/* An object still ACTIVE at exit (report-exit.c): no culprit's stack. */
void odebug_report_exit(const struct odebug_snapshot *o)
{
	report(o, "exit", false, NULL);
}

/**
 * odebug_report_on_stack - an object's on-stack annotation is wrong
 *
 * Not a warning (as in the kernel): printed five times at most, with a
 * backtrace, never counted.
 */
void odebug_report_on_stack(uintptr_t addr, uintptr_t stack, bool is_on_stack)
{
	void *pcs[ODEBUG_MAX_FRAMES + ODEBUG_FRAME_SLACK];
	struct odebug_buf b;
	int npcs, nframes, saved_errno = errno, cancel;

	if (in_report || odebug_inc(&stack_notes) >= ODEBUG_NOTICE_LIMIT)
		return;
	cancel = no_cancel();
	in_report = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	npcs = capture(pcs, (int)odebug_opt.stack_depth);
	odebug_report_lock();
	odebug_symbolize_begin();
	nframes = name_stack(pcs, npcs, frames);
	odebug_buf_init_mem(&b, text, sizeof(text));
	odebug_puts(&b, ODEBUG_PREFIX "object ");
	odebug_put_hex(&b, addr);
	odebug_puts(&b, is_on_stack ? " is on stack " : " is NOT on stack ");
	odebug_put_hex(&b, stack);
	odebug_puts(&b, is_on_stack ? ", but NOT annotated.\n" : ", but annotated.\n");
	put_thread_line(&b);
	put_text_stack(&b, NULL, frames, nframes, ODEBUG_MAX_FRAMES);
	odebug_sink_write(text, b.len);
	odebug_report_unlock();
	errno = saved_errno;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	in_report = 0;
	cancel_again(cancel);
}

/* Did this process (not its parent before a fork) make an unsuppressed report? */
bool odebug_report_made_here(void)
{
	return odebug_load(&odebug_warnings) - inherited_warnings >
	       odebug_load(&odebug_suppressed) - inherited_suppressed;
}

/* Did this process (not its parent before a fork) count a warning? */
bool odebug_report_warned_here(void)
{
	return odebug_load(&odebug_warnings) != inherited_warnings;
}

/* The summary (group.c) is written as a report is: flag, then lock. */
void odebug_report_summary(void)
{
	int cancel;

	if (in_report)
		return;
	cancel = no_cancel();
	in_report = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	odebug_report_lock();
	odebug_group_summary();
	odebug_report_unlock();
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	in_report = 0;
	cancel_again(cancel);
}
