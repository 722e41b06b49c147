/* SPDX-License-Identifier: MIT */
/*
 * report-advice.c - what a report tells its reader to do next:
 *
 *   ODEBUG: suppression: type:pthread_mutex op:free func:conn_close
 *   ODEBUG: next step: origins=1 shows where it was initialised and locked; ...
 *
 * The suppression line (print_suppressions=1) follows every printed
 * report: a line for the suppressions file (lib/report/suppress.c's syntax) that
 * matches this report's type and operation in a stack holding its first
 * frame's function.  The next-step line follows the first printed report
 * of a process only, and names only the options not already set.  Called
 * by report.c under the report lock: static buffers, no allocation.
 */
#include <string.h>

#include "report-format.h"

/* A suppression pattern is at most this long (suppress.c's MAX_PATTERN - 1). */
#define PATTERN_MAX 127

/*
 * @s as a pattern: control bytes (which would end the line) become '*',
 * which matches them; a name too long for a pattern is cut and ends in '*'.
 */
static void put_pattern(struct odebug_buf *b, const char *s)
{
	size_t i, n = strnlen(s, PATTERN_MAX + 1);
	size_t keep = n > PATTERN_MAX ? PATTERN_MAX - 1 : n;

	for (i = 0; i < keep; i++) {
		unsigned char c = (unsigned char)s[i];

		odebug_putc(b, c < 0x20 || c == 0x7f ? '*' : (char)c);
	}
	if (keep < n)
		odebug_putc(b, '*');
}

/**
 * odebug_report_suppression - a suppressions file line matching @r
 *
 * "type:T op:O func:F", func: from the report's first named frame (none
 * for reports with no stack, such as report_active_at_exit's).
 */
const char *odebug_report_suppression(const struct report *r)
{
	static char line[3 * (PATTERN_MAX + 8)];
	struct odebug_buf b;

	odebug_buf_init_mem(&b, line, sizeof(line) - 1);
	odebug_puts(&b, "type:");
	put_pattern(&b, odebug_snapshot_type(r->o));
	odebug_puts(&b, " op:");
	put_pattern(&b, r->op);
	if (r->nframes && r->frames[0].func[0]) {
		odebug_puts(&b, " func:");
		put_pattern(&b, r->frames[0].func);
	}
	line[b.len] = '\0';
	return line;
}

/* "; " between the parts of the next step. */
static void put_part(struct odebug_buf *b, const char *s)
{
	if (b->len)
		odebug_puts(b, "; ");
	odebug_puts(b, s);
}

/* "where it was ...": what origins=1 would show, in the object's checker's words. */
static const char *origin_words(const struct debug_obj_descr *d)
{
	const char *words = odebug_checkers_origin_words(d);

	return words ? words : "where it was initialised and activated";
}

/**
 * odebug_report_next_step - the first report's last line: what to try next
 * @d:	the object's descriptor (by address only: a built-in type or not)
 *
 * NULL when every option it would name is already set.
 */
const char *odebug_report_next_step(const struct debug_obj_descr *d)
{
	static char text[512];
	struct odebug_buf b;

	odebug_buf_init_mem(&b, text, sizeof(text) - 1);
	if (!odebug_opt.origins) {
		put_part(&b, "origins=1 shows ");
		odebug_puts(&b, origin_words(d));
	}
	if (!odebug_opt.exitcode && !odebug_opt.abort_on_error && !odebug_opt.halt_on_error)
		put_part(&b, "exitcode=1 makes a run with a report fail (for CI)");
	if (!odebug_opt.print_suppressions)
		put_part(&b, "print_suppressions=1 prints a suppressions=FILE line for each report");
	if (!b.len)
		return NULL;
	odebug_puts(&b, " (ODEBUG_OPTIONS; odebug(7))");
	text[b.len] = '\0';
	return text;
}
