/* SPDX-License-Identifier: MIT */
/*
 * no-heap.c - with libodebug preloaded and ODEBUG unset, a program that
 * never allocates still has no heap when main() runs: libodebug's
 * constructors allocated nothing (a failed dlsym() allocates its error
 * message, and the first allocation of a process makes its heap: brk()
 * calls and page faults a /bin/true would pay for nothing).  Exit 0 when
 * the program break is still where the kernel put it (/proc/self/stat's
 * start_brk); raw reads, no stdio.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>

int main(void)
{
	static char buf[4096];
	uintptr_t start_brk = 0;
	int fd = open("/proc/self/stat", O_RDONLY), field = 1;
	ssize_t n;
	char *p, *end;

	if (fd < 0)
		return 2;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 2;
	end = buf + n;
	/* Past "pid (comm) ": comm may hold blanks; it ends at the last ')'. */
	for (p = end; p > buf && p[-1] != ')'; p--)
		;
	for (field = 2; p < end && field < 47; p++)
		if (*p == ' ')
			field++;
	for (; p < end && *p >= '0' && *p <= '9'; p++)
		start_brk = start_brk * 10 + (uintptr_t)(*p - '0');
	if (!start_brk)
		return 2;
	if ((uintptr_t)sbrk(0) != start_brk) {
		static const char msg[] = "no-heap: the program break moved before main(): something allocated\n";

		if (write(2, msg, sizeof(msg) - 1) < 0)
			return 1;
		return 1;
	}
	return 0;
}
