/* SPDX-License-Identifier: MIT */
/*
 * options.c - every ODEBUG_OPTIONS setting, declared once in one table.
 *
 * ODEBUG_OPTIONS holds key=value pairs separated by ':' (AddressSanitizer's
 * convention); a value that contains ':' is written in double quotes.  An
 * unknown key or a bad value costs one warning line and keeps the default.
 * Parsing allocates nothing: it runs during bootstrap, possibly inside the
 * first free() of the process.
 */
#include <stddef.h>
#include <string.h>

#include "internal.h"

#ifndef ODEBUG_CHECK_FREE_DEFAULT
#define ODEBUG_CHECK_FREE_DEFAULT 1
#endif

struct odebug_options odebug_opt;

struct option_desc {
	const char *name;
	size_t offset;
	unsigned long def, min, max;
	const char *doc;
};

#define OPT(field, def, min, max, doc) \
	{ #field, offsetof(struct odebug_options, field), def, min, max, doc }

static const struct option_desc options[] = {
	OPT(max_reports, 5, 0, ~0UL,
	    "reports printed in full; later ones are only counted"),
	OPT(pool_size, 1024, 1, 1UL << 32,
	    "trackers preallocated at start (the pool grows in slabs)"),
	OPT(pool_max, 1UL << 24, 1, 1UL << 32,
	    "hard cap on trackers; beyond it tracking stops (out of memory)"),
	OPT(stack_depth, 32, 1, 128,
	    "frames printed per backtrace"),
	OPT(selftest, 1, 0, 1,
	    "run the kernel's selftest at start; on failure stay disabled"),
	OPT(check_free, ODEBUG_CHECK_FREE_DEFAULT, 0, 1,
	    "check released memory for active objects"),
	OPT(print_stats, 0, 0, 1,
	    "print the statistics table at exit"),
	OPT(help, 0, 0, 1,
	    "print this table at start"),
};

#define NOPTIONS (sizeof(options) / sizeof(options[0]))

static unsigned long *field_of(const struct option_desc *d)
{
	return (unsigned long *)((char *)&odebug_opt + d->offset);
}

static void set_defaults(void)
{
	size_t i;

	for (i = 0; i < NOPTIONS; i++)
		*field_of(&options[i]) = options[i].def;
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
	if (!len || len > 19)
		return false;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (v > ~0UL / mult)
		return false;
	*out = v * mult;
	return true;
}

/* Copy at most 63 characters of a name or value into @dst, for messages. */
static const char *clip(char *dst, const char *s, size_t len)
{
	if (len > 63)
		len = 63;
	memcpy(dst, s, len);
	dst[len] = '\0';
	return dst;
}

static void apply(const char *key, size_t klen, const char *val, size_t vlen,
		  bool has_value)
{
	char kbuf[64], vbuf[64], min[24], max[24], def[24];
	struct odebug_buf b;
	unsigned long v;
	size_t i;

	for (i = 0; i < NOPTIONS; i++)
		if (strlen(options[i].name) == klen &&
		    !memcmp(options[i].name, key, klen))
			break;
	if (i == NOPTIONS) {
		odebug_message("unknown option '", clip(kbuf, key, klen),
			       "' in ODEBUG_OPTIONS ignored (help=1 lists them)",
			       (char *)NULL);
		return;
	}
	if (has_value && parse_number(val, vlen, &v) &&
	    v >= options[i].min && v <= options[i].max) {
		*field_of(&options[i]) = v;
		return;
	}
	/* Render the numbers with the buffer helpers, then one line. */
	odebug_buf_init(&b, -1);
	odebug_put_dec(&b, options[i].min);
	clip(min, b.data, b.len);
	b.len = 0;
	odebug_put_dec(&b, options[i].max);
	clip(max, b.data, b.len);
	b.len = 0;
	odebug_put_dec(&b, options[i].def);
	clip(def, b.data, b.len);
	odebug_message("bad value '", has_value ? clip(vbuf, val, vlen) : "",
		       "' for option ", options[i].name, " (a number from ",
		       min, " to ", max, "); keeping the default ", def,
		       (char *)NULL);
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

		while (*p && *p != '=' && *p != ':')
			p++;
		klen = (size_t)(p - key);
		if (*p == '=') {
			p++;
			if (*p == '"') {
				quoted = true;
				val = ++p;
				while (*p && *p != '"')
					p++;
				vlen = (size_t)(p - val);
				if (*p == '"')
					p++;
				else
					quoted = false;	/* unterminated */
			} else {
				val = p;
				while (*p && *p != ':')
					p++;
				vlen = (size_t)(p - val);
			}
		}
		if (klen)
			apply(key, klen, val, vlen, val && (quoted || vlen));
		while (*p && *p != ':')	/* junk after a closing quote */
			p++;
		if (*p == ':')
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
	odebug_puts(&b, "ODEBUG: options (ODEBUG_OPTIONS=key=value:key=value):\n");
	for (i = 0; i < NOPTIONS; i++) {
		odebug_puts(&b, "ODEBUG:   ");
		odebug_put_pad(&b, options[i].name, 13);
		odebug_puts(&b, " default ");
		odebug_put_dec(&b, options[i].def);
		odebug_puts(&b, ", now ");
		odebug_put_dec(&b, *field_of(&options[i]));
		odebug_puts(&b, ": ");
		odebug_puts(&b, options[i].doc);
		odebug_putc(&b, '\n');
	}
	odebug_flush(&b);
}
