/* SPDX-License-Identifier: MIT */
/*
 * report-json.c - a report as one JSON object per line (log_format=json):
 *
 *   {"op":"free","state":"active","astate":0,"address":"0x...","type":"timer",
 *    "hint":"cb+0x0","thread":{"tid":4242,"name":"worker"},"pid":4240,
 *    "time":"2026-12-03T18:47:15.123Z","frames":[{"address":"0x...",...}],
 *    "next_step":"origins=1 shows ..."}
 *
 * "hint" is null when the descriptor named no function; a built-in type
 * adds its state (put_json_state()); "fixed_up":true when the type's fixup
 * repaired the object before the report was printed.
 *
 * Called by report.c under the report lock, into its static buffer; the
 * same rules hold (RELIABILITY.md, "The report path"): no malloc, no
 * locale or timezone code (the time is from clock_gettime and our own
 * calendar arithmetic).
 */
#define _GNU_SOURCE
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "builtin.h"
#include "report-format.h"

static void put_json_bounded(struct odebug_buf *b, const char *s, size_t cap)
{
	char tmp[ODEBUG_TYPE_CAP + 1];
	struct odebug_buf t;

	odebug_buf_init_mem(&t, tmp, sizeof(tmp) - 1);
	odebug_put_bounded(&t, s, cap < ODEBUG_TYPE_CAP ? cap : ODEBUG_TYPE_CAP);
	tmp[t.len] = '\0';
	odebug_put_json_str(b, tmp);
}

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
		if (f->has_off)
			put_json_hex(b, f->func_off);
		else
			odebug_puts(b, "null");
	} else {
		odebug_puts(b, "null,\"offset\":null");
	}
	odebug_puts(b, ",\"inlined\":");
	odebug_puts(b, f->inlined ? "true" : "false");
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

static void put_2(struct odebug_buf *b, long v)
{
	odebug_putc(b, (char)('0' + v / 10 % 10));
	odebug_putc(b, (char)('0' + v % 10));
}

/*
 * "2026-12-03T18:47:15.123Z", from clock_gettime alone: gmtime_r and
 * strftime may take glibc's timezone lock, which a signal handler can find
 * held by the code it interrupted.
 */
static void put_json_time(struct odebug_buf *b)
{
	struct timespec ts;
	int year;
	unsigned int month, day;
	long secs;

	clock_gettime(CLOCK_REALTIME, &ts);
	secs = ts.tv_sec % 86400;
	if (secs < 0)
		secs += 86400;
	odebug_civil_from_days((ts.tv_sec - secs) / 86400, &year, &month, &day);
	odebug_putc(b, '"');
	if (year < 0 || year > 9999)
		year = 0;	/* not a time this can run at */
	put_2(b, year / 100);
	put_2(b, year % 100);
	odebug_putc(b, '-');
	put_2(b, month);
	odebug_putc(b, '-');
	put_2(b, day);
	odebug_putc(b, 'T');
	put_2(b, secs / 3600);
	odebug_putc(b, ':');
	put_2(b, secs / 60 % 60);
	odebug_putc(b, ':');
	put_2(b, secs % 60);
	odebug_putc(b, '.');
	odebug_putc(b, (char)('0' + ts.tv_nsec / 100000000));
	put_2(b, ts.tv_nsec / 1000000 % 100);
	odebug_puts(b, "Z\"");
}

static int put_json_stack(struct odebug_buf *b, const char *key,
			  const struct odebug_frame *fs, int n, int limit)
{
	int i;

	if (!n && strcmp(key, "frames"))
		return 0;
	odebug_puts(b, ",\"");
	odebug_puts(b, key);
	odebug_puts(b, "\":[");
	for (i = 0; i < n && i < limit; i++) {
		if (i)
			odebug_putc(b, ',');
		put_json_frame(b, &fs[i]);
	}
	odebug_putc(b, ']');
	return n > limit ? n - limit : 0;
}

/* {"tid":4123,"name":"worker-2"} */
static void put_json_thread(struct odebug_buf *b, int tid, const char *name)
{
	odebug_puts(b, "{\"tid\":");
	odebug_put_dec(b, (unsigned long)tid);
	odebug_puts(b, ",\"name\":");
	odebug_put_json_str(b, name);
	odebug_putc(b, '}');
}

