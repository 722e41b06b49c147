/* SPDX-License-Identifier: MIT */
/*
 * held-stdio.c - a stream holds the buffer the program gave it with
 * setvbuf, setbuffer or setbuf until fclose, freopen or another
 * setvbuf: glibc writes into it at every buffered call and flushes it at
 * exit.  Memory freed while a live stream uses it as its buffer is "free
 * active" of type stdio_buffer.
 *
 * libc is asked before a report: the stream must still be on glibc's
 * list of open streams (_IO_list_all, chained by _chain) with its
 * _IO_buf_base inside the freed block (both in glibc's public struct
 * _IO_FILE).  A stream closed by a call not interposed (pclose) is gone
 * from the list, so its record ends there.  fcloseall() leaves every
 * stream on the list, and one never used with its buffer; but it closes
 * them all for the program, so every record ends at it (preload/stdio.c).
 *
 * The fixup: glibc's setvbuf(stream, NULL, _IONBF, 0), which flushes
 * what is buffered (written data still in the buffer reaches the file;
 * read-ahead of a seekable file is given back by a seek) and moves the
 * stream to its own one-byte buffer inside the FILE, allocating
 * nothing.  The stream works on, unbuffered.  If the flush fails, glibc
 * leaves the buffer in place, and the fixup says so (report only).
 */
#define _GNU_SOURCE
#include <stdio.h>

#include "held-ext.h"

const struct odebug_held_stdio_calls *odebug_held_stdio_calls;

/* glibc's list of open streams (libio's head; not in an installed header). */
extern FILE *_IO_list_all;

#define STREAMS_MAX	100000	/* a corrupt list is not walked forever */

/* Is @f open, with its buffer in [@lo, @lo + @len)?  Walked unlocked: only before a report. */
static bool stream_uses(const FILE *f, uintptr_t lo, size_t len)
{
	const FILE *s = __atomic_load_n(&_IO_list_all, __ATOMIC_ACQUIRE);
	uintptr_t base;
	int n;

	for (n = 0; s && s != f && n < STREAMS_MAX; n++)
		s = __atomic_load_n(&s->_chain, __ATOMIC_ACQUIRE);
	if (s != f)
		return false;
	base = (uintptr_t)__atomic_load_n(&f->_IO_buf_base, __ATOMIC_RELAXED);
	return base >= lo && base - lo < (len ? len : 1);
}

static bool live(const struct odebug_xhold *h)
{
	return stream_uses((const FILE *)h->key, h->addr, h->len);
}

static const char *const calls[] = { "setvbuf", "setbuffer", "setbuf" };

static void describe(const struct odebug_xhold *h, struct odebug_buf *b)
{
	odebug_puts(b, calls[h->fn < 3 ? h->fn : 0]);
	odebug_puts(b, " buffer of stream ");
	odebug_put_hex(b, h->key);
	odebug_puts(b, " (fd ");
	odebug_put_dec(b, (unsigned long)((const FILE *)h->key)->_fileno);
	odebug_puts(b, ")");
}

static bool fixup(const struct odebug_xhold *h)
{
	const struct odebug_held_stdio_calls *c = odebug_load(&odebug_held_stdio_calls);

	if (!c || c->unbuffer((void *)h->key))
		return false;
	return !stream_uses((const FILE *)h->key, h->addr, h->len);
}

const struct debug_obj_descr odebug_stdio_descr = {
	.name = "stdio_buffer",
	.is_static_object = odebug_held_any_value,
	.fixup_free = odebug_held_ext_fixup,
};

const struct odebug_held_ext_ops odebug_held_stdio_ops = {
	&odebug_stdio_descr, live, describe, fixup, NULL,
};

/*
 * After a successful setvbuf (@how 0), setbuffer (1) or setbuf (2) on
 * @stream: glibc's _IO_buf_base says what it buffers in now.  The
 * caller's @buf is held when the stream took it; a NULL buffer with a
 * buffered mode keeps the buffer the stream had (glibc allocates only
 * when it had none), so an old record ends only when the stream's buffer
 * is no longer in it.
 */
void odebug_held_stdio_after(void *stream, void *buf, size_t size, int how)
{
	FILE *f = stream;
	uintptr_t base = (uintptr_t)f->_IO_buf_base;
	struct odebug_xhold c;
	unsigned int i, n;

	if (buf && base == (uintptr_t)buf && odebug_held_pointer(base)) {
		odebug_xhold_set(ODEBUG_HELD_STDIO, (uintptr_t)f, 0, base, size, (uintptr_t)how);
		return;
	}
	if (!odebug_load(&odebug_hold_count[ODEBUG_HELD_STDIO]))
		return;
	for (i = 0; (n = odebug_xhold_list(ODEBUG_HELD_STDIO, 0, &c, 1, i)); i++)
		if (c.key == (uintptr_t)f) {
			if (base < c.addr || base - c.addr >= (c.len ? c.len : 1))
				odebug_xhold_end(ODEBUG_HELD_STDIO, (uintptr_t)f, 0);
			return;
		}
}

/* fcloseall ran: every stream is closed, every buffer the program's again. */
void odebug_held_stdio_closed_all(void)
{
	struct odebug_xhold c[16];
	unsigned int n, i;

	while ((n = odebug_xhold_list(ODEBUG_HELD_STDIO, 0, c, 16, 0)))
		for (i = 0; i < n; i++)
			odebug_xhold_end(ODEBUG_HELD_STDIO, c[i].key, 0);
}

/* fclose or freopen ran on @stream: its buffer (if the program's) is free. */
void odebug_held_stdio_closed(void *stream)
{
	if (odebug_load(&odebug_hold_count[ODEBUG_HELD_STDIO]))
		odebug_xhold_end(ODEBUG_HELD_STDIO, (uintptr_t)stream, 0);
}
