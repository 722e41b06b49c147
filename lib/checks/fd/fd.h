/* SPDX-License-Identifier: MIT */
/*
 * fd.h - file descriptors as objects: a descriptor with an owner (a
 * stream, a directory stream, an fdsan owner tag) is an ACTIVE object of
 * type "fd", and a close() of it by code that is not the owner is
 * reported at that close, which is not made (odebug-fd(7)).
 *
 * The owners live in one lazily mapped array indexed by descriptor, of
 * 64-bit owner tags as bionic's fdsan has them (type in the top byte, the
 * owner's value below: a FILE *, a DIR *, a tag of the program's); 0 is
 * "no owner".  The tracker of an owned descriptor sits at the address of
 * its slot, so reports, statistics and print_stats name it like any
 * object.  A close() of a descriptor nobody owns reads one slot.
 */
#ifndef ODEBUG_FD_H
#define ODEBUG_FD_H

#include <stdbool.h>
#include <stdint.h>

#include "core.h"

/* Descriptors at or above this are never owned (the array's size). */
#define ODEBUG_FD_MAX	(1u << 20)

/*
 * The mapping: the tags, then what the holder line says of each (8 bytes
 * a descriptor, fd.c), then the number of watches on each (watch.c): the
 * count is found from the tags' address, so a close of a descriptor
 * nobody owns reads two words of the mapping and no other pointer.
 */
#define ODEBUG_FD_COUNTS(t)	((uint32_t *)((t) + 2 * (size_t)ODEBUG_FD_MAX))

/* Owner types: bionic's numbers for its public ones, ours at 0xf0 and up. */
enum {
	ODEBUG_FD_GENERIC = 0,
	ODEBUG_FD_FILE = 1,
	ODEBUG_FD_DIR = 2,
	ODEBUG_FD_UNIQUE_FD = 3,
	ODEBUG_FD_GLIB_SOURCE = 0xf0,
	ODEBUG_FD_GENERIC_FF = 0xff,
};

/* Which call made the owner (the holder line's words). */
enum odebug_fd_how {
	ODEBUG_FD_BY_TAG, ODEBUG_FD_BY_FOPEN, ODEBUG_FD_BY_FDOPEN, ODEBUG_FD_BY_FREOPEN,
	ODEBUG_FD_BY_POPEN, ODEBUG_FD_BY_TMPFILE, ODEBUG_FD_BY_OPENDIR, ODEBUG_FD_BY_FDOPENDIR,
	ODEBUG_FD_BY_GLIB,
};

/* The tags (NULL until the first owner; never with check_fd=0). */
extern ODEBUG_HIDDEN uint64_t *odebug_fd_tags;
/* check_fd=1 and ODEBUG=1: the owners' interposers' one load. */
extern ODEBUG_HIDDEN int odebug_fd_on;
/* One above the highest descriptor ever owned: close_range's bound. */
extern ODEBUG_HIDDEN unsigned int odebug_fd_high;

static inline uint64_t odebug_fd_make_tag(unsigned int type, uintptr_t value)
{
	return (uint64_t)(type & 0xff) << 56 | ((uint64_t)value & ((1ull << 56) - 1));
}

/*
 * Has @fd an owner, or a watch?  Its tag and its count of watches, once
 * any descriptor had either.
 */
static inline bool odebug_fd_owned(int fd)
{
	uint64_t *t = odebug_load(&odebug_fd_tags);

	return t && (unsigned int)fd < ODEBUG_FD_MAX &&
	       (odebug_load(&t[fd]) || odebug_load(&ODEBUG_FD_COUNTS(t)[fd]));
}

/* From the start-up decision (init.c): on with check_fd=1. */

/* Owners made and ended by the interposers (preload/fd.c, preload/stdio.c). */
bool odebug_fd_ready(void);
void odebug_fd_own(int fd, uint64_t tag, enum odebug_fd_how how);
void odebug_fd_disown(int fd, uint64_t tag, const char *op);
bool odebug_fd_drop(int fd, uint64_t tag);

/*
 * A close of @fd, which has an owner, by @op ("close", "dup2", ...):
 * true when the close must not be made (reported, and fixed up: the
 * owner keeps its descriptor).  Async-signal-safe, as close() is.
 */
bool odebug_fd_close_owned(int fd, const char *op);
/* The first descriptor in [@from, @last] with an owner, or -1 (close_range, closefrom). */
long odebug_fd_next_owned(unsigned int from, unsigned int last);

/* The mapping of the tags (made at the first owner or watch), or NULL. */
uint64_t *odebug_fd_map(void);
/* odebug_fd_high covers @fd. */
void odebug_fd_raise_high(unsigned int fd);
/* This process, as the fork handler keeps it (a slot's process is compared with it). */
extern ODEBUG_HIDDEN int odebug_fd_pid;

/*
 * Watches (watch.c): a library polling a descriptor for the program, as
 * the annotation modules say (odebug_services, modules/odebug-module.h).
 * A close of @fd while one is live, as its library says: reported; true
 * when the close must not be made (@fix: the caller can keep it).  @pid:
 * this process, checked by the caller.
 */
struct odebug_watch_type;
void odebug_fd_watch_begin(int fd, const void *owner, unsigned long id,
			   const struct odebug_watch_type *type);
void odebug_fd_watch_end(int fd, const void *owner);
bool odebug_fd_watch_close(int fd, const char *op, bool fix, int pid);
/* The owner's own close (fclose, closedir, pclose) of a watched @fd: reported, made. */
void odebug_fd_watch_owner_close(int fd, const char *op);
/*
 * Closes of watches judged at the loop's next poll (a type with
 * loop_here): how many wait, the polls' one load; and the poll's call,
 * made before the poll while that is not 0 (preload/epoll.c).
 */
extern ODEBUG_HIDDEN int odebug_fd_suspects;
void odebug_fd_watch_poll(void);

/* fdsan's name for a tag's type (fdsan.c). */
const char *odebug_fd_tag_type(uint64_t tag);

/* The preload side's real close (glibc's, through our own interposer), for fdsan's close. */
extern ODEBUG_HIDDEN int (*odebug_fd_close_call)(int fd);

/* A report on an owned descriptor whose holder line is written at the call. */
#define ODEBUG_FD_HOLDER_LEN	320
bool odebug_fd_report(const struct odebug_snapshot *o, const char *op, const char *holder,
		      bool (*fn)(void *, enum debug_obj_state));

#endif /* ODEBUG_FD_H */
