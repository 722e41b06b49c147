/* SPDX-License-Identifier: MIT */
/*
 * syscall-pages.c - what touching a page costs right after a system call
 * on this machine: the reference for reading bench-held-ops' figures.
 * Where the kernel flushes the TLB at each system call (page-table
 * isolation without PCID), every page an interposer touches after the
 * call is a page walk; elsewhere it is close to free.
 *
 * Each block makes a system call (getppid) and then writes one byte in
 * each of N pages, 4 KiB apart (neighbouring page-table entries) or
 * 2 MiB apart (a page table each); the same loop with N = 0 is the
 * reference.  Paired blocks, alternated; prints the median ns added per
 * page for each spacing.
 *
 *   syscall-pages [N]	N pages (default 16)
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "bench-stats.h"

#define BLOCKS	301
#define CALLS	200

/* ns per call of CALLS system calls, each followed by a write to @n pages @stride apart. */
static double block(volatile char *m, int n, size_t stride)
{
	double t0 = bench_ns(CLOCK_THREAD_CPUTIME_ID);

	for (int i = 0; i < CALLS; i++) {
		syscall(SYS_getppid);
		for (int p = 0; p < n; p++)
			m[p * stride + (size_t)(i & 63) * 64]++;
	}
	return (bench_ns(CLOCK_THREAD_CPUTIME_ID) - t0) / CALLS;
}

int main(int argc, char **argv)
{
	static const size_t strides[2] = { 4096, 2u << 20 };
	int n = argc > 1 ? atoi(argv[1]) : 16;
	double diff[BLOCKS];

	if (n < 1 || n > 64) {
		fprintf(stderr, "usage: %s [PAGES, 1 to 64]\n", argv[0]);
		return 2;
	}
	for (int s = 0; s < 2; s++) {
		size_t len = strides[s] * (size_t)n;
		char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (m == MAP_FAILED)
			return 1;
		for (int p = 0; p < n; p++)
			m[p * strides[s]] = 1;	/* faulted in before timing */
		block(m, n, strides[s]);
		for (int b = 0; b < BLOCKS; b++) {
			double t[2];

			for (int j = 0; j < 2; j++) {
				int touch = j ^ (b & 1);

				t[touch] = block(m, touch ? n : 0, strides[s]);
			}
			diff[b] = (t[1] - t[0]) / n;
		}
		qsort(diff, BLOCKS, sizeof(*diff), bench_cmp_double);
		printf("%d pages %zu KiB apart: %+.1f ns per page after a system call [%+.1f %+.1f]\n",
		       n, strides[s] >> 10, diff[BLOCKS / 2], diff[BLOCKS / 4], diff[3 * BLOCKS / 4]);
		munmap(m, len);
	}
	return 0;
}
