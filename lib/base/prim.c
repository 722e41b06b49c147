/* SPDX-License-Identifier: MIT */
/*
 * prim.c - the system services every part of libodebug uses (prim.h),
 * called as raw system calls where the libc wrapper could be interposed
 * (by us or by another preloaded library) or could allocate.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base.h"

/*
 * Our own mappings bypass mmap()/munmap(): the munmap() a program sees is
 * our interposer, and another preloaded allocator may wrap mmap().  This is
 * the one place libodebug maps memory; every caller unmaps what it mapped
 * when a later step of its start fails.
 */
static void *map(size_t size, int flags)
{
	long p = syscall(SYS_mmap, NULL, size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);

	return p == -1 ? NULL : (void *)p;
}

/* @size bytes, committed now. */
void *odebug_map(size_t size)
{
	return map(size, 0);
}

/*
 * @size bytes of address space, committed page by page as they are touched
 * (MAP_NORESERVE): for tables and pools sized for the worst case.
 */
void *odebug_reserve(size_t size)
{
	return map(size, MAP_NORESERVE);
}

void odebug_unmap(void *addr, size_t size)
{
	syscall(SYS_munmap, addr, size);
}

/*
 * Write all of @buf, retrying on EINTR and short writes; errno is kept.
 * A raw write: not a cancellation point (report.c disables cancellation
 * for a report, and reports are not the only writers).
 */
void odebug_write(int fd, const char *buf, size_t len)
{
	int saved = errno;

	while (len) {
		ssize_t n = syscall(SYS_write, fd, buf, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		buf += n;
		len -= (size_t)n;
	}
	errno = saved;
}

/*
 * Up to @cap bytes of the file at @path (a /proc file, on the report
 * path): raw openat, read and close, since the wrappers are cancellation
 * points, and close() is our own interposer (preload/epoll.c) or may be
 * another preloaded library's.  Returns the bytes read, or minus the
 * open's errno when the file cannot be opened; errno is kept.
 */
long odebug_read_file(const char *path, char *buf, size_t cap)
{
	int saved = errno;
	long fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	long n, got = 0;

	if (fd < 0) {
		fd = -errno;
		errno = saved;
		return fd;
	}
	while ((size_t)got < cap) {
		n = syscall(SYS_read, (int)fd, buf + got, cap - (size_t)got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += n;
	}
	syscall(SYS_close, (int)fd);
	errno = saved;
	return got;
}

int odebug_gettid(void)
{
	return (int)syscall(SYS_gettid);
}

/*
 * /proc/self/task/@tid/@name read as odebug_read_file() reads it (the
 * kernel's word on one thread of this process: stat, syscall).
 */
long odebug_read_task_file(int tid, const char *name, char *buf, size_t cap)
{
	char path[64] = "/proc/self/task/", digits[12];
	size_t n = 16, k = 0, len = strlen(name);
	unsigned int v = (unsigned int)tid;

	do
		digits[k++] = (char)('0' + v % 10);
	while ((v /= 10) && k < sizeof(digits));
	if (n + k + 1 + len + 1 > sizeof(path))
		return -ENAMETOOLONG;
	while (k)
		path[n++] = digits[--k];
	path[n++] = '/';
	memcpy(path + n, name, len + 1);
	return odebug_read_file(path, buf, cap);
}

/*
 * /proc/thread-self/@rest, else /proc/self/@rest (kernels before 3.17),
 * opened read-only with raw calls: what the kernel shows the calling
 * thread.  /proc/self is the main thread's, and once that thread left by
 * pthread_exit() it is a zombie whose memory map, descriptors and
 * executable the kernel no longer shows.  -1 and errno when neither
 * opens.
 */
int odebug_open_proc(const char *rest)
{
	char path[80] = "/proc/thread-self/";
	size_t n = strlen(rest);
	long fd;

	if (n > sizeof(path) - 19) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(path + 18, rest, n + 1);
	fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		memcpy(path + 6, "self/", 5);
		memmove(path + 11, path + 18, n + 1);
		fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	}
	return (int)fd;
}

/*
 * secure_getenv: a setuid or setgid program ignores ODEBUG*, so nobody can
 * make it write files or change its behaviour through us.  It neither
 * allocates nor locks, so it is safe during bootstrap.
 */
const char *odebug_getenv(const char *name)
{
	return secure_getenv(name);
}

/*
 * The one safe read of memory that may be gone (an unloaded module's
 * descriptor, a mutex in a returned frame, an owner read at exit): copy
 * up to @len bytes at @addr into @dst without faulting.  Returns how many
 * were copied: fewer than @len when the range runs into an unmapped page,
 * 0 when its first page is unmapped.  Under seccomp without
 * process_vm_readv, each page is checked with msync() first.
 */
size_t odebug_read_mem(void *dst, const void *addr, size_t len)
{
	struct iovec local = { dst, len }, remote = { (void *)addr, len };
	int saved = errno;
	/* The calling thread's id: the main thread's (the pid) names no memory once it is a zombie. */
	long n = syscall(SYS_process_vm_readv, odebug_gettid(), &local, 1UL, &remote, 1UL, 0UL);

	if (n < 0 && (errno == ENOSYS || errno == EPERM)) {
		uintptr_t page = (uintptr_t)getpagesize();
		uintptr_t p = (uintptr_t)addr & ~(page - 1);

		n = (long)len;
		for (; p < (uintptr_t)addr + len; p += page)
			if (syscall(SYS_msync, (void *)p, 1, MS_ASYNC) && errno == ENOMEM) {
				n = (long)(p > (uintptr_t)addr ? p - (uintptr_t)addr : 0);
				break;
			}
		memcpy(dst, addr, (size_t)n);
	}
	errno = saved;
	return n > 0 ? (size_t)n : 0;
}