/*
 * A built-in type's state (report-state.c), as the text says it:
 * "state_text", the holder ("owner", "owner_name") or why it is not known
 * ("holder_note"), the threads asleep on it ("blocked_threads", present
 * when the kernel was asked; "blocked_threads_more"), the counted waiters
 * not asleep ("waiters_not_blocked"), or "waiters_unknown" when
 * /proc/self/task could not be read.
 */
static void put_json_state(struct odebug_buf *b, const struct report_state *s)
{
	int i;

	if (s->words[0]) {
		odebug_puts(b, ",\"state_text\":");
		odebug_put_json_str(b, s->words);
	}
	if (s->owner) {
		odebug_puts(b, ",\"owner\":");
		odebug_put_dec(b, (unsigned long)s->owner);
		odebug_puts(b, ",\"owner_name\":");
		odebug_put_json_str(b, s->owner_name);
	} else if (s->holder_note) {
		odebug_puts(b, ",\"holder_note\":");
		odebug_put_json_str(b, s->holder_note);
	}
	if (s->scanned) {
		odebug_puts(b, ",\"blocked_threads\":[");
		for (i = 0; i < s->nblocked; i++) {
			if (i)
				odebug_putc(b, ',');
			put_json_thread(b, s->blocked[i], s->blocked_name[i]);
		}
		odebug_putc(b, ']');
		if (s->blocked_more) {
			odebug_puts(b, ",\"blocked_threads_more\":");
			odebug_put_dec(b, (unsigned long)s->blocked_more);
		}
	}
	if (s->not_blocked) {
		odebug_puts(b, ",\"waiters_not_blocked\":");
		odebug_put_dec(b, s->not_blocked);
	}
	if (s->scan_failed && s->waiters)
		odebug_puts(b, ",\"waiters_unknown\":true");
}

void odebug_format_json(struct odebug_buf *b, const struct report *r, int limit)
{
	const struct odebug_snapshot *o = r->o;
	char name[17];
	int dropped;

	odebug_thread_name(name);
	odebug_puts(b, "{\"op\":");
	odebug_put_json_str(b, r->op);
	odebug_puts(b, ",\"state\":");
	odebug_put_json_str(b, odebug_state_names[o->state]);
	odebug_puts(b, ",\"astate\":");
	odebug_put_dec(b, o->astate);
	odebug_puts(b, ",\"address\":");
	put_json_hex(b, o->addr);
	odebug_puts(b, ",\"type\":");
	put_json_bounded(b, odebug_snapshot_type(o), ODEBUG_TYPE_CAP);
	if (o->flags & ODEBUG_SNAP_FRAME_GONE)
		odebug_puts(b, ",\"frame_gone\":true");
	if (o->flags & ODEBUG_SNAP_UNLOADED) {
		odebug_puts(b, ",\"unloaded_module\":");
		put_json_bounded(b, o->module ? o->module : "", 256);
	}
	odebug_puts(b, ",\"hint\":");
	if (r->hint) {
		struct odebug_buf hb;
		char hs[2 * 512];

		odebug_buf_init_mem(&hb, hs, sizeof(hs) - 1);
		odebug_put_symbol(&hb, r->hint);
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
	if (r->holder) {
		odebug_puts(b, ",\"holder\":");
		odebug_put_json_str(b, r->holder);
	}
	if (r->state)
		put_json_state(b, r->state);
	odebug_puts(b, ",\"time\":");
	put_json_time(b);
	dropped = put_json_stack(b, "frames", r->frames, r->nframes, limit);
	dropped += put_json_stack(b, "initialised_at", r->init, r->ninit, limit);
	dropped += put_json_stack(b, "activated_at", r->act, r->nact, limit);
	if (dropped) {
		odebug_puts(b, ",\"frames_not_shown\":");
		odebug_put_dec(b, (unsigned long)dropped);
	}
	if (r->fixed)
		odebug_puts(b, ",\"fixed_up\":true");
	if (r->suppression) {
		odebug_puts(b, ",\"suppression\":");
		odebug_put_json_str(b, r->suppression);
	}
	if (r->next) {
		odebug_puts(b, ",\"next_step\":");
		odebug_put_json_str(b, r->next);
	}
	odebug_puts(b, "}\n");
}
