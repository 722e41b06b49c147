/* SPDX-License-Identifier: MIT */
/*
 * suppress.c - suppressions=FILE: reports a user has decided to live with.
 *
 * One rule per line, of one to three terms: "type:NAME" (the descriptor's
 * name), "op:OP" (the operation: init, activate, deactivate, destroy,
 * free, assert_init, active_state, exit, ...) and "func:NAME" (any frame
 * of the backtrace), each at most once, separated by blanks; a rule
 * matches a report that every one of its terms matches ("type:pthread_mutex
 * op:free func:conn_*").  A term runs to the next blank that a "type:",
 * "op:" or "func:" follows, so a pattern may hold blanks ("type:uv_timer
 * (closing)").  '*' matches any run of characters; '#' starts a comment.
 * A matching report is not printed and is counted in "suppressed".  The
 * file is read once, at start, into static storage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report.h"

#define MAX_RULES	256
#define MAX_PATTERN	128
#define MAX_FILE	(64 * 1024)
#define MAX_BAD_SHOWN	5	/* bad lines printed; the rest are counted */

enum rule_kind { RULE_TYPE, RULE_OP, RULE_FUNC, RULE_KINDS };

static const char *const prefixes[RULE_KINDS] = { "type:", "op:", "func:" };

/* A rule: the terms it has (bit per kind), each with its pattern. */
static ODEBUG_LARGE struct rule {
	unsigned int has;
	char pattern[RULE_KINDS][MAX_PATTERN];
} rules[MAX_RULES];
static int nrules;
static bool func_rules;
static unsigned long bad_lines;

/* Glob with '*' only, iterative (no recursion, no allocation). */
static bool match(const char *pat, const char *s)
{
	const char *star = NULL, *resume = NULL;

	while (*s) {
		if (*pat == '*') {
			star = pat++;
			resume = s;
		} else if (*pat == *s) {
			pat++;
			s++;
		} else if (star) {
			pat = star + 1;
			s = ++resume;
		} else {
			return false;
		}
	}
	while (*pat == '*')
		pat++;
	return !*pat;
}

static const char *trim(char *s, char **end)
{
	while (*s == ' ' || *s == '\t')
		s++;
	while (*end > s && ((*end)[-1] == ' ' || (*end)[-1] == '\t' || (*end)[-1] == '\r'))
		(*end)--;
	**end = '\0';
	return s;
}

static void bad_line(const char *file, unsigned long lineno, const char *text,
		     const char *why)
{
	char num[24], quoted[ODEBUG_QUOTE_LEN];
	struct odebug_buf b;

	if (++bad_lines > MAX_BAD_SHOWN)
		return;
	odebug_buf_init_mem(&b, num, sizeof(num) - 1);
	odebug_put_dec(&b, lineno);
	num[b.len] = '\0';
	odebug_message("suppressions ", file, ":", num, ": '",
		       odebug_quote(quoted, text, strlen(text)), "' ", why,
		       " (line ignored)", (char *)NULL);
}

/* The kind whose prefix starts @s, or -1. */
static int kind_at(const char *s)
{
	int k;

	for (k = 0; k < RULE_KINDS; k++)
		if (!strncmp(s, prefixes[k], strlen(prefixes[k])))
			return k;
	return -1;
}

/* Where the term starting at @s ends: a blank before the next prefix, or the end. */
static char *term_end(char *s)
{
	for (; *s; s++) {
		char *p = s;

		if (*s != ' ' && *s != '\t')
			continue;
		while (*p == ' ' || *p == '\t')
			p++;
		if (kind_at(p) >= 0)
			return s;
	}
	return s;
}

/* One term of a rule into @r; false (and a message) when it is bad. */
static bool add_term(const char *file, unsigned long lineno, const char *text,
		     struct rule *r, char *term, char *end)
{
	int k = kind_at(term);
	const char *pat;

	if (k < 0) {
		bad_line(file, lineno, text, "is not type:NAME, op:OP or func:NAME");
		return false;
	}
	pat = trim(term + strlen(prefixes[k]), &end);
	if (!*pat) {
		bad_line(file, lineno, text, "has an empty pattern");
	} else if (strlen(pat) >= MAX_PATTERN) {
		bad_line(file, lineno, text, "has a pattern over 127 characters");
	} else if (r->has & (1u << k)) {
		bad_line(file, lineno, text, "names one kind of term twice");
	} else {
		r->has |= 1u << k;
		strcpy(r->pattern[k], pat);
		return true;
	}
	return false;
}

