/* SPDX-License-Identifier: MIT */
/*
 * uv-odebug.c - libodebug's module for libuv 1.x (libodebug-libuv.so): the
 * lifetimes libuv's documentation gives its handles, requests and loops,
 * annotated from outside with the method of odebug-shim(7).
 *
 * A handle is ACTIVE from its uv_*_init() until its close callback has
 * run: its memory belongs to the loop until then.  Its descriptor is
 * named after its type ("uv_timer").  The report's holder line, written
 * when the report is made (describe), names the loop and the handle's
 * state then: active (started: libuv's uv_is_active()), open but not
 * started, or closing (uv_close() called, its callback not run).  The
 * hint is the handle's callback (the timer's, the stream's read
 * callback...) while open, the close callback while closing.  uv_close()
 * hands libuv our own close callback, which ends the hold and then calls
 * the program's; the program's is kept in a side table keyed by the
 * handle's address (handle->data is the program's).  uv_close() itself
 * changes no tracker, and the tracker stays INACTIVE after the close
 * callback (track_begin() and track_end() below).
 *
 * A request with a callback (uv_write, uv_write2, uv_fs_* with a
 * callback, uv_getaddrinfo with a callback, uv_queue_work) is ACTIVE
 * until its callback, substituted the same way.
 *
 * A loop is ACTIVE from uv_loop_init() until a uv_loop_close() that
 * returns 0: after it, the documentation says, the memory may be freed.
 * A uv_loop_close() that returns UV_EBUSY is a legal call; freeing the
 * loop after it is the bug, reported at the free.
 *
 * libuv's own handles live inside their loop (the async handle of the
 * thread pool, the child watcher's signal handle) and are never closed
 * with uv_close(): a handle inside the uv_loop_t it is initialised on is
 * not tracked.  libuv calls its exported functions through its PLT, so
 * its other internal handles (uv_fs_poll's timer) reach the wrappers and
 * follow the same rules.  A wrapper that calls another (uv_tcp_init calls
 * uv_tcp_init_ex) annotates once: a thread-local depth.
 *
 * The descriptors poll handles poll are watches: uv-watch.c.
 *
 * No fixup: a handle or request freed while libuv still links it cannot be
 * taken back (uv_close() completes a loop iteration later, and reads the
 * handle then).  The report names the free; the tracker is dropped.
 *
 * Loaded by libodebug when the program has libuv.so.1 (modules/README.md):
 * the hooks below are the only export.  Built with ODEBUG_MODULE_PRELOAD,
 * the same wrappers are exported under libuv's names instead, for
 * LD_PRELOAD="libodebug.so.1 libodebug-libuv-preload.so" (the tests).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "odebug.h"
#include "odebug-module.h"
#include "uv-watch.h"

/* ---- the side table: the program's callback per handle or request ---- */

enum kind { K_HANDLE = 1, K_WRITE, K_FS, K_GAI, K_WORK };

struct entry {
	void *key;		/* the handle's or request's address; NULL: empty */
	void (*cb)(void);	/* the program's callback (close, or the request's) */
	uint8_t kind;
	uint8_t closing;	/* a handle: uv_close() substituted the callback */
	uint8_t type;		/* a handle: its uv_handle_type */
};

#define TABLE_BITS	16
#define TABLE_SIZE	(1u << TABLE_BITS)
#define TABLE_LIMIT	(TABLE_SIZE / 4 * 3)

static struct entry table[TABLE_SIZE];
static unsigned int used;
static int table_lock;
static unsigned long made_handles, made_requests, made_loops;

/*
 * A spinlock of our own: held for a few loads and stores, never around a
 * call into libuv or libodebug, so it nests inside anything.
 */
