/* SPDX-License-Identifier: MIT */
/*
 * options.c - every ODEBUG_OPTIONS setting, declared once in one table.
 *
 * ODEBUG_OPTIONS holds key=value pairs separated by ':' or ',' (as the
 * sanitizers' options; a ',' not followed by a key=value is part of a list
 * value); a value that contains a separator is written in double or single
 * quotes (up to the next quote of the same kind; there is no escape).  A switch takes 0/1, true/false, yes/no or on/off.  An unknown
 * key or a bad value costs one warning line and keeps the default.
 * Parsing allocates nothing: it may run inside the first API call of the
 * process, from another library's constructor.
 */
#include <stddef.h>
#include <string.h>

#include "base.h"

#ifndef ODEBUG_CHECK_FREE_DEFAULT
#define ODEBUG_CHECK_FREE_DEFAULT 1
#endif

ODEBUG_HOT struct odebug_options odebug_opt;
struct odebug_option_strings odebug_opt_str;

struct option_desc {
	const char *name;
	size_t offset;
	bool is_string;
	unsigned long def, min, max;	/* numbers */
	const char *def_str;		/* strings */
	const char *const *choices;	/* strings: allowed values, or NULL */
	const char *doc;
};

#define NUM(field, def, min, max, doc) \
	{ #field, offsetof(struct odebug_options, field), false, def, min, max, NULL, NULL, doc }
#define STR(field, def, choices, doc) \
	{ #field, offsetof(struct odebug_option_strings, field), true, 0, 0, 0, def, choices, doc }

static const char *const formats[] = { "text", "json", NULL };

/*
 * Trackers are named by a 32-bit index and index 0 is never used: a larger
 * pool cannot be mapped, so it is refused here rather than accepted and
 * then switched off at start.
 */
#define ODEBUG_POOL_LIMIT	(((1UL << 32) - 1) - 1)

static const struct option_desc options[] = {
	NUM(max_reports, 5, 0, ~0UL,
	    "distinct reports printed in full; later ones are only counted"),
	NUM(dedup, 1, 0, 2,
	    "one report per cause (operation, state, type, culprit line; 2: whole stack); 0: all"),
	NUM(pool_size, 1024, 1, ODEBUG_POOL_LIMIT,
	    "trackers made ready on the first API call (the pool grows in steps)"),
	NUM(pool_max, 1UL << 24, 1, ODEBUG_POOL_LIMIT,
	    "hard cap on trackers; beyond it tracking stops (out of memory)"),
	NUM(stack_depth, 32, 1, ODEBUG_MAX_FRAMES,
	    "frames printed per backtrace"),
	NUM(selftest, 1, 0, 1,
	    "run the kernel's selftest on the first API call; on failure stay disabled"),
	NUM(check_free, ODEBUG_CHECK_FREE_DEFAULT, 0, 1,
	    "check released memory for active objects"),
	NUM(check_pthread, 1, 0, 1,
	    "check pthread mutexes, rwlocks, spinlocks, condition variables, barriers, C11 mtx/cnd"),
	NUM(check_sem, 1, 0, 1,
	    "check POSIX semaphores (sem_init/sem_open and their use)"),
	NUM(seal_rwlocks, 1, 0, 1,
	    "let a read lock mark the rwlock in a word glibc leaves unused (faster read locks); 0: write nothing into glibc's objects"),
	NUM(check_held, 1, 0, 1,
	    "check memory epoll and POSIX timers hold (data.ptr, sival_ptr) when it is freed"),
	NUM(check_fd, 1, 0, 1,
	    "check closes of descriptors a stream, a directory stream or an fdsan tag owns"),
	NUM(origins, 0, 0, 1,
	    "record where each object was last initialised and activated"),
	STR(log_path, "stderr", NULL,
	    "stderr, syslog, or PREFIX: reports go to PREFIX.<pid>"),
	STR(log_format, "text", formats,
	    "text, or json (one object per line per report)"),
	STR(suppressions, "", NULL,
	    "file of type:, op: and func: patterns whose reports are not printed"),
	NUM(print_suppressions, 0, 0, 1,
	    "after each report, print a suppressions file line that matches it"),
	STR(symbolizer, "", NULL,
	    "program naming frames: llvm-symbolizer or addr2line (found in PATH when empty), or none"),
	STR(modules, "auto", NULL,
	    "annotation modules: auto (each library's in use), none, or names joined by ','"),
	STR(module_path, "", NULL,
	    "folder searched first for libodebug-<name>.so (empty: $ODEBUG_MODULE_PATH)"),
	NUM(exitcode, 0, 0, 255,
	    "exit status at normal exit when a report was made (0: unchanged)"),
	NUM(abort_on_error, 0, 0, 1,
	    "abort() after the first report"),
	NUM(halt_on_error, 0, 0, 1,
	    "_exit(exitcode, or 1) after the first report"),
	NUM(report_active_at_exit, 0, 0, 1,
	    "at exit, report every object still active"),
	NUM(print_stats, 0, 0, 1,
	    "print the statistics table at exit"),
	NUM(help, 0, 0, 1,
	    "print this table at start"),
	NUM(verbosity, 0, 0, 1,
	    "1: print configuration notices (the annotation modules attached, a sanitizer's free hook)"),
};

#define NOPTIONS (sizeof(options) / sizeof(options[0]))

static void *field_of(const struct option_desc *d)
{
	return (d->is_string ? (char *)&odebug_opt_str : (char *)&odebug_opt) + d->offset;
}

static void set_string(const struct option_desc *d, const char *s, size_t len)
{
	char *dst = field_of(d);

	memcpy(dst, s, len);
	dst[len] = '\0';
}

static void set_defaults(void)
{
	size_t i;

	for (i = 0; i < NOPTIONS; i++) {
		if (options[i].is_string)
			set_string(&options[i], options[i].def_str, strlen(options[i].def_str));
		else
			*(unsigned long *)field_of(&options[i]) = options[i].def;
	}
}

/* Decimal with an optional k/m/g suffix; false on anything else. */
static bool parse_number(const char *s, size_t len, unsigned long *out)
{
	unsigned long v = 0, mult = 1;
	size_t i;

	if (len && (s[len - 1] == 'k' || s[len - 1] == 'K'))
		mult = 1UL << 10, len--;
	else if (len && (s[len - 1] == 'm' || s[len - 1] == 'M'))
		mult = 1UL << 20, len--;
	else if (len && (s[len - 1] == 'g' || s[len - 1] == 'G'))
		mult = 1UL << 30, len--;
	if (!len || len > 20)	/* 20 digits: ULONG_MAX, the largest maximum */
		return false;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9' ||
		    __builtin_mul_overflow(v, 10UL, &v) ||
		    __builtin_add_overflow(v, (unsigned long)(s[i] - '0'), &v))
			return false;
	}
	if (v > ~0UL / mult)
		return false;
	*out = v * mult;
	return true;
}

