/* SPDX-License-Identifier: MIT */
/*
 * sanitizer.c - checking heap blocks in a sanitizer build of the program.
 *
 * A program built with -fsanitize=address, thread or leak gets free() from
 * the sanitizer runtime, which comes before libodebug.so, so our free() is
 * never called.  Every such runtime (gcc's libasan, libtsan, liblsan;
 * clang's, linked into the executable) exports
 * __sanitizer_install_malloc_and_free_hooks, whose free hook runs before
 * the block is released (or quarantined), while it is still readable: the
 * check runs there.  The block's size comes from
 * __sanitizer_get_allocated_size, asked only once __sanitizer_get_ownership
 * says the block is the runtime's and allocated, so a double or invalid
 * free is left to the sanitizer to report exactly as without libodebug.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>

#include "core.h"
#include "next.h"

#define SANE_BLOCK_SIZE	((size_t)1 << 40)

typedef void (*malloc_hook_fn)(const volatile void *p, size_t size);
typedef void (*free_hook_fn)(const volatile void *p);

static int (*get_ownership)(const volatile void *p);
static size_t (*get_allocated_size)(const volatile void *p);

/* The runtime takes a malloc hook and a free hook together. */
static void malloc_hook(const volatile void *p, size_t size)
{
	(void)p;
	(void)size;
}

static void free_hook(const volatile void *vp)
{
	const void *p = (const void *)(uintptr_t)vp;
	size_t size;

	if (odebug_load(&odebug_mode) != ODEBUG_MODE_ON || !p || odebug_tls.guard ||
	    !odebug_tracking_any() || !odebug_opt.check_free)
		return;
	if (!get_ownership(p))
		return;		/* not allocated: the sanitizer reports it */
	size = get_allocated_size(p);
	odebug_check_returned();
	if (size && size < SANE_BLOCK_SIZE)
		odebug_check_range((uintptr_t)p, (uintptr_t)p + size);
}

/*
 * Called when free() does not reach ours.  True when a sanitizer runtime
 * took our free hook: heap blocks are then checked from there.
 */
bool odebug_sanitizer_init(void)
{
	int (*install)(malloc_hook_fn, free_hook_fn);
	Dl_info where;

	*(void **)&install = dlsym(RTLD_DEFAULT, "__sanitizer_install_malloc_and_free_hooks");
	*(void **)&get_ownership = dlsym(RTLD_DEFAULT, "__sanitizer_get_ownership");
	*(void **)&get_allocated_size = dlsym(RTLD_DEFAULT, "__sanitizer_get_allocated_size");
	if (!install || !get_ownership || !get_allocated_size)
		return false;
	if (!install(malloc_hook, free_hook))
		return false;	/* the runtime's hook slots are full */
	/*
	 * A separate runtime (gcc's libasan.so): its interceptor frames are not
	 * the culprit.  (Never the executable, where clang links its runtime.)
	 */
	odebug_backtrace_skip_module((void *)install, false);
	/* clang's, in the executable: skip up to its free() interceptor. */
	odebug_backtrace_skip_through(dlsym(RTLD_DEFAULT, "free"));
	if (odebug_opt.verbosity)
		odebug_message("free() is the sanitizer runtime's (",
			       dladdr((void *)install, &where) && where.dli_fname &&
			       *where.dli_fname ? where.dli_fname : "the executable",
			       "): heap blocks are checked from its free hook", (char *)NULL);
	return true;
}