static void lock(void)
{
	while (__atomic_exchange_n(&table_lock, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(&table_lock, __ATOMIC_RELAXED))
			__builtin_ia32_pause();
}

static void unlock(void)
{
	__atomic_store_n(&table_lock, 0, __ATOMIC_RELEASE);
}

static unsigned int slot_of(const void *key)
{
	return (unsigned int)(((uintptr_t)key * 0x9e3779b97f4a7c15ull) >> (64 - TABLE_BITS));
}

/* The entry of @key, or NULL.  Locked (or a racy read, for the hints). */
static struct entry *find(const void *key)
{
	unsigned int i = slot_of(key);

	for (; table[i].key; i = (i + 1) & (TABLE_SIZE - 1))
		if (table[i].key == key)
			return &table[i];
	return NULL;
}

/*
 * The entry of @key, made if missing (a stale entry of memory freed and
 * reused is taken over).  NULL when the table is three quarters full:
 * the object is then not tracked and its callback not substituted.
 */
static struct entry *put(void *key, enum kind kind, void (*cb)(void))
{
	static int said;
	struct entry *e;
	unsigned int i;

	lock();
	e = find(key);
	if (!e && used < TABLE_LIMIT) {
		for (i = slot_of(key); table[i].key; i = (i + 1) & (TABLE_SIZE - 1))
			;
		e = &table[i];
		e->key = key;
		used++;
	}
	if (e) {
		e->kind = (uint8_t)kind;
		e->cb = cb;
		e->closing = 0;
	}
	unlock();
	if (!e && !__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED)) {
		static const char msg[] = "ODEBUG: libuv module: 49152 handles and "
			"requests tracked: new ones are not checked from now on\n";
		(void)!write(2, msg, sizeof(msg) - 1);
	}
	return e;
}

/* Remove @e (linear probing, backward shift: no tombstones).  Locked. */
static void erase(struct entry *e)
{
	unsigned int i = (unsigned int)(e - table), j = i, k;

	for (;;) {
		table[i].key = NULL;
		for (;;) {
			j = (j + 1) & (TABLE_SIZE - 1);
			if (!table[j].key) {
				used--;
				return;
			}
			k = slot_of(table[j].key);
			/* k cyclically in (i, j]: the entry may stay */
			if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
				continue;
			break;
		}
		table[i] = table[j];
		i = j;
	}
}

/* Take @key's entry out; its callback, or NULL when it had none. */
static void (*take(void *key, enum kind kind))(void)
{
	void (*cb)(void) = NULL;
	struct entry *e;

	lock();
	e = find(key);
	if (e && e->kind == kind) {
		cb = e->cb;
		erase(e);
	}
	unlock();
	return cb;
}

/* ---- descriptors ---- */

static void *handle_hint(void *addr);
static void *entry_hint(void *addr);
static bool kept_tracker(void *addr);

#define XX(uc, lc) [UV_##uc] = { .name = "uv_" #lc, .debug_hint = handle_hint,	\
				  .is_static_object = kept_tracker },
static const struct debug_obj_descr handle_descr[UV_HANDLE_TYPE_MAX] = {
	UV_HANDLE_TYPE_MAP(XX)
};
#undef XX

static const struct debug_obj_descr req_descr[] = {
	[K_WRITE] = { .name = "uv_write (in flight)", .debug_hint = entry_hint,
		     .is_static_object = kept_tracker },
	[K_FS] = { .name = "uv_fs (in flight)", .debug_hint = entry_hint,
		     .is_static_object = kept_tracker },
	[K_GAI] = { .name = "uv_getaddrinfo (in flight)", .debug_hint = entry_hint,
		     .is_static_object = kept_tracker },
	[K_WORK] = { .name = "uv_work (in flight)", .debug_hint = entry_hint,
		     .is_static_object = kept_tracker },
};

static const struct debug_obj_descr loop_descr = { .name = "uv_loop (not closed)" };

/*
 * A handle's hint: its close callback while closing, else its own
 * callback, read from libuv's public structures (a report runs before
 * the memory is released).
 */
