/* SPDX-License-Identifier: MIT */
/*
 * fd.c - descriptors with an owner (fd.h): the tags, the owners' trackers,
 * the judgement of a close and its report.
 *
 * A tag can outlive its owner: glibc closes streams it opened itself
 * without our interposers seeing either end (getmntent's, NSS's), and
 * fcloseall() closes every stream at once.  So a close that meets a tag
 * asks the owner first (is the FILE still on glibc's list of open streams
 * with this descriptor, does the DIR still read this descriptor), and a
 * tag whose owner is gone is dropped silently.  A fork child's tags are
 * its parent's: each slot notes the process that set it, and a close in
 * another process (a fork child before its exec, a vfork child sharing
 * our memory) is never judged.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fd.h"

uint64_t *odebug_fd_tags;
ODEBUG_HOT int odebug_fd_on;
unsigned int odebug_fd_high;

/* What the holder line says of a slot's owner, beside the tag. */
struct fd_info {
	int32_t pid;		/* the process that set the tag */
	uint8_t how;		/* enum odebug_fd_how */
	uint8_t tracked;	/* its tracker is ACTIVE (made once libodebug had started) */
};

static struct fd_info *infos;	/* beside the tags, in the same mapping */
int odebug_fd_pid;		/* this process (a fork child's handler sets it) */

_Static_assert(sizeof(struct fd_info) == sizeof(uint64_t), "ODEBUG_FD_COUNTS() assumes it");
#define FD_MAP_SIZE	((size_t)ODEBUG_FD_MAX * (sizeof(uint64_t) + sizeof(struct fd_info) + \
					  sizeof(uint32_t)))

/* glibc's list of open streams (libio's head; not in an installed header). */
extern FILE *_IO_list_all;
#define STREAMS_MAX	100000	/* a corrupt list is not walked forever */

static bool fd_static(void *addr)
{
	(void)addr;
	return true;	/* a slot's first owner makes its tracker */
}

/* The fixup of a close by a non-owner: the close is not made. */
static bool fd_keep(void *addr, enum debug_obj_state state)
{
	(void)addr;
	return state == ODEBUG_STATE_ACTIVE;
}

const struct debug_obj_descr odebug_fd_descr = {
	.name = "fd",
	.is_static_object = fd_static,
};

static void fd_child(void)
{
	odebug_store(&odebug_fd_pid, (int)syscall(SYS_getpid));
}

static void fd_init(void)
{
	if (!odebug_opt.check_fd || odebug_load(&odebug_fd_on))
		return;
	odebug_fd_pid = (int)syscall(SYS_getpid);
	pthread_atfork(NULL, NULL, fd_child);
	odebug_store(&odebug_fd_on, 1);
}

/*
 * The interposers' test before making an owner.  An owner does not start
 * libodebug (every program opens files): its tag is kept, and its
 * tracker made only once libodebug has started for another reason; a
 * close that meets a live owner starts it to report.
 */
bool odebug_fd_ready(void)
{
	int mode;

	if (!odebug_load(&odebug_fd_on) || odebug_tls.guard)
		return false;
	mode = odebug_load(&odebug_mode);
	return mode == ODEBUG_MODE_ON || mode == ODEBUG_MODE_IDLE;
}

/* The array, mapped at the first owner or watch (two threads: one mapping wins). */
uint64_t *odebug_fd_map(void)
{
	uint64_t *t = __atomic_load_n(&odebug_fd_tags, __ATOMIC_ACQUIRE), *expect = NULL;

	if (t)
		return t;
	t = odebug_reserve(FD_MAP_SIZE);
	if (!t)
		return NULL;
	infos = (struct fd_info *)(t + ODEBUG_FD_MAX);
	if (!__atomic_compare_exchange_n(&odebug_fd_tags, &expect, t, false, __ATOMIC_RELEASE,
					 __ATOMIC_ACQUIRE)) {
		odebug_unmap(t, FD_MAP_SIZE);
		return expect;
	}
	return t;
}