/*
 * A switch (0 to 1, or to 2 where 1 is the usual "on": dedup) also takes
 * the words the sanitizers' options take.
 */
static bool parse_switch(const char *s, size_t len, unsigned long *out)
{
	static const char *const on[] = { "true", "yes", "on", NULL };
	static const char *const off[] = { "false", "no", "off", NULL };
	int i;

	for (i = 0; on[i]; i++) {
		if (strlen(on[i]) == len && !memcmp(on[i], s, len)) {
			*out = 1;
			return true;
		}
		if (strlen(off[i]) == len && !memcmp(off[i], s, len)) {
			*out = 0;
			return true;
		}
	}
	return false;
}

/**
 * odebug_quote_n - user input made fit for a one-line message
 * @dst:	4 * @keep + 4 bytes
 *
 * At most @keep bytes of @s are kept ("..." says more followed); control
 * bytes are written as \xNN, so a value cannot break the line or drive
 * the terminal.
 */
const char *odebug_quote_n(char *dst, size_t keep, const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t i, n = 0;

	for (i = 0; i < len && i < keep; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20 || c == 0x7f || c == '\\') {
			dst[n++] = '\\';
			dst[n++] = 'x';
			dst[n++] = hex[c >> 4];
			dst[n++] = hex[c & 15];
		} else {
			dst[n++] = (char)c;
		}
	}
	if (i < len) {
		memcpy(dst + n, "...", 3);
		n += 3;
	}
	dst[n] = '\0';
	return dst;
}

/* An option value or key: 64 bytes kept (ODEBUG_QUOTE_LEN). */
const char *odebug_quote(char *dst, const char *s, size_t len)
{
	return odebug_quote_n(dst, 64, s, len);
}

static const char *dec(char *dst, unsigned long v)
{
	struct odebug_buf b;

	odebug_buf_init_mem(&b, dst, 23);
	odebug_put_dec(&b, v);
	dst[b.len] = '\0';
	return dst;
}

static bool string_ok(const struct option_desc *d, const char *val, size_t vlen)
{
	const char *const *c;

	if (vlen >= ODEBUG_OPT_STRLEN)
		return false;
	if (!d->choices)
		return vlen > 0;
	for (c = d->choices; *c; c++)
		if (strlen(*c) == vlen && !memcmp(*c, val, vlen))
			return true;
	return false;
}