static void *handle_hint(void *addr)
{
	uv_handle_t *h = addr;
	struct entry *e = find(addr);
	void (*cb)(void) = NULL;

	if (e && e->closing)
		cb = e->cb;
	else switch (h->type) {
	case UV_TIMER: cb = (void (*)(void))((uv_timer_t *)h)->timer_cb; break;
	case UV_IDLE: cb = (void (*)(void))((uv_idle_t *)h)->idle_cb; break;
	case UV_PREPARE: cb = (void (*)(void))((uv_prepare_t *)h)->prepare_cb; break;
	case UV_CHECK: cb = (void (*)(void))((uv_check_t *)h)->check_cb; break;
	case UV_ASYNC: cb = (void (*)(void))((uv_async_t *)h)->async_cb; break;
	case UV_SIGNAL: cb = (void (*)(void))((uv_signal_t *)h)->signal_cb; break;
	case UV_POLL: cb = (void (*)(void))((uv_poll_t *)h)->poll_cb; break;
	case UV_PROCESS: cb = (void (*)(void))((uv_process_t *)h)->exit_cb; break;
	case UV_FS_EVENT: cb = (void (*)(void))((uv_fs_event_t *)h)->cb; break;
	case UV_TCP: case UV_NAMED_PIPE: case UV_TTY:
		cb = (void (*)(void))((uv_stream_t *)h)->read_cb; break;
	case UV_UDP: cb = (void (*)(void))((uv_udp_t *)h)->recv_cb; break;
	default: break;
	}
	return *(void **)&cb;
}

/* A closing handle's or a request's hint: the program's callback (a read). */
static void *entry_hint(void *addr)
{
	struct entry *e = find(addr);
	void (*cb)(void) = e ? e->cb : NULL;

	return *(void **)&cb;
}

/*
 * A handle's or request's tracker is kept, INACTIVE, after its close
 * callback or its callback (until its memory is released: libodebug's free
 * check drops it), so that the next use of the same memory costs one
 * lockless activate and one lockless deactivate, not a tracker made and
 * freed.  kept[] remembers, per address hash, the last address ended and
 * its descriptor: the next begin on that address with that descriptor
 * only activates.  Any other begin (another type at the address, an entry
 * evicted, memory near this thread's stack) frees whatever tracker is
 * there and inits anew, so the type a report names is always the type of
 * the current use.  Racy reads and writes: a stale or torn entry can only
 * send a begin to the slower path, or (the same address, a descriptor
 * written by another thread's end) make one activate keep the previous
 * type's name.
 */
static struct kept {
	void *addr;
	const struct debug_obj_descr *descr;
} kept[1024];

static struct kept *kept_of(const void *addr)
{
	return &kept[((uintptr_t)addr * 0x9e3779b97f4a7c15ull) >> (64 - 10)];
}

/* An activate that finds no tracker (dropped by a free since): make it. */
static bool kept_tracker(void *addr)
{
	(void)addr;
	return true;
}

/*
 * The hold begins: ACTIVE with @descr.  An object still ACTIVE (a handle
 * initialised again while open, a request submitted again in flight) is
 * one "activate active" report at that call, whichever path it takes.
 */
static void track_begin(void *addr, const struct debug_obj_descr *descr)
{
	struct kept *k = kept_of(addr);
	uintptr_t up = (uintptr_t)addr - (uintptr_t)__builtin_frame_address(0);

	if (__atomic_load_n(&k->addr, __ATOMIC_RELAXED) != addr ||
	    __atomic_load_n(&k->descr, __ATOMIC_RELAXED) != descr || up < (64u << 20)) {
		/* An ACTIVE one (initialised again while open) is left for activate to report. */
		if (debug_object_get_state(addr) != ODEBUG_STATE_ACTIVE) {
			debug_object_free(addr, descr);
			debug_object_init_auto(addr, descr);
		}
	}
	debug_object_activate(addr, descr);
}

/* The hold ends: INACTIVE, the tracker kept for the next use. */
static void track_end(void *addr, const struct debug_obj_descr *descr)
{
	struct kept *k = kept_of(addr);

	debug_object_deactivate(addr, descr);
	__atomic_store_n(&k->addr, addr, __ATOMIC_RELAXED);
	__atomic_store_n(&k->descr, descr, __ATOMIC_RELAXED);
}