void odebug_fd_raise_high(unsigned int fd)
{
	unsigned int h = odebug_load(&odebug_fd_high);

	while (h <= fd && !__atomic_compare_exchange_n(&odebug_fd_high, &h, fd + 1, true,
						       __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/*
 * @fd has a new owner @tag: a descriptor the kernel has just handed out
 * (any older tag on it is stale), or one given to fdopen()/fdopendir()
 * (ownership moves).  The standard descriptors are nobody's.
 */
void odebug_fd_own(int fd, uint64_t tag, enum odebug_fd_how how)
{
	uint64_t *t, old;

	if (fd <= 2 || (unsigned int)fd >= ODEBUG_FD_MAX || !tag)
		return;
	t = odebug_fd_map();
	if (!t)
		return;
	odebug_fd_raise_high((unsigned int)fd);
	infos[fd].pid = odebug_load(&odebug_fd_pid);
	infos[fd].how = (uint8_t)how;
	/*
	 * A load and a store, no locked exchange: the number was just handed
	 * to this thread's call, so another changing its slot now would be a
	 * race of the program's own (a close of a number not yet returned).
	 */
	old = odebug_load(&t[fd]);
	__atomic_store_n(&t[fd], tag, __ATOMIC_RELEASE);
	if (!old && odebug_load(&odebug_mode) == ODEBUG_MODE_ON) {
		infos[fd].tracked = 1;
		debug_object_activate(&t[fd], &odebug_fd_descr);
	}
}

/*
 * The tag of @fd goes, if it is still @tag; its tracker stays, INACTIVE,
 * so that the number's next owner is one lockless activate (a descriptor
 * number is owned over and over: modules/README.md, "Keeping a tracker
 * between holds").
 */
bool odebug_fd_drop(int fd, uint64_t tag)
{
	uint64_t *t = odebug_load(&odebug_fd_tags);

	if (!t || (unsigned int)fd >= ODEBUG_FD_MAX || !tag)
		return false;
	if (!__atomic_compare_exchange_n(&t[fd], &tag, 0, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_RELAXED))
		return false;
	if (infos[fd].tracked) {
		infos[fd].tracked = 0;
		debug_object_deactivate(&t[fd], &odebug_fd_descr);
	}
	return true;
}

/*
 * The owner's own close (@op: fclose, closedir, pclose), before the real
 * call: the owner is the one closing its number, so a load and a store
 * do.  A watch still live on the number is reported (glibc's close inside
 * @op cannot be kept: the report says so).
 */
void odebug_fd_disown(int fd, uint64_t tag, const char *op)
{
	uint64_t *t = odebug_load(&odebug_fd_tags);

	if (!t || odebug_tls.guard || (unsigned int)fd >= ODEBUG_FD_MAX || !tag)
		return;
	if (odebug_load(&t[fd]) == tag) {
		__atomic_store_n(&t[fd], 0, __ATOMIC_RELEASE);
		if (infos[fd].tracked) {
			infos[fd].tracked = 0;
			debug_object_deactivate(&t[fd], &odebug_fd_descr);
		}
	}
	if (odebug_load(&ODEBUG_FD_COUNTS(t)[fd]))
		odebug_fd_watch_owner_close(fd, op);
}

/* Is the stream @f still open on @fd?  Walked unlocked, as held-stdio.c does. */
static bool stream_on(const FILE *f, int fd)
{
	const FILE *s = __atomic_load_n(&_IO_list_all, __ATOMIC_ACQUIRE);
	int n, no;

	for (n = 0; s && s != f && n < STREAMS_MAX; n++)
		s = __atomic_load_n(&s->_chain, __ATOMIC_ACQUIRE);
	if (s != f)
		return false;
	no = __atomic_load_n(&f->_fileno, __ATOMIC_RELAXED);
	return no == fd;
}

/* Does the DIR @d still read @fd?  glibc's struct __dirstream starts with its descriptor. */
static bool dir_on(uintptr_t d, int fd)
{
	int no;

	return odebug_read_mem(&no, (const void *)d, sizeof(no)) == sizeof(no) && no == fd;
}

static uintptr_t tag_value(uint64_t tag)
{
	return (uintptr_t)((int64_t)(tag << 8) >> 8);
}

/* Does the owner @tag still hold @fd (asked only at a close that meets it)? */
static bool owner_live(uint64_t tag, int fd)
{
	switch (tag >> 56) {
	case ODEBUG_FD_FILE:
		return stream_on((const FILE *)tag_value(tag), fd);
	case ODEBUG_FD_DIR:
		return dir_on(tag_value(tag), fd);
	default:
		return true;	/* the program's own tag: only its owner ends it */
	}
}

static const char *const how_words[] = {
	[ODEBUG_FD_BY_TAG] = "android_fdsan_exchange_owner_tag",
	[ODEBUG_FD_BY_FOPEN] = "fopen", [ODEBUG_FD_BY_FDOPEN] = "fdopen",
	[ODEBUG_FD_BY_FREOPEN] = "freopen", [ODEBUG_FD_BY_POPEN] = "popen",
	[ODEBUG_FD_BY_TMPFILE] = "tmpfile", [ODEBUG_FD_BY_OPENDIR] = "opendir",
	[ODEBUG_FD_BY_FDOPENDIR] = "fdopendir", [ODEBUG_FD_BY_GLIB] = "g_unix_fd_add",
};

/* "stream 0x5581... (fopen) owns fd 5; ..." */
static void describe(char *buf, size_t cap, uint64_t tag, int fd, const char *op)
{
	unsigned int how = infos[fd].how;
	const char *closer = "its own close";
	struct odebug_buf b;

	odebug_buf_init_mem(&b, buf, cap - 1);
	switch (tag >> 56) {
	case ODEBUG_FD_FILE:
		odebug_puts(&b, "stream ");
		odebug_put_hex(&b, tag_value(tag));
		closer = how == ODEBUG_FD_BY_POPEN ? "pclose()" : "fclose()";
		break;
	case ODEBUG_FD_DIR:
		odebug_puts(&b, "directory stream ");
		odebug_put_hex(&b, tag_value(tag));
		closer = "closedir()";
		break;
	case ODEBUG_FD_GLIB_SOURCE:
		odebug_puts(&b, "GLib fd source id ");
		odebug_put_dec(&b, (unsigned long)tag_value(tag));
		closer = "g_source_remove()";
		break;
	default:
		odebug_puts(&b, "owner tag ");
		odebug_put_hex(&b, tag);
		odebug_puts(&b, " (");
		odebug_puts(&b, odebug_fd_tag_type(tag));
		odebug_putc(&b, ')');
		closer = "android_fdsan_close_with_tag()";
		break;
	}
	if (how < sizeof(how_words) / sizeof(how_words[0]) && how_words[how]) {
		odebug_puts(&b, " (");
		odebug_puts(&b, how_words[how]);
		odebug_putc(&b, ')');
	}
	odebug_puts(&b, " owns fd ");
	odebug_put_dec(&b, (unsigned long)fd);
	if (!op) {
		buf[b.len] = '\0';
		return;
	}
	odebug_puts(&b, "; this ");
	odebug_puts(&b, op);
	odebug_puts(&b, op[0] == 'd' ? "() was not made (it failed with EBUSY), so the owner's " :
		    "() was not made (it returned 0), so the owner's ");
	odebug_puts(&b, closer);
	odebug_puts(&b, " closes its own descriptor and nothing else");
	buf[b.len] = '\0';
}

/* The holder line of the report this thread is making, written at the call. */
static ODEBUG_TLS const char *holder_text;

/*
 * Report @op on @o's descriptor with @holder as its holder line (the
 * checker's describe() hands it to the report), then @fn: true when @fn
 * fixed it.
 */
bool odebug_fd_report(const struct odebug_snapshot *o, const char *op, const char *holder,
		      bool (*fn)(void *, enum debug_obj_state))
{
	bool fixed;

	holder_text = holder;
	fixed = odebug_report_fix(o, op, fn, (void *)o->addr);
	holder_text = NULL;
	return fixed;
}

/* Report the close of @fd, owned by @tag: true when it is not to be made. */
static bool report_close(int fd, uint64_t tag, const char *op)
{
	char holder[ODEBUG_FD_HOLDER_LEN];
	struct odebug_snapshot o = {
		.addr = (uintptr_t)&odebug_fd_tags[fd], .descr = &odebug_fd_descr,
		.state = ODEBUG_STATE_ACTIVE, .name = odebug_fd_descr.name,
	};

	describe(holder, sizeof(holder), tag, fd, op);
	return odebug_fd_report(&o, op, holder, fd_keep);
}

bool odebug_fd_close_owned(int fd, const char *op)
{
	uint64_t *t = odebug_load(&odebug_fd_tags), tag;
	int pid;

	if (!t || (unsigned int)fd >= ODEBUG_FD_MAX || odebug_tls.guard ||
	    odebug_load(&odebug_mode) == ODEBUG_MODE_OFF)
		return false;
	tag = odebug_load(&t[fd]);
	if (!tag && !odebug_load(&ODEBUG_FD_COUNTS(t)[fd]))
		return false;
	pid = odebug_load(&odebug_fd_pid);
	/* A vfork child shares our memory: it judges nothing and changes nothing. */
	if ((int)syscall(SYS_getpid) != pid)
		return false;
	/*
	 * The owner first: a close by another of a stream's descriptor is
	 * that stream's report even under a watch.  A fork child's inherited
	 * owners are its parent's: the close is its own business.
	 */
	if (tag && (infos[fd].pid != pid || !owner_live(tag, fd))) {
		odebug_fd_drop(fd, tag);
	} else if (tag) {
		/* The report needs libodebug started (an owner did not start it). */
		if (!odebug_interposer_ready())
			return false;
		return report_close(fd, tag, op);
	}
	return odebug_fd_watch_close(fd, op, true, pid);
}

long odebug_fd_next_owned(unsigned int from, unsigned int last)
{
	uint64_t *t = odebug_load(&odebug_fd_tags);
	unsigned int fd, end = odebug_load(&odebug_fd_high);

	if (!t)
		return -1;
	for (fd = from; fd < end && fd <= last; fd++)
		if (odebug_load(&t[fd]) || odebug_load(&ODEBUG_FD_COUNTS(t)[fd]))
			return (long)fd;
	return -1;
}

/* The report's holder line: the owner of the descriptor whose slot @o is. */
static bool fd_describe(const struct odebug_snapshot *o, char *buf, size_t cap)
{
	uint64_t *t = odebug_load(&odebug_fd_tags), tag;
	uintptr_t fd;

	if (o->descr != &odebug_fd_descr || !t || o->addr < (uintptr_t)t)
		return false;
	if (holder_text) {
		size_t n = strnlen(holder_text, cap - 1);

		memcpy(buf, holder_text, n);
		buf[n] = '\0';
		return true;
	}
	fd = (o->addr - (uintptr_t)t) / sizeof(*t);
	if (fd >= ODEBUG_FD_MAX || !(tag = odebug_load(&t[fd])))
		return false;
	describe(buf, cap, tag, (int)fd, NULL);
	return true;
}

/*
 * An owned descriptor's tracker is never in memory that is freed; at exit
 * its stream or directory is still open, as a program may leave it: not
 * a misuse, never reported (report_active_at_exit).
 */
static bool fd_released(const struct odebug_snapshot *o)
{
	return o->descr == &odebug_fd_descr;
}

ODEBUG_CHECKER(fd) = {
	.name = "descriptors",
	.init = fd_init,
	.released = fd_released,
	.describe = fd_describe,
};
