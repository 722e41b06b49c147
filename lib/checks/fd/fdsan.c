/* SPDX-License-Identifier: MIT */
/*
 * fdsan.c - bionic's public fdsan owner-tag API on glibc, over the tags
 * of fd.c: code written for fdsan (descriptor wrappers that exchange a
 * tag when they take a descriptor and close with it) gets the same
 * checks when libodebug is loaded with ODEBUG=1.  Loaded but off, a tag
 * is never kept: the exchange does nothing, a get answers 0 and a close
 * with a tag is a close (odebug-fd(7), include/odebug-fdsan.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fd.h"

static int raw_close(int fd)
{
	return (int)syscall(SYS_close, fd);
}

int (*odebug_fd_close_call)(int fd) = raw_close;

extern const struct debug_obj_descr odebug_fd_descr;

ODEBUG_EXPORT uint64_t android_fdsan_create_owner_tag(unsigned int type, uint64_t tag);
ODEBUG_EXPORT void android_fdsan_exchange_owner_tag(int fd, uint64_t expected, uint64_t tag);
ODEBUG_EXPORT int android_fdsan_close_with_tag(int fd, uint64_t tag);
ODEBUG_EXPORT uint64_t android_fdsan_get_owner_tag(int fd);
ODEBUG_EXPORT const char *android_fdsan_get_tag_type(uint64_t tag);
ODEBUG_EXPORT uint64_t android_fdsan_get_tag_value(uint64_t tag);

uint64_t android_fdsan_create_owner_tag(unsigned int type, uint64_t tag)
{
	if (!tag)
		return 0;
	return odebug_fd_make_tag((unsigned int)type, (uintptr_t)tag);
}

/* The value without its type byte, sign-extended (as a pointer was). */
uint64_t android_fdsan_get_tag_value(uint64_t tag)
{
	return (uint64_t)((int64_t)(tag << 8) >> 8);
}

const char *odebug_fd_tag_type(uint64_t tag)
{
	static const char *const names[] = {
		[1] = "FILE*", [2] = "DIR*", [3] = "unique_fd", [4] = "sqlite",
		[5] = "FileInputStream", [6] = "FileOutputStream", [7] = "RandomAccessFile",
		[8] = "ParcelFileDescriptor", [9] = "ART FdFile", [10] = "DatagramSocketImpl",
		[11] = "SocketImpl", [12] = "ZipArchive", [13] = "native_handle_t",
		[14] = "Parcel",
	};
	unsigned int type = (unsigned int)(tag >> 56);

	if (!tag)
		return "unowned";
	if (type < sizeof(names) / sizeof(names[0]) && names[type])
		return names[type];
	if (type == ODEBUG_FD_GLIB_SOURCE)
		return "GLib fd source";
	if (type == ODEBUG_FD_GENERIC_FF && (tag >> 32) != 0xffffffffu)
		return "Java object of unknown type";
	return "native object of unknown type";
}

const char *android_fdsan_get_tag_type(uint64_t tag)
{
	return odebug_fd_tag_type(tag);
}

uint64_t android_fdsan_get_owner_tag(int fd)
{
	uint64_t *t = odebug_load(&odebug_fd_tags);

	if (!t || fd < 0 || (unsigned int)fd >= ODEBUG_FD_MAX)
		return 0;
	return odebug_load(&t[fd]);
}

/* A tag call that does not match what @fd has: @op on it, owned or not. */
static void mismatch(int fd, const char *op, uint64_t expected, uint64_t actual)
{
	char holder[ODEBUG_FD_HOLDER_LEN];
	struct odebug_buf b;
	struct odebug_snapshot o = {
		.addr = (uintptr_t)&odebug_fd_tags[fd], .descr = &odebug_fd_descr,
		.state = actual ? ODEBUG_STATE_ACTIVE : ODEBUG_STATE_NOTAVAILABLE,
		.name = odebug_fd_descr.name,
	};

	if (!odebug_interposer_ready())		/* a tag does not start libodebug; a report does */
		return;
	odebug_buf_init_mem(&b, holder, sizeof(holder) - 1);
	odebug_puts(&b, "fd ");
	odebug_put_dec(&b, (unsigned long)fd);
	odebug_puts(&b, " expected to be owned by tag ");
	odebug_put_hex(&b, expected);
	odebug_puts(&b, " (");
	odebug_puts(&b, odebug_fd_tag_type(expected));
	odebug_puts(&b, "), ");
	if (actual) {
		odebug_puts(&b, "owned by tag ");
		odebug_put_hex(&b, actual);
		odebug_puts(&b, " (");
		odebug_puts(&b, odebug_fd_tag_type(actual));
		odebug_puts(&b, "); nothing changed");
	} else {
		odebug_puts(&b, "actually unowned");
	}
	holder[b.len] = '\0';
	odebug_fd_report(&o, op, holder, NULL);
}

void android_fdsan_exchange_owner_tag(int fd, uint64_t expected, uint64_t tag)
{
	uint64_t *t, seen = expected;
	int saved = errno;

	if (fd < 0 || (unsigned int)fd >= ODEBUG_FD_MAX || !odebug_fd_ready())
		return;
	if (!expected && tag) {
		/* Taking an unowned descriptor: fd.c's owner, made by a tag. */
		t = odebug_load(&odebug_fd_tags);
		if (t && odebug_load(&t[fd])) {
			mismatch(fd, "exchange_owner_tag", expected, odebug_load(&t[fd]));
		} else {
			odebug_fd_own(fd, tag, ODEBUG_FD_BY_TAG);
		}
		errno = saved;
		return;
	}
	t = odebug_load(&odebug_fd_tags);
	if (!tag) {
		/* Giving it up: the tracker goes with the tag. */
		if (!odebug_fd_drop(fd, expected))
			mismatch(fd, "exchange_owner_tag", expected, t ? odebug_load(&t[fd]) : 0);
	} else if (!t || !__atomic_compare_exchange_n(&t[fd], &seen, tag, false, __ATOMIC_ACQ_REL,
						      __ATOMIC_RELAXED)) {
		mismatch(fd, "exchange_owner_tag", expected, t ? seen : 0);
	}
	errno = saved;
}

/*
 * A close with the owner's tag ends the ownership, then closes.  With a
 * tag that is not the owner's, the close of another's descriptor is
 * reported and not made (0 returned), as a plain close() of it is; of a
 * descriptor nobody owns, reported and made.
 */
int android_fdsan_close_with_tag(int fd, uint64_t tag)
{
	uint64_t *t = odebug_load(&odebug_fd_tags), cur;

	if (!t || fd < 0 || (unsigned int)fd >= ODEBUG_FD_MAX || !odebug_fd_ready())
		return odebug_fd_close_call(fd);
	cur = odebug_load(&t[fd]);
	if (cur == tag) {
		if (tag)
			android_fdsan_exchange_owner_tag(fd, tag, 0);
		return odebug_fd_close_call(fd);
	}
	if (cur) {
		int saved = errno;

		if (odebug_fd_close_owned(fd, "close_with_tag")) {
			errno = saved;
			return 0;
		}
		errno = saved;
		return odebug_fd_close_call(fd);
	}
	if (tag) {
		int saved = errno;

		mismatch(fd, "close_with_tag", tag, 0);
		errno = saved;
	}
	return odebug_fd_close_call(fd);
}
