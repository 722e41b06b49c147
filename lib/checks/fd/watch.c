/* SPDX-License-Identifier: MIT */
/*
 * watch.c - descriptors a library polls for the program (a GLib unix-fd
 * source, a libevent event, a libuv poll handle), as the annotation
 * modules say through odebug_services (modules/odebug-module.h): a close
 * of a watched descriptor is reported at that close and not made, so the
 * library's later removal of its watch, or its next poll, does not act on
 * another file that took the number (odebug-fd(7)).
 *
 * A watch is not an owner tag: fdsan's slot stays the program's (a watch
 * never makes an exchange fail nor changes android_fdsan_get_owner_tag()),
 * and a descriptor may be a stream's and watched at once.  Each
 * descriptor has a few watch records, mapped at the first watch, and a
 * count beside its tag (ODEBUG_FD_COUNTS), the one more load a close of
 * an unowned descriptor makes.  A record says who began the watch; the
 * library says at the close whether it still polls (the type's live()),
 * so a watch it ended unseen (a one-shot event that fired, a source that
 * returned G_SOURCE_REMOVE) is dropped silently there.  Records are
 * claimed and released by compare-and-swap, no lock: watch_end() runs on
 * free()'s path (a module's released()).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fd.h"
#include "../modules/odebug-module.h"

#define WATCH_SLOTS	3	/* a read and a write event, and one more */
#define WATCH_BUSY	((const void *)1)	/* a record being filled */

struct fd_watch {
	const void *owner;	/* NULL: free */
	const struct odebug_watch_type *type;
	unsigned long id;
	int pid;		/* the process that began it */
};

static struct fd_watch (*watches)[WATCH_SLOTS];

#define WATCH_MAP_SIZE	((size_t)ODEBUG_FD_MAX * sizeof(*watches))

extern const struct debug_obj_descr odebug_fd_descr;

static struct fd_watch (*watches_get(void))[WATCH_SLOTS]
{
	struct fd_watch (*w)[WATCH_SLOTS] = __atomic_load_n(&watches, __ATOMIC_ACQUIRE);
	struct fd_watch (*expect)[WATCH_SLOTS] = NULL;

	if (w)
		return w;
	w = odebug_reserve(WATCH_MAP_SIZE);
	if (!w)
		return NULL;
	if (!__atomic_compare_exchange_n(&watches, &expect, w, false, __ATOMIC_RELEASE,
					 __ATOMIC_ACQUIRE)) {
		odebug_unmap(w, WATCH_MAP_SIZE);
		return expect;
	}
	return w;
}

/* Release @r if it still holds @owner. */
static void release(uint64_t *t, int fd, struct fd_watch *r, const void *owner)
{
	if (__atomic_compare_exchange_n(&r->owner, &owner, NULL, false, __ATOMIC_ACQ_REL,
					__ATOMIC_RELAXED))
		__atomic_fetch_sub(&ODEBUG_FD_COUNTS(t)[fd], 1, __ATOMIC_RELEASE);
}

