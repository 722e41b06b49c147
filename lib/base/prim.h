/* SPDX-License-Identifier: MIT */
/*
 * prim.h - the contract of prim.c: the system calls every part of
 * libodebug needs (its own memory, writes, the environment, the one safe
 * read of memory that may be gone), as raw syscall()s where the libc
 * wrapper could be interposed (by us or another preloaded library), could
 * allocate or is a cancellation point.  Files make the calls of their own
 * concern themselves (lock.c futexes, helper.c and symbolize.c the
 * symboliser, held*.c the kernel's answers, preload/ the interposed
 * calls).  Included through base.h.
 */
#ifndef ODEBUG_PRIM_H
#define ODEBUG_PRIM_H

#include <stddef.h>

void *odebug_map(size_t size);
void *odebug_reserve(size_t size);
void odebug_unmap(void *addr, size_t size);
void odebug_write(int fd, const char *buf, size_t len);
long odebug_read_file(const char *path, char *buf, size_t cap);
long odebug_read_task_file(int tid, const char *name, char *buf, size_t cap);
int odebug_gettid(void);
int odebug_open_proc(const char *rest);
const char *odebug_getenv(const char *name);
size_t odebug_read_mem(void *dst, const void *addr, size_t len);

#endif /* ODEBUG_PRIM_H */