/* Append @str to @buf at *@n (at most @cap bytes, terminated). */
static void put_str(char *buf, size_t cap, size_t *n, const char *str)
{
	while (*str && *n + 1 < cap)
		buf[(*n)++] = *str++;
	buf[*n] = '\0';
}

/* Append @v in hexadecimal. */
static void put_hex(char *buf, size_t cap, size_t *n, uintptr_t v)
{
	char tmp[2 + 2 * sizeof(v) + 1], *p = tmp + sizeof(tmp) - 1;

	*p = '\0';
	do
		*--p = "0123456789abcdef"[v & 15];
	while (v >>= 4);
	*--p = 'x';
	*--p = '0';
	put_str(buf, cap, n, p);
}

static int (*real_uv_is_active)(const uv_handle_t *);

/*
 * The holder line of a handle's report (odebug_module.describe): the loop
 * and the handle's state when the report is made.  A read of the table
 * and of libuv's public fields and flags (uv_is_active() only reads them).
 */
static bool uv_describe(const struct debug_obj_descr *descr, void *addr, char *buf, size_t cap)
{
	uv_handle_t *h = addr;
	struct entry *e;
	size_t n = 0;

	if (descr < handle_descr || descr >= handle_descr + UV_HANDLE_TYPE_MAX)
		return false;
	e = find(addr);
	put_str(buf, cap, &n, "libuv loop ");
	put_hex(buf, cap, &n, (uintptr_t)h->loop);
	if (e && e->closing)
		put_str(buf, cap, &n, "; the handle is closing (uv_close called, "
			"its close callback not run yet)");
	else if (real_uv_is_active && real_uv_is_active(h))
		put_str(buf, cap, &n, "; the handle is active (started)");
	else
		put_str(buf, cap, &n, "; the handle is open, not started "
			"(initialised, uv_close not called)");
	/* Why there is no fixup, and what the program must do instead. */
	put_str(buf, cap, &n, "; no fixup can take it back (libuv reads a handle "
		"until its close callback runs): uv_close() it, free it in the close callback");
	return true;
}

/* ---- the wrappers ---- */

/*
 * Inside a wrapper on this thread: a nested wrapped call annotates nothing.
 * Initial-exec: one load from the thread pointer, not a __tls_get_addr()
 * call per access (a module loaded by dlopen() takes its four bytes from
 * glibc's surplus static TLS).
 */
static __thread int depth __attribute__((tls_model("initial-exec")));

/* Every function wrapped: libuv's definition in real_NAME, the wrapper in wrap_NAME. */
#define HOOKS(X) X(uv_timer_init) X(uv_idle_init) X(uv_prepare_init) \
	X(uv_check_init) X(uv_async_init) X(uv_signal_init) X(uv_tcp_init) \
	X(uv_tcp_init_ex) X(uv_udp_init) X(uv_udp_init_ex) X(uv_pipe_init) \
	X(uv_tty_init) X(uv_poll_init) X(uv_poll_init_socket) X(uv_fs_event_init) \
	X(uv_fs_poll_init) X(uv_spawn) X(uv_close) X(uv_write) X(uv_write2) \
	X(uv_getaddrinfo) X(uv_queue_work) X(uv_loop_init) X(uv_loop_close) \
	X(uv_fs_close) X(uv_fs_open) X(uv_fs_read) X(uv_fs_unlink) X(uv_fs_write) \
	X(uv_fs_copyfile) X(uv_fs_mkdir) X(uv_fs_mkdtemp) X(uv_fs_mkstemp) \
	X(uv_fs_rmdir) X(uv_fs_scandir) X(uv_fs_opendir) X(uv_fs_readdir) \
	X(uv_fs_closedir) X(uv_fs_stat) X(uv_fs_fstat) X(uv_fs_lstat) \
	X(uv_fs_statfs) X(uv_fs_rename) X(uv_fs_fsync) X(uv_fs_fdatasync) \
	X(uv_fs_ftruncate) X(uv_fs_sendfile) X(uv_fs_access) X(uv_fs_chmod) \
	X(uv_fs_fchmod) X(uv_fs_utime) X(uv_fs_futime) X(uv_fs_lutime) X(uv_fs_link) \
	X(uv_fs_symlink) X(uv_fs_readlink) X(uv_fs_realpath) X(uv_fs_chown) \
	X(uv_fs_fchown) X(uv_fs_lchown)