/* Claim a free record of @fd for @owner; false when all are taken. */
static bool claim(uint64_t *t, int fd, struct fd_watch *s, const void *owner, unsigned long id,
		  const struct odebug_watch_type *type)
{
	for (int i = 0; i < WATCH_SLOTS; i++) {
		const void *none = NULL;

		if (!__atomic_compare_exchange_n(&s[i].owner, &none, WATCH_BUSY, false,
						 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			continue;
		s[i].type = type;
		s[i].id = id;
		s[i].pid = odebug_load(&odebug_fd_pid);
		__atomic_fetch_add(&ODEBUG_FD_COUNTS(t)[fd], 1, __ATOMIC_RELAXED);
		__atomic_store_n(&s[i].owner, owner, __ATOMIC_RELEASE);
		return true;
	}
	return false;
}

/* Records whose library no longer polls: released (room for a new watch). */
static void prune(uint64_t *t, int fd, struct fd_watch *s)
{
	for (int i = 0; i < WATCH_SLOTS; i++) {
		const void *o = __atomic_load_n(&s[i].owner, __ATOMIC_ACQUIRE);
		unsigned long id = s[i].id;

		if (o && o != WATCH_BUSY && !s[i].type->live(o, fd, &id))
			release(t, fd, &s[i], o);
	}
}

/*
 * odebug_services.watch_begin: @owner watches @fd.  The standard
 * descriptors are nobody's, as for owners.  Once per owner and
 * descriptor: a watch begun again (an event added again) keeps its record.
 */
void odebug_fd_watch_begin(int fd, const void *owner, unsigned long id,
			   const struct odebug_watch_type *type)
{
	struct fd_watch (*w)[WATCH_SLOTS], *s;
	int saved = errno;
	uint64_t *t;

	if (fd <= 2 || (unsigned int)fd >= ODEBUG_FD_MAX || !owner || !type || !type->live ||
	    !odebug_fd_ready())
		return;
	t = odebug_fd_map();
	w = watches_get();
	if (!t || !w)
		goto out;
	s = w[fd];
	for (int i = 0; i < WATCH_SLOTS; i++)
		if (__atomic_load_n(&s[i].owner, __ATOMIC_ACQUIRE) == owner) {
			if (id)
				s[i].id = id;
			goto out;
		}
	odebug_fd_raise_high((unsigned int)fd);
	if (!claim(t, fd, s, owner, id, type)) {
		prune(t, fd, s);
		claim(t, fd, s, owner, id, type);	/* still full: not seen (silent) */
	}
out:
	errno = saved;
}

static void end_one(uint64_t *t, int fd, const void *owner)
{
	struct fd_watch *s = watches[fd];

	for (int i = 0; i < WATCH_SLOTS; i++)
		if (__atomic_load_n(&s[i].owner, __ATOMIC_RELAXED) == owner)
			release(t, fd, &s[i], owner);
}

/*
 * odebug_services.watch_end: @owner's watch of @fd ended; @fd -1, of every
 * descriptor (its memory is being released: lockless, no call out).
 */
void odebug_fd_watch_end(int fd, const void *owner)
{
	uint64_t *t = odebug_load(&odebug_fd_tags);
	unsigned int f, high;

	if (!t || !__atomic_load_n(&watches, __ATOMIC_ACQUIRE) || !owner)
		return;
	if (fd >= 0) {
		if ((unsigned int)fd < ODEBUG_FD_MAX && odebug_load(&ODEBUG_FD_COUNTS(t)[fd]))
			end_one(t, fd, owner);
		return;
	}
	high = odebug_load(&odebug_fd_high);
	for (f = 3; f < high && f < ODEBUG_FD_MAX; f++)
		if (odebug_load(&ODEBUG_FD_COUNTS(t)[f]))
			end_one(t, (int)f, owner);
}

/* The close was not made; @fix false: it was (glibc's own, inside fclose). */
static bool watch_keep(void *addr, enum debug_obj_state state)
{
	(void)addr;
	return state == ODEBUG_STATE_ACTIVE;
}

/* "GLib fd source id 5 (g_unix_fd_add) watches fd 7; this close() ..." */
static void describe(char *buf, size_t cap, int fd, const void *owner, unsigned long id,
		     const struct odebug_watch_type *type, const char *op, bool fix)
{
	struct odebug_buf b;

	odebug_buf_init_mem(&b, buf, cap - 1);
	odebug_puts(&b, type->owner ? type->owner : "watch");
	if (id) {
		odebug_puts(&b, " id ");
		odebug_put_dec(&b, id);
	} else {
		odebug_putc(&b, ' ');
		odebug_put_hex(&b, (uintptr_t)owner);
	}
	if (type->how) {
		odebug_puts(&b, " (");
		odebug_puts(&b, type->how);
		odebug_putc(&b, ')');
	}
	odebug_puts(&b, " watches fd ");
	odebug_put_dec(&b, (unsigned long)fd);
	odebug_puts(&b, "; this ");
	odebug_puts(&b, op);
	if (!fix)
		odebug_puts(&b, "() closed it, and the watch now polls whatever file takes the "
			    "number");
	else if (op[0] == 'd')
		odebug_puts(&b, "() was not made (it failed with EBUSY), so the watch polls no "
			    "other file");
	else
		odebug_puts(&b, "() was not made (it returned 0), so the watch polls no other "
			    "file, and the descriptor stays open");
	if (type->remover) {
		odebug_puts(&b, "; end the watch (");
		odebug_puts(&b, type->remover);
		odebug_puts(&b, ") before the close");
	}
	buf[b.len] = '\0';
}

static bool report_watch(int fd, const void *owner, unsigned long id,
			 const struct odebug_watch_type *type, const char *op, bool fix)
{
	char holder[ODEBUG_FD_HOLDER_LEN];
	struct odebug_snapshot o = {
		.addr = (uintptr_t)&odebug_fd_tags[fd], .descr = &odebug_fd_descr,
		.state = ODEBUG_STATE_ACTIVE, .name = odebug_fd_descr.name,
	};

	describe(holder, sizeof(holder), fd, owner, id, type, op, fix);
	return odebug_fd_report(&o, op, holder, fix ? watch_keep : NULL) && fix;
}

/*
 * Is the caller's culprit frame (the first outside libodebug and libc) in
 * an object whose file name, past its last '/', begins with one of
 * @names?  The stack walked as a report's, the object named by dladdr().
 */
static bool culprit_in(const char *const *names)
{
	void *pcs[16 + ODEBUG_FRAME_SLACK];
	int n = odebug_backtrace(pcs, (int)(sizeof(pcs) / sizeof(pcs[0])));
	int i = odebug_backtrace_culprit(pcs, odebug_backtrace_skip(pcs, n), n);
	Dl_info info;
	const char *base;

	/* A return address: the call is the byte before it. */
	if (i >= n || !dladdr((const char *)pcs[i] - 1, &info) || !info.dli_fname)
		return false;
	base = strrchr(info.dli_fname, '/');
	base = base ? base + 1 : info.dli_fname;
	for (; *names; names++)
		if (**names && !strncmp(base, *names, strlen(*names)))
			return true;
	return false;
}

/*
 * Is this close the library's own (its code the culprit's frame)?  Its
 * closes before it ends its watch are its business: GIO closes a socket
 * and destroys the socket's source after.  @own caches the answer: -1
 * not asked yet.
 */
static bool own_close(const struct odebug_watch_type *type, int *own)
{
	if (!type->own_code)
		return false;
	if (*own < 0)
		*own = culprit_in(type->own_code);
	return *own;
}

/*
 * A close of @fd (@op) by this process @pid: the first watch its library
 * still polls with is reported (true: the close is not to be made, when
 * @fix); the others, ended unseen or by the library's own close, are
 * released.  Asked only when the count says @fd has a record.
 */
bool odebug_fd_watch_close(int fd, const char *op, bool fix, int pid)
{
	struct fd_watch (*w)[WATCH_SLOTS] = __atomic_load_n(&watches, __ATOMIC_ACQUIRE);
	uint64_t *t = odebug_load(&odebug_fd_tags);
	struct fd_watch *s;
	int own = -1;

	if (!w || !t || fd < 0 || (unsigned int)fd >= ODEBUG_FD_MAX)
		return false;
	s = w[fd];
	for (int i = 0; i < WATCH_SLOTS; i++) {
		const void *o = __atomic_load_n(&s[i].owner, __ATOMIC_ACQUIRE);
		const struct odebug_watch_type *type = s[i].type;
		unsigned long id = s[i].id;

		/* A fork child's inherited watches are its parent's. */
		if (!o || o == WATCH_BUSY || s[i].pid != pid)
			continue;
		if (!type->live(o, fd, &id)) {
			release(t, fd, &s[i], o);
			continue;
		}
		/* The report needs libodebug started (a watch did not start it). */
		if (!odebug_interposer_ready())
			return false;
		/* Made: a later close of the number is another file's. */
		if (own_close(type, &own)) {
			release(t, fd, &s[i], o);
			continue;
		}
		return report_watch(fd, o, id, type, op, fix);
	}
	return false;
}

void odebug_fd_watch_owner_close(int fd, const char *op)
{
	int pid = odebug_load(&odebug_fd_pid);

	/* A vfork child shares our memory: it judges nothing. */
	if ((int)syscall(SYS_getpid) == pid)
		odebug_fd_watch_close(fd, op, false, pid);
}
