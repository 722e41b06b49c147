/* SPDX-License-Identifier: MIT */
/*
 * group.c - reports grouped by their cause, and the summary at exit.
 *
 * Two reports are the same when their operation, the object's state, its
 * type (descriptor) and the culprit line are equal: the culprit's first
 * frame outside libc (backtrace.c's odebug_backtrace_culprit()), by its
 * raw return address (never by symbolising).  One faulty line reached from many callers is one
 * cause, as ASan's suppress_equal_pcs has it; dedup=2 compares the whole
 * stack instead (up to stack_depth frames), for a culprit that is a
 * shared wrapper whose callers are the real culprits.  The first report of a
 * group is printed in full (while max_reports allows), the others are only
 * counted.  For the "exit" reports, which have no culprit stack, the
 * object's origin stacks (origins=1) stand in for it.
 *
 * The group table is a fixed array (ODEBUG_GROUPS slots, no malloc) with
 * open addressing.  A group is named by a 64-bit hash of its whole key and
 * claimed with one compare-and-swap, so two threads reporting the same new
 * cause agree on one first report without a lock, and a signal handler that
 * reports while its thread is half-way through an insertion only finds the
 * group already there.  Two different causes share a group only if their
 * 64-bit hashes collide (about n^2 / 2^65 for n causes).
 *
 * When the table is full a new cause is not grouped: it is treated as
 * distinct every time (printed while max_reports allows, counted in
 * "distinct"), so distinct becomes an upper bound, and the summary says the
 * table was full.  dedup=0 turns grouping off the same way.
 */
#include <string.h>

#include "report.h"

#define MAX_FRAMES	128	/* stack_depth's maximum */
#define GROUP_NAME_LEN	40	/* of the type's name, kept for the summary */
#define SUMMARY_GROUPS	256	/* groups listed in a JSON summary */
#define SUMMARY_LINES	10	/* repeated reports listed in a text summary */

struct group {
	uint64_t key;			/* 0: empty; claimed by compare-and-swap */
	unsigned long count;		/* reports of this cause */
	/* Written once by the claiming thread, read at exit after "ready". */
	const char *op;
	unsigned int state;
	unsigned int report;		/* 1, 2, ...: the printed report's ordinal */
	bool suppressed;
	bool ready;
	char type[GROUP_NAME_LEN];
};

static ODEBUG_LARGE struct group groups[ODEBUG_GROUPS];
/* Per process: a forked child starts with none. */
static unsigned long total, distinct, overflow, printed, suppressed;
/* The printed groups, in the order they were printed (under the report lock). */
static ODEBUG_LARGE unsigned int shown[ODEBUG_GROUPS];
static unsigned int nshown;

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v;
	h *= 0xff51afd7ed558ccdull;
	return h ^ (h >> 33);
}

/* The cause's key: op, state, type and the culprit line (dedup=2: stack). */
static uint64_t key_of(const struct odebug_snapshot *o, const char *op, bool culprit)
{
	void *stack[MAX_FRAMES + 32];
	void *const *pcs = stack;
	uint64_t h = 0x9e3779b97f4a7c15ull;
	int i, n, first, depth = (int)odebug_opt.stack_depth;
	const char *c;

	for (c = op; *c; c++)
		h = mix(h, (unsigned char)*c);
	h = mix(h, o->state);
	h = mix(h, (uintptr_t)o->descr);
	if (culprit) {
		if (o->culprit_pcs) {	/* recorded at the call */
			pcs = o->culprit_pcs;
			n = o->culprit_n;
			first = 0;
		} else {
			n = odebug_backtrace(stack, depth + 32);
			first = odebug_backtrace_skip(stack, n);
		}
		if (odebug_opt.dedup == 1) {	/* the culprit line */
			first = odebug_backtrace_culprit(pcs, first, n);
			depth = 1;
		}
		if (n - first > depth)
			n = first + depth;
		h = mix(h, (uint64_t)(n - first));
		for (i = first; i < n; i++)
			h = mix(h, (uintptr_t)pcs[i]);
	} else {
		h = mix(h, ((uint64_t)o->init_stack << 32) | o->activate_stack);
	}
	return h ? h : 1;
}