#define X(name) static __typeof__(name) *real_##name;
HOOKS(X)
#undef X

/* Is @h inside the loop structure (one of libuv's own handles)? */
static bool in_loop(const uv_loop_t *loop, const void *h)
{
	return (const char *)h >= (const char *)loop &&
	       (const char *)h < (const char *)loop + sizeof(*loop);
}

/* A handle initialised: ACTIVE until its close callback has run. */
static void handle_made(uv_loop_t *loop, uv_handle_t *h)
{
	unsigned int type = h->type;

	if (in_loop(loop, h) || type >= UV_HANDLE_TYPE_MAX || !handle_descr[type].name)
		return;
	if (!put(h, K_HANDLE, NULL))
		return;
	__atomic_fetch_add(&made_handles, 1, __ATOMIC_RELAXED);
	track_begin(h, &handle_descr[type]);
}

/* One wrapper per handle type's init function (and uv_spawn, which initialises too). */
#define HANDLE_INIT(name, P, A, H)						\
	static int wrap_##name P						\
	{									\
		int ret;							\
										\
		if (depth)							\
			return real_##name A;					\
		depth++;							\
		ret = real_##name A;						\
		depth--;							\
		if (ret == 0)							\
			handle_made(loop, (uv_handle_t *)(H));			\
		return ret;							\
	}

HANDLE_INIT(uv_timer_init, (uv_loop_t *loop, uv_timer_t *h), (loop, h), h)
HANDLE_INIT(uv_idle_init, (uv_loop_t *loop, uv_idle_t *h), (loop, h), h)
HANDLE_INIT(uv_prepare_init, (uv_loop_t *loop, uv_prepare_t *h), (loop, h), h)
HANDLE_INIT(uv_check_init, (uv_loop_t *loop, uv_check_t *h), (loop, h), h)
HANDLE_INIT(uv_async_init, (uv_loop_t *loop, uv_async_t *h, uv_async_cb cb), (loop, h, cb), h)
HANDLE_INIT(uv_signal_init, (uv_loop_t *loop, uv_signal_t *h), (loop, h), h)
HANDLE_INIT(uv_tcp_init, (uv_loop_t *loop, uv_tcp_t *h), (loop, h), h)
HANDLE_INIT(uv_tcp_init_ex, (uv_loop_t *loop, uv_tcp_t *h, unsigned int flags), (loop, h, flags), h)
HANDLE_INIT(uv_udp_init, (uv_loop_t *loop, uv_udp_t *h), (loop, h), h)
HANDLE_INIT(uv_udp_init_ex, (uv_loop_t *loop, uv_udp_t *h, unsigned int flags), (loop, h, flags), h)
HANDLE_INIT(uv_pipe_init, (uv_loop_t *loop, uv_pipe_t *h, int ipc), (loop, h, ipc), h)
HANDLE_INIT(uv_tty_init, (uv_loop_t *loop, uv_tty_t *h, uv_file fd, int readable), (loop, h, fd, readable), h)
HANDLE_INIT(uv_poll_init, (uv_loop_t *loop, uv_poll_t *h, int fd), (loop, h, fd), h)
HANDLE_INIT(uv_poll_init_socket, (uv_loop_t *loop, uv_poll_t *h, uv_os_sock_t s), (loop, h, s), h)
HANDLE_INIT(uv_fs_event_init, (uv_loop_t *loop, uv_fs_event_t *h), (loop, h), h)
HANDLE_INIT(uv_fs_poll_init, (uv_loop_t *loop, uv_fs_poll_t *h), (loop, h), h)
HANDLE_INIT(uv_spawn, (uv_loop_t *loop, uv_process_t *h, const uv_process_options_t *o), (loop, h, o), h)