static void apply(const char *key, size_t klen, const char *val, size_t vlen,
		  bool has_value)
{
	char kbuf[ODEBUG_QUOTE_LEN], vbuf[ODEBUG_QUOTE_LEN], min[24], max[24], def[24];
	const struct option_desc *d;
	unsigned long v;
	size_t i;

	for (i = 0; i < NOPTIONS; i++)
		if (strlen(options[i].name) == klen &&
		    !memcmp(options[i].name, key, klen))
			break;
	if (i == NOPTIONS) {
		odebug_message("unknown option '", odebug_quote(kbuf, key, klen),
			       "' in ODEBUG_OPTIONS ignored (help=1 lists them)",
			       (char *)NULL);
		return;
	}
	d = &options[i];
	if (d->is_string) {
		if (has_value && string_ok(d, val, vlen)) {
			set_string(d, val, vlen);
			return;
		}
		odebug_message("bad value '", has_value ? odebug_quote(vbuf, val, vlen) : "",
			       "' for option ", d->name,
			       d->choices ? " (text or json)" : " (empty or too long)",
			       "; keeping the default '", d->def_str, "'", (char *)NULL);
		return;
	}
	if (has_value && (parse_number(val, vlen, &v) ||
			  (d->min == 0 && d->max <= 2 && parse_switch(val, vlen, &v))) &&
	    v >= d->min && v <= d->max) {
		*(unsigned long *)field_of(d) = v;
		return;
	}
	odebug_message("bad value '", has_value ? odebug_quote(vbuf, val, vlen) : "",
		       "' for option ", d->name, " (a number from ", dec(min, d->min),
		       " to ", dec(max, d->max), "); keeping the default ",
		       dec(def, d->def), (char *)NULL);
}

/*
 * Does the setting end at @p?  At ':', and at ',' (as the sanitizers'
 * options take both) when a key=value follows; otherwise the ',' belongs
 * to the value, as in a list (modules=libuv,glib).
 */
static bool is_separator(const char *p)
{
	if (*p == ':')
		return true;
	if (*p != ',')
		return false;
	for (p++; *p && *p != ':' && *p != ',' && *p != '='; p++)
		;
	return *p == '=';
}


/**
 * odebug_options_parse - set every option from @text (NULL: defaults only)
 */
void odebug_options_parse(const char *text)
{
	const char *p = text;

	set_defaults();
	while (p && *p) {
		const char *key = p, *val = NULL;
		size_t klen, vlen = 0;
		bool quoted = false;

		while (*p && *p != '=' && !is_separator(p))
			p++;
		klen = (size_t)(p - key);
		if (*p == '=') {
			p++;
			if (*p == '"' || *p == '\'') {	/* up to the same quote */
				char quote = *p;

				quoted = true;
				val = ++p;
				while (*p && *p != quote)
					p++;
				vlen = (size_t)(p - val);
				if (*p == quote)
					p++;
				else
					quoted = false;	/* unterminated */
			} else {
				val = p;
				while (*p && !is_separator(p))
					p++;
				vlen = (size_t)(p - val);
			}
		}
		if (klen)
			apply(key, klen, val, vlen, val && (quoted || vlen));
		while (*p && !is_separator(p))	/* junk after a closing quote */
			p++;
		if (*p)
			p++;
	}
	if (odebug_opt.pool_size > odebug_opt.pool_max)
		odebug_opt.pool_size = odebug_opt.pool_max;
}

/**
 * odebug_options_help - print every option with its default and meaning
 */
void odebug_options_help(void)
{
	struct odebug_buf b;
	size_t i;

	odebug_buf_init(&b, 2);
	odebug_puts(&b, ODEBUG_PREFIX "options (ODEBUG_OPTIONS=key=value:key=value):\n");
	for (i = 0; i < NOPTIONS; i++) {
		const struct option_desc *d = &options[i];

		odebug_puts(&b, ODEBUG_PREFIX "  ");
		odebug_put_pad(&b, d->name, 21);
		odebug_puts(&b, " default ");
		if (d->is_string) {
			odebug_putc(&b, '\'');
			odebug_puts(&b, d->def_str);
			odebug_puts(&b, "', now '");
			odebug_puts(&b, field_of(d));
			odebug_putc(&b, '\'');
		} else {
			odebug_put_dec(&b, d->def);
			odebug_puts(&b, ", now ");
			odebug_put_dec(&b, *(unsigned long *)field_of(d));
		}
		odebug_puts(&b, ": ");
		odebug_puts(&b, d->doc);
		odebug_putc(&b, '\n');
	}
	odebug_flush(&b);
}
