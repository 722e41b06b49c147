/* SPDX-License-Identifier: MIT */
/*
 * fmt.c - formatting without stdio or malloc.  The report path runs inside
 * free(), signal handlers and fork handlers, where printf is not safe; it
 * fills a buffer and hands it to write(2) in as few calls as possible, so
 * reports from two threads do not interleave mid-line.
 */
#include <stdarg.h>
#include <string.h>

#include "base.h"

void odebug_buf_init(struct odebug_buf *b, int fd)
{
	b->fd = fd;
	b->len = 0;
	b->cap = sizeof(b->inline_data);
	b->data = b->inline_data;
}

/* A buffer over caller's memory that never flushes: overflow truncates. */
void odebug_buf_init_mem(struct odebug_buf *b, char *mem, size_t cap)
{
	b->fd = -1;
	b->len = 0;
	b->cap = cap;
	b->data = mem;
}

void odebug_flush(struct odebug_buf *b)
{
	if (b->len && b->fd >= 0) {
		odebug_write(b->fd, b->data, b->len);
		b->len = 0;
	}
}

void odebug_putc(struct odebug_buf *b, char c)
{
	if (b->len == b->cap) {
		if (b->fd < 0)
			return;
		odebug_flush(b);
	}
	b->data[b->len++] = c;
}

void odebug_puts(struct odebug_buf *b, const char *s)
{
	if (!s)
		s = "(null)";
	while (*s)
		odebug_putc(b, *s++);
}

void odebug_put_hex(struct odebug_buf *b, uintptr_t v)
{
	char tmp[2 * sizeof(v) + 1];
	int i = (int)sizeof(tmp) - 1;

	tmp[i] = '\0';
	do {
		tmp[--i] = "0123456789abcdef"[v & 0xf];
		v >>= 4;
	} while (v);
	odebug_puts(b, "0x");
	odebug_puts(b, tmp + i);
}

void odebug_put_dec(struct odebug_buf *b, unsigned long v)
{
	char tmp[24];
	int i = (int)sizeof(tmp) - 1;

	tmp[i] = '\0';
	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	odebug_puts(b, tmp + i);
}

/*
 * The proleptic Gregorian date of day @days since 1970-01-01 (Howard
 * Hinnant's days_from_civil, inverted): no locale, no timezone, no lock.
 */
void odebug_civil_from_days(long days, int *year, unsigned int *month, unsigned int *day)
{
	long z = days + 719468;
	long era = (z >= 0 ? z : z - 146096) / 146097;
	unsigned long doe = (unsigned long)(z - era * 146097);		/* [0, 146096] */
	unsigned long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	unsigned long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);	/* [0, 365] */
	unsigned long mp = (5 * doy + 2) / 153;				/* March = 0 */

	*day = (unsigned int)(doy - (153 * mp + 2) / 5 + 1);
	*month = (unsigned int)(mp < 10 ? mp + 3 : mp - 9);
	*year = (int)((long)yoe + era * 400 + (*month <= 2));
}

/* @s, then spaces up to @width columns. */
void odebug_put_pad(struct odebug_buf *b, const char *s, size_t width)
{
	size_t n = strlen(s);

	odebug_puts(b, s);
	while (n++ < width)
		odebug_putc(b, ' ');
}

/* Length of the valid UTF-8 sequence at @s, or 0. */
static int utf8_len(const unsigned char *s)
{
	int n, i;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	for (i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

/*
 * A JSON string: quotes, backslash escapes, \u00XX for control bytes.
 * Valid UTF-8 passes through; a stray byte is escaped as \u00XX, so the
 * output is always valid JSON.
 */
void odebug_put_json_str(struct odebug_buf *b, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	odebug_putc(b, '"');
	while (s && *s) {
		unsigned char c = *s;
		int n;

		if (c == '"' || c == '\\') {
			odebug_putc(b, '\\');
			odebug_putc(b, (char)c);
		} else if (c == '\n') {
			odebug_puts(b, "\\n");
		} else if (c >= 0x80 && (n = utf8_len(s))) {
			while (n--)
				odebug_putc(b, (char)*s++);
			continue;
		} else if (c < 0x20 || c >= 0x7f) {
			odebug_puts(b, "\\u00");
			odebug_putc(b, "0123456789abcdef"[c >> 4]);
			odebug_putc(b, "0123456789abcdef"[c & 0xf]);
		} else {
			odebug_putc(b, (char)c);
		}
		s++;
	}
	odebug_putc(b, '"');
}

/*
 * One line on stderr: "ODEBUG: " then the strings given, then a newline.
 * For configuration and state messages, which are not reports.
 */
void odebug_message(const char *first, ...)
{
	struct odebug_buf b;
	va_list ap;
	const char *s;

	odebug_buf_init(&b, 2);
	odebug_puts(&b, ODEBUG_PREFIX);
	va_start(ap, first);
	for (s = first; s; s = va_arg(ap, const char *))
		odebug_puts(&b, s);
	va_end(ap);
	odebug_putc(&b, '\n');
	odebug_flush(&b);
}