/* The close callback libuv calls: the hold ends, then the program's runs. */
static void close_trampoline(uv_handle_t *h)
{
	uv_close_cb cb = (uv_close_cb)take(h, K_HANDLE);
	unsigned int type = h->type;

	if (type < UV_HANDLE_TYPE_MAX) {
		track_end(h, &handle_descr[type]);
	}
	if (cb)
		cb(h);
}

/*
 * A tracked open handle is marked closing in the table (its tracker stays
 * ACTIVE until the close callback), and libuv gets our close callback.
 * Decided by the table, not the depth: libuv's own uv_close() of
 * uv_fs_poll's timer happens inside the program's.
 */
static void wrap_uv_close(uv_handle_t *h, uv_close_cb cb)
{
	unsigned int type = h->type;
	bool mine = false;
	struct entry *e;

	lock();
	e = find(h);
	if (e && e->kind == K_HANDLE && !e->closing && type < UV_HANDLE_TYPE_MAX) {
		e->closing = 1;
		e->cb = (void (*)(void))cb;
		mine = true;
	}
	unlock();
	if (type == UV_POLL) {
		int fd = ((uv_poll_t *)h)->io_watcher.fd;

		real_uv_close(h, mine ? close_trampoline : cb);
		uv_watch_end(fd, h);	/* uv_close() stopped the poll */
		return;
	}
	real_uv_close(h, mine ? close_trampoline : cb);
}

/* A request submitted with a callback: ACTIVE until that callback. */
static bool req_begin(void *req, enum kind kind, void (*cb)(void))
{
	if (depth || !put(req, kind, cb))
		return false;
	__atomic_fetch_add(&made_requests, 1, __ATOMIC_RELAXED);
	track_begin(req, &req_descr[kind]);
	return true;
}

/* The request's callback came (or its submission failed): the hold ends. */
static void (*req_end(void *req, enum kind kind))(void)
{
	void (*cb)(void) = take(req, kind);

	track_end(req, &req_descr[kind]);
	return cb;
}

static void write_trampoline(uv_write_t *req, int status)
{
	uv_write_cb cb = (uv_write_cb)req_end(req, K_WRITE);

	if (cb)
		cb(req, status);
}

/* libuv's uv_write() is uv_write2() without a handle to send: called so, straight. */
static int wrap_uv_write(uv_write_t *req, uv_stream_t *h, const uv_buf_t bufs[],
		    unsigned int n, uv_write_cb cb)
{
	bool mine = req_begin(req, K_WRITE, (void (*)(void))cb);
	int ret;

	if (!mine)
		return real_uv_write(req, h, bufs, n, cb);
	depth++;
	ret = real_uv_write2(req, h, bufs, n, NULL, write_trampoline);
	depth--;
	if (ret < 0)
		req_end(req, K_WRITE);
	return ret;
}

static int wrap_uv_write2(uv_write_t *req, uv_stream_t *h, const uv_buf_t bufs[],
		     unsigned int n, uv_stream_t *send, uv_write_cb cb)
{
	bool mine = req_begin(req, K_WRITE, (void (*)(void))cb);
	int ret;

	if (!mine)
		return real_uv_write2(req, h, bufs, n, send, cb);
	depth++;
	ret = real_uv_write2(req, h, bufs, n, send, mine ? write_trampoline : cb);
	depth--;
	if (ret < 0 && mine)
		req_end(req, K_WRITE);
	return ret;
}

static void gai_trampoline(uv_getaddrinfo_t *req, int status, struct addrinfo *res)
{
	uv_getaddrinfo_cb cb = (uv_getaddrinfo_cb)req_end(req, K_GAI);

	if (cb)
		cb(req, status, res);
}

