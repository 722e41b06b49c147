/* SPDX-License-Identifier: MIT */
/*
 * Invalid frees and reallocs, one per run: check-invalid-free.sh runs
 * each with ODEBUG=0 and ODEBUG=1 and wants the same exit status and the
 * same stderr, the next allocator's own diagnosis.  An object is tracked
 * first, so that free() takes libodebug's checking path.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "odebug.h"

#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
#pragma GCC diagnostic ignored "-Wfree-nonheap-object"
#endif
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#pragma GCC diagnostic ignored "-Wuse-after-free"
#endif

static const struct debug_obj_descr descr = { .name = "invalid_free" };
static _Alignas(64) size_t fake[64];
static void *volatile sink;

static void *fake_chunk(size_t prev, size_t size)
{
	fake[6] = prev;
	fake[7] = size;
	return &fake[8];
}

static void release(void *p)
{
	sink = p;
	free(sink);
}

int main(int argc, char **argv)
{
	static char tracked[16];
	char *p = malloc(100), *big = malloc(1 << 20), onstack[64];
	int which = argc > 1 ? atoi(argv[1]) : -1;

	memset(p, 0x41, 100);
	/*
	 * Case 10's "header" is big's bytes: left uninitialised they made
	 * glibc abort as "munmap_chunk(): invalid pointer" or "free(): invalid
	 * size", or fault, from run to run; zeroed, it is the same each time.
	 */
	if (big)
		memset(big, 0, 1 << 20);
	debug_object_init(tracked, &descr);
	switch (which) {
	case 0: release(p); break;			/* valid: the control */
	case 1: release(p + 1); break;
	case 2: release(p + 8); break;
	case 3: release(p + 16); break;			/* header is p's data */
	case 4: release(fake_chunk(0, 0x4141414141414140ull)); break;
	case 5: release(fake_chunk(0, 0)); break;
	/* Not 6, fake_chunk(0, 0x10000000): glibc's own verdict depends on ASLR. */
	case 7: release(fake_chunk(0x1000, 0x2002)); break;	/* a bad mmapped chunk */
	case 8: release(fake_chunk(0, 0x41)); break;	/* a plausible small chunk */
	case 9: release(onstack + 16); break;
	case 10: release(big + 4096); break;		/* inside an mmapped block */
	case 11: release(p); release(p); break;		/* double free */
	case 12: release((void *)(uintptr_t)0x10000); break;	/* unmapped */
	case 13: release((char *)fake_chunk(0, 0x41) + 8); break;
	case 14: sink = realloc(p + 1, 200); break;	/* realloc: the same checks */
	case 15: sink = realloc(fake_chunk(0, 0x4141414141414140ull), 200); break;
	default: return 2;
	}
	printf("returned\n");
	return 0;
}
