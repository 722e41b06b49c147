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
 *
 * A type with loop_here (libevent's events) is judged later: its
 * library's own code closes a descriptor and ends the watch right after,
 * so a close that meets a live watch of it is made, its stack recorded
 * in a suspect, and the watch asked again at the closing thread's next
 * poll by the library's loop (preload/epoll.c): still live, it is
 * reported then, with the close's stack, and stopped by the type's fixup.
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

/*
 * A close judged at the loop's next poll: the record it met (its owner
 * then), the closing thread and call, and the close's stack.  A suspect
 * goes when it is judged, or with its record.  States move by
 * compare-and-swap: free, filling, ready, judging.
 */
#define SUSPECTS	16
enum { SUSPECT_FREE, SUSPECT_FILLING, SUSPECT_READY, SUSPECT_JUDGING };

struct suspect {
	int state;
	int fd, tid;
	struct fd_watch *record;
	const void *owner;
	const char *op;
	int n;
	void *pcs[ODEBUG_MAX_FRAMES + ODEBUG_FRAME_SLACK];
};

static ODEBUG_LARGE struct suspect suspects[SUSPECTS];
/* How many suspects are not free: the polls' one load (preload/epoll.c). */
int odebug_fd_suspects;

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

static void suspect_free(struct suspect *e)
{
	/* No record: a suspect being filled is never taken for its old one's. */
	__atomic_store_n(&e->record, NULL, __ATOMIC_RELAXED);
	__atomic_store_n(&e->state, SUSPECT_FREE, __ATOMIC_RELEASE);
	__atomic_fetch_sub(&odebug_fd_suspects, 1, __ATOMIC_RELEASE);
}

/* The suspects of the record @r (released, or begun anew) go, unjudged. */
static void suspects_drop(const struct fd_watch *r)
{
	if (!odebug_load(&odebug_fd_suspects))
		return;
	for (int i = 0; i < SUSPECTS; i++) {
		struct suspect *e = &suspects[i];
		int ready = SUSPECT_READY;

		if (__atomic_load_n(&e->record, __ATOMIC_RELAXED) == r &&
		    __atomic_compare_exchange_n(&e->state, &ready, SUSPECT_JUDGING, false,
						__ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
			if (e->record == r)
				suspect_free(e);
			else
				__atomic_store_n(&e->state, SUSPECT_READY, __ATOMIC_RELEASE);
		}
	}
}

/* Release @r if it still holds @owner. */
static void release(uint64_t *t, int fd, struct fd_watch *r, const void *owner)
{
	if (__atomic_compare_exchange_n(&r->owner, &owner, NULL, false, __ATOMIC_ACQ_REL,
					__ATOMIC_RELAXED)) {
		__atomic_fetch_sub(&ODEBUG_FD_COUNTS(t)[fd], 1, __ATOMIC_RELEASE);
		suspects_drop(r);
	}
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
 * descriptor: a watch begun again (an event added again) keeps its
 * record, and a close judged later is not judged against it.
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
			suspects_drop(&s[i]);	/* begun anew after the close */
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

/* "GLib fd source id 5 (g_unix_fd_add)", "libevent event 0x55d0c1e2a4c0 (event_add)" */
static void put_watch(struct odebug_buf *b, const void *owner, unsigned long id,
		      const struct odebug_watch_type *type)
{
	odebug_puts(b, type->owner ? type->owner : "watch");
	if (id) {
		odebug_puts(b, " id ");
		odebug_put_dec(b, id);
	} else {
		odebug_putc(b, ' ');
		odebug_put_hex(b, (uintptr_t)owner);
	}
	if (type->how) {
		odebug_puts(b, " (");
		odebug_puts(b, type->how);
		odebug_putc(b, ')');
	}
}

/* "GLib fd source id 5 (g_unix_fd_add) watches fd 7; this close() ..." */
static void describe(char *buf, size_t cap, int fd, const void *owner, unsigned long id,
		     const struct odebug_watch_type *type, const char *op, bool fix)
{
	struct odebug_buf b;

	odebug_buf_init_mem(&b, buf, cap - 1);
	put_watch(&b, owner, id, type);
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

/* A free suspect, claimed (filling); NULL when all are taken by live watches. */
static struct suspect *suspect_claim(void)
{
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < SUSPECTS; i++) {
			int none = SUSPECT_FREE;

			if (__atomic_compare_exchange_n(&suspects[i].state, &none, SUSPECT_FILLING,
							false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
				__atomic_fetch_add(&odebug_fd_suspects, 1, __ATOMIC_RELAXED);
				return &suspects[i];
			}
		}
		/* Full: those whose watch ended unseen (their thread polls no loop) go. */
		for (int i = 0; i < SUSPECTS; i++) {
			struct suspect *e = &suspects[i];
			int ready = SUSPECT_READY;
			unsigned long id;

			if (!__atomic_compare_exchange_n(&e->state, &ready, SUSPECT_JUDGING, false,
							 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
				continue;
			id = e->record->id;
			if (__atomic_load_n(&e->record->owner, __ATOMIC_ACQUIRE) != e->owner ||
			    !e->record->type->live(e->owner, e->fd, &id))
				suspect_free(e);
			else
				__atomic_store_n(&e->state, SUSPECT_READY, __ATOMIC_RELEASE);
		}
	}
	return NULL;
}

/*
 * A close of @fd (@op) met @owner's live watch @r, of a type judged later:
 * the close is made, and its stack kept for the loop's next poll.  The
 * first close is the culprit: a record has one suspect.  All taken: not
 * judged (silent).
 */
static void suspect_close(int fd, struct fd_watch *r, const void *owner, const char *op)
{
	struct suspect *e;
	int n, first;

	for (int i = 0; i < SUSPECTS; i++)
		if (__atomic_load_n(&suspects[i].state, __ATOMIC_ACQUIRE) != SUSPECT_FREE &&
		    __atomic_load_n(&suspects[i].record, __ATOMIC_RELAXED) == r)
			return;
	e = suspect_claim();
	if (!e)
		return;
	n = odebug_backtrace(e->pcs, (int)odebug_opt.stack_depth + ODEBUG_FRAME_SLACK);
	first = odebug_backtrace_skip(e->pcs, n);
	n -= first;
	if (n > (int)odebug_opt.stack_depth)
		n = (int)odebug_opt.stack_depth;
	memmove(e->pcs, e->pcs + first, (size_t)n * sizeof(e->pcs[0]));
	e->n = n;
	e->fd = fd;
	e->tid = odebug_gettid();
	e->owner = owner;
	e->op = op;
	__atomic_store_n(&e->record, r, __ATOMIC_RELAXED);
	__atomic_store_n(&e->state, SUSPECT_READY, __ATOMIC_RELEASE);
}

/* The report's fixup: the type stops the watch it judged (this thread's). */
static ODEBUG_TLS const void *stopping_owner;
static ODEBUG_TLS const struct odebug_watch_type *stopping_type;

static bool stop_watch(void *addr, enum debug_obj_state state)
{
	(void)addr;
	return state == ODEBUG_STATE_ACTIVE && stopping_type->stop &&
	       stopping_type->stop(stopping_owner);
}

/* "libevent event 0x... (event_add) watched fd 7 when this close() closed it, ..." */
static void describe_later(char *buf, size_t cap, const struct suspect *e, unsigned long id,
			   const struct odebug_watch_type *type)
{
	struct odebug_buf b;

	odebug_buf_init_mem(&b, buf, cap - 1);
	put_watch(&b, e->owner, id, type);
	odebug_puts(&b, " watched fd ");
	odebug_put_dec(&b, (unsigned long)e->fd);
	odebug_puts(&b, " when this ");
	odebug_puts(&b, e->op);
	odebug_puts(&b, "() closed it, and still did when its loop next polled: it polls whatever "
		    "file takes the number");
	if (type->stop)
		odebug_puts(&b, "; the fixup ends the watch");
	if (type->remover) {
		odebug_puts(&b, "; end it (");
		odebug_puts(&b, type->remover);
		odebug_puts(&b, ") before the close");
	}
	buf[b.len] = '\0';
}

/* @e's watch was still live at its loop's poll: reported with the close's stack. */
static void report_later(const struct suspect *e, unsigned long id,
			 const struct odebug_watch_type *type)
{
	char holder[ODEBUG_FD_HOLDER_LEN];
	struct odebug_snapshot o = {
		.addr = (uintptr_t)&odebug_fd_tags[e->fd], .descr = &odebug_fd_descr,
		.state = ODEBUG_STATE_ACTIVE, .name = odebug_fd_descr.name,
		.culprit_pcs = e->pcs, .culprit_n = e->n,
	};

	describe_later(holder, sizeof(holder), e, id, type);
	stopping_owner = e->owner;
	stopping_type = type;
	odebug_fd_report(&o, e->op, holder, stop_watch);
	stopping_type = NULL;
}

/*
 * Judge @e (ours to judge) at this poll: gone with its record, or with a
 * watch that ended after the close; kept when this is not the owner's
 * loop's poll; reported when the watch is still live.
 */
static void judge(uint64_t *t, struct suspect *e, int pid)
{
	struct fd_watch *r = e->record;
	const void *o = e->owner;
	const struct odebug_watch_type *type = r->type;
	unsigned long id = r->id;

	if (__atomic_load_n(&r->owner, __ATOMIC_ACQUIRE) != o || r->pid != pid) {
		suspect_free(e);
		return;
	}
	if (!type->live(o, e->fd, &id)) {
		release(t, e->fd, r, o);
		suspect_free(e);
		return;
	}
	if (!type->loop_here(o) || (type->own_code && !culprit_in(type->own_code))) {
		__atomic_store_n(&e->state, SUSPECT_READY, __ATOMIC_RELEASE);
		return;
	}
	report_later(e, id, type);
	release(t, e->fd, r, o);
	suspect_free(e);
}

/*
 * A poll is about to be made (epoll_wait): the calling thread's suspects
 * are judged.  Asked only while odebug_fd_suspects is not 0.
 */
void odebug_fd_watch_poll(void)
{
	uint64_t *t = odebug_load(&odebug_fd_tags);
	int me, pid = odebug_load(&odebug_fd_pid);

	if (!t || odebug_tls.guard || odebug_load(&odebug_mode) != ODEBUG_MODE_ON ||
	    (int)syscall(SYS_getpid) != pid)
		return;
	me = odebug_gettid();
	for (int i = 0; i < SUSPECTS; i++) {
		struct suspect *e = &suspects[i];
		int ready = SUSPECT_READY;

		if (__atomic_load_n(&e->state, __ATOMIC_ACQUIRE) == SUSPECT_READY &&
		    e->tid == me &&
		    __atomic_compare_exchange_n(&e->state, &ready, SUSPECT_JUDGING, false,
						__ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			judge(t, e, pid);
	}
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
		if (type->loop_here) {	/* made, judged at the loop's next poll */
			suspect_close(fd, &s[i], o, op);
			continue;
		}
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