static int wrap_uv_getaddrinfo(uv_loop_t *loop, uv_getaddrinfo_t *req, uv_getaddrinfo_cb cb,
			  const char *node, const char *service, const struct addrinfo *hints)
{
	bool mine = cb && req_begin(req, K_GAI, (void (*)(void))cb);
	int ret;

	depth++;
	ret = real_uv_getaddrinfo(loop, req, mine ? gai_trampoline : cb, node, service, hints);
	depth--;
	if (ret < 0 && mine)
		req_end(req, K_GAI);
	return ret;
}

static void work_trampoline(uv_work_t *req, int status)
{
	uv_after_work_cb cb = (uv_after_work_cb)req_end(req, K_WORK);

	if (cb)
		cb(req, status);
}

/* The after-work callback may be NULL: ours stands in anyway, the hold ends there. */
static int wrap_uv_queue_work(uv_loop_t *loop, uv_work_t *req, uv_work_cb work, uv_after_work_cb after)
{
	bool mine = work && req_begin(req, K_WORK, (void (*)(void))after);
	int ret;

	depth++;
	ret = real_uv_queue_work(loop, req, work, mine ? work_trampoline : after);
	depth--;
	if (ret < 0 && mine)
		req_end(req, K_WORK);
	return ret;
}

static void fs_trampoline(uv_fs_t *req)
{
	uv_fs_cb cb = (uv_fs_cb)req_end(req, K_FS);

	if (cb)
		cb(req);
}

#define UNPAREN(...) __VA_ARGS__
/* uv_fs_OP(loop, req, ..., cb): tracked when the callback makes it asynchronous. */
#define FS(op, P, A)								\
	static int wrap_uv_fs_##op(uv_loop_t *loop, uv_fs_t *req, UNPAREN P, uv_fs_cb cb) \
	{									\
		bool mine = cb && req_begin(req, K_FS, (void (*)(void))cb);	\
		int ret;							\
										\
		depth++;							\
		ret = real_uv_fs_##op(loop, req, UNPAREN A, mine ? fs_trampoline : cb); \
		depth--;							\
		if (ret < 0 && mine)						\
			req_end(req, K_FS);					\
		return ret;							\
	}

FS(close, (uv_file file), (file))
FS(open, (const char *path, int flags, int mode), (path, flags, mode))
FS(read, (uv_file file, const uv_buf_t bufs[], unsigned int n, int64_t off), (file, bufs, n, off))
FS(unlink, (const char *path), (path))
FS(write, (uv_file file, const uv_buf_t bufs[], unsigned int n, int64_t off), (file, bufs, n, off))
FS(copyfile, (const char *path, const char *new_path, int flags), (path, new_path, flags))
FS(mkdir, (const char *path, int mode), (path, mode))
FS(mkdtemp, (const char *tpl), (tpl))
FS(mkstemp, (const char *tpl), (tpl))
FS(rmdir, (const char *path), (path))
FS(scandir, (const char *path, int flags), (path, flags))
FS(opendir, (const char *path), (path))
FS(readdir, (uv_dir_t *dir), (dir))
FS(closedir, (uv_dir_t *dir), (dir))
FS(stat, (const char *path), (path))
FS(fstat, (uv_file file), (file))
FS(lstat, (const char *path), (path))
FS(statfs, (const char *path), (path))
FS(rename, (const char *path, const char *new_path), (path, new_path))
FS(fsync, (uv_file file), (file))
FS(fdatasync, (uv_file file), (file))
FS(ftruncate, (uv_file file, int64_t off), (file, off))
FS(sendfile, (uv_file out, uv_file in, int64_t off, size_t len), (out, in, off, len))
FS(access, (const char *path, int mode), (path, mode))
FS(chmod, (const char *path, int mode), (path, mode))
FS(fchmod, (uv_file file, int mode), (file, mode))
FS(utime, (const char *path, double at, double mt), (path, at, mt))
FS(futime, (uv_file file, double at, double mt), (file, at, mt))
FS(lutime, (const char *path, double at, double mt), (path, at, mt))
FS(link, (const char *path, const char *new_path), (path, new_path))
FS(symlink, (const char *path, const char *new_path, int flags), (path, new_path, flags))
FS(readlink, (const char *path), (path))
FS(realpath, (const char *path), (path))
FS(chown, (const char *path, uv_uid_t uid, uv_gid_t gid), (path, uid, gid))
FS(fchown, (uv_file file, uv_uid_t uid, uv_gid_t gid), (file, uid, gid))
FS(lchown, (const char *path, uv_uid_t uid, uv_gid_t gid), (path, uid, gid))