static void fill(struct group *g, const struct odebug_snapshot *o, const char *op)
{
	const char *name = odebug_snapshot_type(o) ? odebug_snapshot_type(o) : "";
	size_t len = strnlen(name, GROUP_NAME_LEN - 1);

	g->op = op;
	g->state = o->state;
	memcpy(g->type, name, len);
	g->type[len] = '\0';
	__atomic_store_n(&g->ready, true, __ATOMIC_RELEASE);
}

/**
 * odebug_group_add - count a report in its group
 *
 * Returns the new group's index for the first report of a cause,
 * ODEBUG_GROUP_REPEAT for a later one (counted, not to be printed), or
 * ODEBUG_GROUP_NONE when the report is not grouped (dedup=0, table full).
 * Lock-free and async-signal-safe: one backtrace, no symbolising.
 */
int odebug_group_add(const struct odebug_snapshot *o, const char *op, bool culprit)
{
	uint64_t key, expected;
	size_t i, slot;

	odebug_inc(&total);
	if (!odebug_opt.dedup) {
		odebug_inc(&distinct);
		return ODEBUG_GROUP_NONE;
	}
	key = key_of(o, op, culprit);
	slot = (size_t)(key >> 32) % ODEBUG_GROUPS;
	for (i = 0; i < ODEBUG_GROUPS; i++, slot = (slot + 1) % ODEBUG_GROUPS) {
		struct group *g = &groups[slot];

		expected = __atomic_load_n(&g->key, __ATOMIC_ACQUIRE);
		if (!expected &&
		    __atomic_compare_exchange_n(&g->key, &expected, key, false,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			odebug_inc(&g->count);
			odebug_inc(&distinct);
			fill(g, o, op);
			return (int)slot;
		}
		if (expected == key) {
			odebug_inc(&g->count);
			return ODEBUG_GROUP_REPEAT;
		}
	}
	odebug_inc(&overflow);
	odebug_inc(&distinct);
	return ODEBUG_GROUP_NONE;
}

/* The first report of group @g was printed in full (under the report lock). */
void odebug_group_printed(int g)
{
	unsigned long n = odebug_inc(&printed) + 1;

	if (g >= 0 && nshown < ODEBUG_GROUPS) {
		groups[g].report = (unsigned int)n;
		shown[nshown++] = (unsigned int)g;
	}
}

/* The first report of group @g matched a suppression. */
void odebug_group_suppressed(int g)
{
	if (g == ODEBUG_GROUP_REPEAT)
		return;
	odebug_inc(&suppressed);
	if (g >= 0)
		groups[g].suppressed = true;
}

/* A forked child: its own reports, its own groups. */
void odebug_group_child(void)
{
	/*
	 * Only if the parent grouped a report (total is counted before any
	 * group is claimed): clearing the 80 KiB table when it is still all
	 * zeros would touch every page of it in every forked child, about 20
	 * page faults a fork, which a shell pays for each $(...).
	 */
	if (!odebug_load(&total))
		return;
	memset(groups, 0, sizeof(groups));
	total = distinct = overflow = printed = suppressed = 0;
	nshown = 0;
}

void odebug_group_stats(struct debug_objects_stats *s)
{
	s->distinct = odebug_load(&distinct);
	s->printed = odebug_load(&printed);
}

/* --- the summary at exit --------------------------------------------- */

static ODEBUG_LARGE char text[64 * 1024];

static void put_num(struct odebug_buf *b, const char *before, unsigned long v,
		    const char *after)
{
	odebug_puts(b, before);
	odebug_put_dec(b, v);
	odebug_puts(b, after);
}

/* The counters, read once: other threads may still be reporting. */
struct counts {
	unsigned long total, distinct, printed, suppressed, overflow, fixups, unprinted;
};

static void summary_text(struct odebug_buf *b, const struct counts *c)
{
	size_t i, listed = 0, more = 0;

	put_num(b, ODEBUG_PREFIX "SUMMARY: ", c->total, c->total == 1 ? " warning, " : " warnings, ");
	put_num(b, "", c->distinct, c->distinct == 1 ? " distinct report (" : " distinct reports (");
	put_num(b, "", c->printed, " printed, ");
	put_num(b, "", c->suppressed, " suppressed), ");
	put_num(b, "", c->fixups, " fixed up\n");
	/* The printed reports that happened again, in the order printed. */
	for (i = 0; i < nshown; i++) {
		const struct group *g = &groups[shown[i]];

		if (!__atomic_load_n(&g->ready, __ATOMIC_ACQUIRE) ||
		    odebug_load(&g->count) < 2)
			continue;
		if (listed++ == SUMMARY_LINES) {
			more++;
			continue;
		}
		put_num(b, ODEBUG_PREFIX "  report ", g->report, " (");
		odebug_puts(b, g->op);
		odebug_puts(b, ", state ");
		odebug_puts(b, odebug_state_names[g->state]);
		odebug_puts(b, ", type ");
		odebug_puts(b, g->type);
		put_num(b, ") happened ", odebug_load(&g->count), " times\n");
	}
	if (more)
		put_num(b, ODEBUG_PREFIX "  and ", more,
			" more (log_format=json lists every group)\n");
	if (c->unprinted) {
		put_num(b, ODEBUG_PREFIX, c->unprinted, c->unprinted == 1 ?
			" distinct report was not printed (max_reports=" :
			" distinct reports were not printed (max_reports=");
		put_num(b, "", odebug_opt.max_reports, "); max_reports=");
		put_num(b, "", c->printed + c->unprinted, " prints them all\n");
	}
	if (c->overflow)
		put_num(b, ODEBUG_PREFIX "the group table was full: ", c->overflow,
			" reports were not grouped\n");
}

static void summary_json(struct odebug_buf *b, const struct counts *c)
{
	size_t i, listed = 0;

	put_num(b, "{\"summary\":{\"warnings\":", c->total, "");
	put_num(b, ",\"distinct\":", c->distinct, "");
	put_num(b, ",\"printed\":", c->printed, "");
	put_num(b, ",\"suppressed\":", c->suppressed, "");
	put_num(b, ",\"fixups\":", c->fixups, "");
	put_num(b, ",\"not_printed\":", c->unprinted, "");
	put_num(b, ",\"ungrouped\":", c->overflow, "");
	put_num(b, ",\"max_reports\":", odebug_opt.max_reports, ",\"groups\":[");
	/* Bounded so that the object always closes (type names are short). */
	for (i = 0; i < ODEBUG_GROUPS && listed < SUMMARY_GROUPS &&
		    b->len + 512 < b->cap; i++) {
		const struct group *g = &groups[i];

		if (!__atomic_load_n(&g->ready, __ATOMIC_ACQUIRE))
			continue;
		odebug_puts(b, listed++ ? ",{\"op\":" : "{\"op\":");
		odebug_put_json_str(b, g->op);
		odebug_puts(b, ",\"state\":");
		odebug_put_json_str(b, odebug_state_names[g->state]);
		odebug_puts(b, ",\"type\":");
		odebug_put_json_str(b, g->type);
		put_num(b, ",\"count\":", odebug_load(&g->count), ",\"report\":");
		if (g->report)
			odebug_put_dec(b, g->report);
		else
			odebug_puts(b, "null");
		odebug_puts(b, g->suppressed ? ",\"suppressed\":true}" : ",\"suppressed\":false}");
	}
	odebug_puts(b, "]}}\n");
}

/**
 * odebug_group_summary - the end-of-run block, when anything was reported
 *
 * To the reports' sink, in their format; nothing at all on a clean run.
 * Called with the report lock held (report.c sets the in-report flag first).
 */
void odebug_group_summary(void)
{
	struct odebug_buf b;
	struct counts c;

	if (!odebug_load(&total))
		return;
	c.total = odebug_load(&total);
	c.distinct = odebug_load(&distinct);
	c.printed = odebug_load(&printed);
	c.suppressed = odebug_load(&suppressed);
	c.overflow = odebug_load(&overflow);
	c.fixups = odebug_load(&odebug_fixups);
	c.unprinted = c.distinct > c.printed + c.suppressed ?
		      c.distinct - c.printed - c.suppressed : 0;
	odebug_buf_init_mem(&b, text, sizeof(text) - 1);
	if (!strcmp(odebug_opt_str.log_format, "json"))
		summary_json(&b, &c);
	else
		summary_text(&b, &c);
	if (b.len == b.cap)
		text[b.len - 1] = '\n';	/* truncated: still whole lines */
	odebug_sink_write(text, b.len);
}