static void add_line(const char *file, unsigned long lineno, char *line, char *end)
{
	char copy[80], *term, *stop;
	size_t len;
	const char *text = trim(line, &end);
	struct rule *r = &rules[nrules];

	if (!*text || *text == '#')
		return;
	if (nrules == MAX_RULES) {
		bad_line(file, lineno, text, "is beyond the 256 rules kept");
		return;
	}
	/* Terms are cut in place: the line's start kept for messages. */
	len = strlen(text);
	if (len >= sizeof(copy))
		len = sizeof(copy) - 1;
	memcpy(copy, text, len);
	copy[len] = '\0';
	memset(r, 0, sizeof(*r));
	for (term = (char *)text; *term; term = stop) {
		char saved;

		stop = term_end(term);
		saved = *stop;
		if (!add_term(file, lineno, copy, r, term, stop))
			return;
		*stop = saved;
		while (*stop == ' ' || *stop == '\t')
			stop++;
	}
	func_rules |= (r->has >> RULE_FUNC) & 1;
	nrules++;
}

/**
 * odebug_suppress_init - read the suppressions file named by the option
 */
void odebug_suppress_init(void)
{
	static ODEBUG_LARGE char text[MAX_FILE + 1], quoted[ODEBUG_QUOTE_PATH_LEN];
	const char *path = odebug_opt_str.suppressions, *why, *file;
	size_t len = 0;
	struct stat st;
	int fd;

	if (!path[0])
		return;		/* before the quoting: its buffer's page stays untouched */
	file = odebug_quote_n(quoted, ODEBUG_QUOTE_PATH_KEEP, path, strlen(path));
	/* Non-blocking: a FIFO must not hang the program's start. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		goto unreadable;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		errno = 0;
		why = "not a regular file";
		goto refused;
	}
	for (;;) {
		ssize_t n = read(fd, text + len, MAX_FILE - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {	/* a directory, /proc/self/mem: say so */
			int err = errno;

			close(fd);
			errno = err;
			goto unreadable;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len == MAX_FILE) {
			odebug_message("suppressions file ", file,
				       " is over 64 KiB; only its start is read",
				       (char *)NULL);
			break;
		}
	}
	close(fd);
	odebug_suppress_parse(file, text, len);
	return;
unreadable:
	why = strerrorname_np(errno);
refused:
	odebug_message("cannot read suppressions file ", file, " (",
		       why ? why : "error", "); nothing is suppressed", (char *)NULL);
}

/**
 * odebug_suppress_parse - replace the rules with those of @text
 * @file:	its name, for messages
 * @text:	the contents, @len bytes and room for a NUL after them; lines are
 *		cut in place
 */
void odebug_suppress_parse(const char *file, char *text, size_t len)
{
	unsigned long lineno = 0;
	char *line, *stop = text + len;

	nrules = 0;
	func_rules = false;
	bad_lines = 0;
	for (line = text; line < stop;) {
		char *nl = memchr(line, '\n', (size_t)(stop - line));
		char *end = nl ? nl : stop;

		add_line(file, ++lineno, line, end);
		line = end + 1;
	}
	if (bad_lines > MAX_BAD_SHOWN) {
		char num[24];
		struct odebug_buf b;

		odebug_buf_init_mem(&b, num, sizeof(num) - 1);
		odebug_put_dec(&b, bad_lines);
		num[b.len] = '\0';
		odebug_message("suppressions ", file, ": ", num,
			       " bad lines in all, the first 5 shown (all ignored)",
			       (char *)NULL);
	}
}

bool odebug_suppress_needs_frames(void)
{
	return func_rules;
}

/* Does any frame's function match @pattern? */
static bool frames_match(const char *pattern, const struct odebug_frame *frames, int nframes)
{
	int j;

	for (j = 0; frames && j < nframes; j++)
		if (frames[j].func[0] && match(pattern, frames[j].func))
			return true;
	return false;
}

/* Does a rule match this report?  @frames may be NULL without func rules. */
bool odebug_suppress_match(const char *type, const char *op,
		       const struct odebug_frame *frames, int nframes)
{
	int i;

	for (i = 0; i < nrules; i++) {
		const struct rule *r = &rules[i];

		if ((r->has & (1u << RULE_TYPE)) && !match(r->pattern[RULE_TYPE], type))
			continue;
		if ((r->has & (1u << RULE_OP)) && !match(r->pattern[RULE_OP], op))
			continue;
		if ((r->has & (1u << RULE_FUNC)) &&
		    !frames_match(r->pattern[RULE_FUNC], frames, nframes))
			continue;
		return true;
	}
	return false;
}

bool odebug_suppress_any(void)
{
	return nrules > 0;
}