/* A loop: ACTIVE until a uv_loop_close() that returns 0 (the default loop's too). */
static int wrap_uv_loop_init(uv_loop_t *loop)
{
	int ret;

	depth++;
	ret = real_uv_loop_init(loop);
	depth--;
	if (ret == 0) {
		__atomic_fetch_add(&made_loops, 1, __ATOMIC_RELAXED);
		debug_object_init_auto(loop, &loop_descr);
		debug_object_activate(loop, &loop_descr);
	}
	return ret;
}

/* UV_EBUSY (open handles or requests) leaves the loop held: freeing it is the bug. */
static int wrap_uv_loop_close(uv_loop_t *loop)
{
	int ret = real_uv_loop_close(loop);

	if (ret == 0 && debug_object_get_state(loop) == ODEBUG_STATE_ACTIVE) {
		debug_object_deactivate(loop, &loop_descr);
		debug_object_free(loop, &loop_descr);
	}
	return ret;
}

/*
 * Does libuv still poll @fd for the poll handle @h (asked at a close)?  A
 * racy read of the table, as the hints make: an entry not closing means
 * the handle's memory is still libuv's.
 */
bool uv_odebug_polls(const uv_poll_t *h, int fd)
{
	const struct entry *e = find(h);

	return e && e->kind == K_HANDLE && !e->closing && h->type == UV_POLL &&
	       real_uv_is_active((const uv_handle_t *)h) && h->io_watcher.fd == fd;
}

/* What libodebug reads (modules/odebug-module.h): each hook, its wrapper, its real. */
#define X(name) { #name, (void *)wrap_##name, (void **)&real_##name },
ODEBUG_MODULE_EXPORT const struct odebug_module odebug_module = {
	.abi = ODEBUG_MODULE_ABI,
	.name = "libuv",
	.hooks = (const struct odebug_hook[]){
		HOOKS(X)
		WATCH_HOOKS(X)
		{ "uv_is_active", NULL, (void **)&real_uv_is_active },	/* only called */
		{ NULL, NULL, NULL } },
	.describe = uv_describe,
	.services = uv_watch_services,
};
#undef X

#ifdef ODEBUG_MODULE_PRELOAD
/*
 * The preloaded variant (the tests' libodebug-libuv-preload.so): the
 * wrappers also under libuv's names, each real the next definition.
 */
#define X(name) extern __typeof__(name) name					\
	__attribute__((alias("wrap_" #name), visibility("default")));
HOOKS(X)
#undef X

static void resolve(void)
{
	for (const struct odebug_hook *h = odebug_module.hooks; h->symbol; h++)
		*h->real = dlsym(RTLD_NEXT, h->symbol);
}
#else
static void resolve(void) {}
#endif

/* Our frames left out of reports and origins. */
__attribute__((constructor)) static void uv_module_init(void)
{
	resolve();
	debug_objects_skip_module((void *)uv_module_init);
}

/*
 * ODEBUG_MODULE_COUNTS=FILE: how many handles, requests and loops the
 * module tracked, appended to FILE at exit (the real-program checks).
 */
__attribute__((destructor)) static void uv_module_counts(void)
{
	const char *path = getenv("ODEBUG_MODULE_COUNTS");
	char line[160];
	FILE *f;

	if (!path || !*path || !(f = fopen(path, "a")))
		return;
	snprintf(line, sizeof(line), "libuv: %lu handles, %lu requests, %lu loops\n",
		 made_handles, made_requests, made_loops);
	fputs(line, f);
	fclose(f);
}
