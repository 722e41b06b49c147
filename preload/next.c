/* SPDX-License-Identifier: MIT */
/*
 * next.c - finding the functions we interpose on, and telling the user when
 * the program does not reach ours.
 *
 * Other libraries' constructors call free() before ours runs, so free and
 * realloc start as bootstrap stubs that resolve on first use: a successful
 * dlsym(RTLD_NEXT) allocates nothing on glibc 2.34+.  munmap and mremap
 * never call dlsym lazily (an allocator initialising under its own lock
 * may be the caller); until our constructor has resolved them they are raw
 * system calls.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core.h"
#include "next.h"

static void bootstrap_free(void *p);
static void *bootstrap_realloc(void *p, size_t size);
static int raw_munmap(void *addr, size_t len);
static void *raw_mremap(void *old, size_t old_size, size_t new_size, int flags,
			void *new_addr);

void (*odebug_next_free)(void *p) = bootstrap_free;
void *(*odebug_next_realloc)(void *p, size_t size) = bootstrap_realloc;
int (*odebug_next_munmap)(void *addr, size_t len) = raw_munmap;
void *(*odebug_next_mremap)(void *old, size_t old_size, size_t new_size,
			    int flags, void *new_addr) = raw_mremap;
size_t (*odebug_next_usable_size)(void *p);
/* Until resolved (a dlclose from another library's constructor): look it up. */
static int lazy_dlclose(void *handle);
static int lazy_dlclose_base(void *handle);
int (*odebug_next_dlclose)(void *handle) = lazy_dlclose;
int (*odebug_next_dlclose_base)(void *handle) = lazy_dlclose_base;
size_t odebug_page_size = 4096;

/*
 * Set around our own lookups: a free() they make goes nowhere (leaks).
 * Volatile, as every guard around a libc call that may call back into us:
 * glibc declares dlsym() and most of its functions leaf (__THROW), so GCC
 * drops a plain write to a file-static variable made around them.
 */
static ODEBUG_TLS volatile int resolving;

static void *next(const char *name)
{
	void *fn;

	resolving++;
	fn = dlsym(RTLD_NEXT, name);
	resolving--;
	return fn;
}

/* The span of the object that holds the last versioned definition found. */
static uintptr_t object_lo, object_hi;

static int find_object(struct dl_phdr_info *info, size_t size, void *data)
{
	uintptr_t addr = (uintptr_t)data, lo = UINTPTR_MAX, hi = 0;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD)
			continue;
		if (info->dlpi_addr + ph->p_vaddr < lo)
			lo = info->dlpi_addr + ph->p_vaddr;
		if (info->dlpi_addr + ph->p_vaddr + ph->p_memsz > hi)
			hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
	}
	if (addr < lo || addr >= hi)
		return 0;
	object_lo = lo;
	object_hi = hi;
	return 1;
}

/* Do @a and @b lie in one object?  (One walk of the link map per object.) */
static bool same_object(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;

	if (x < object_lo || x >= object_hi)
		dl_iterate_phdr(find_object, (void *)x);
	return x >= object_lo && x < object_hi && y >= object_lo && y < object_hi;
}

/*
 * The next definition of @name at glibc's @version, else its default one.
 * An object between us and glibc that defines @name without a version (a
 * sanitizer runtime's interceptor, loaded after us) comes first: dlvsym()
 * passes over unversioned definitions, and skipping the interceptor would
 * hide the call from its runtime (ThreadSanitizer then crashes in threads
 * it never saw start).
 */
void *odebug_next_at(const char *name, const char *version)
{
	static volatile int sanitized = -1;	/* a sanitizer runtime is loaded */
	void *any = NULL, *exact;

	resolving++;
	if (sanitized < 0)	/* by the objects' hash tables: a failed dlsym() mallocs */
		sanitized = odebug_defined_elsewhere("__sanitizer_install_malloc_and_free_hooks");
	exact = dlvsym(RTLD_NEXT, name, version);
	/* The second lookup only where interceptors are to be expected. */
	if (!exact || sanitized)
		any = dlsym(RTLD_NEXT, name);
	if (exact && any && any != exact && !same_object(exact, any))
		exact = NULL;
	resolving--;
	return exact ? exact : any;
}

/* The same function at the baseline version (else its default one). */
static void *next_base(const char *name)
{
	return odebug_next_at(name, ODEBUG_V_BASE);
}

/* free first: the dlerror strings a later lookup frees need somewhere to go. */
static void resolve_allocator(void)
{
	void *fn;

	if (odebug_next_free == bootstrap_free && (fn = next("free")))
		*(void **)&odebug_next_free = fn;
	if (odebug_next_realloc == bootstrap_realloc && (fn = next("realloc")))
		*(void **)&odebug_next_realloc = fn;
	if (!odebug_next_usable_size && (fn = next("malloc_usable_size")))
		*(void **)&odebug_next_usable_size = fn;
}

static void bootstrap_free(void *p)
{
	if (resolving)
		return;		/* a free() from inside dlsym: leak, never crash */
	resolve_allocator();
	if (odebug_next_free != bootstrap_free)
		odebug_next_free(p);
}

static void *bootstrap_realloc(void *p, size_t size)
{
	if (!resolving)
		resolve_allocator();
	if (odebug_next_realloc == bootstrap_realloc)
		return NULL;
	return odebug_next_realloc(p, size);
}

static int lazy_dlclose(void *handle)
{
	int (*fn)(void *) = NULL;

	*(void **)&fn = next("dlclose");
	if (!fn)
		return -1;
	odebug_next_dlclose = fn;
	return fn(handle);
}

static int lazy_dlclose_base(void *handle)
{
	int (*fn)(void *) = NULL;

	*(void **)&fn = next_base("dlclose");
	if (!fn)
		return -1;
	odebug_next_dlclose_base = fn;
	return fn(handle);
}

static int raw_munmap(void *addr, size_t len)
{
	return (int)syscall(SYS_munmap, addr, len);
}

static void *raw_mremap(void *old, size_t old_size, size_t new_size, int flags,
			void *new_addr)
{
	return (void *)syscall(SYS_mremap, old, old_size, new_size, flags, new_addr);
}

static void resolve_all(void)
{
	void *fn;
	int page = getpagesize();	/* the loader's word, not sysconf()'s code */

	if (page > 0)
		odebug_page_size = (size_t)page;
	resolve_allocator();
	if ((fn = next("munmap")))
		*(void **)&odebug_next_munmap = fn;
	if ((fn = next("mremap")))
		*(void **)&odebug_next_mremap = fn;
	if ((fn = next("dlclose")))
		*(void **)&odebug_next_dlclose = fn;
	if ((fn = next_base("dlclose")))
		*(void **)&odebug_next_dlclose_base = fn;
}

/*
 * When enabled: does free() as the program calls it reach ours?  If another
 * allocator was preloaded first, or the executable defines free itself, no
 * release is ever checked; say so once rather than check nothing silently.
 * The test is behavioural: free(NULL) through the address the program sees
 * (for a non-PIE executable, its canonical PLT entry), which every
 * allocator accepts as a no-op.
 */
static void check_binding(void)
{
	void (*fn)(void *);
	Dl_info seen, self;

	*(void **)&fn = dlsym(RTLD_DEFAULT, "free");
	if (!fn)
		return;
	odebug_free_reached = 0;
	fn(NULL);
	if (odebug_free_reached)
		return;
	if (odebug_sanitizer_init())
		return;		/* a sanitizer's free(): checked from its hook */
	if (dladdr((void *)fn, &seen) && dladdr((void *)check_binding, &self) &&
	    seen.dli_fbase == self.dli_fbase) {
		odebug_message("free() is redirected away from libodebug (under valgrind, "
			       "add --soname-synonyms=somalloc=nomatch): released memory "
			       "is not checked", (char *)NULL);
		return;
	}
	odebug_message("free() is bound to ",
		       dladdr((void *)fn, &seen) && seen.dli_fname && *seen.dli_fname ?
		       seen.dli_fname : "the executable",
		       ", not libodebug: released memory is not checked "
		       "(put libodebug.so first in LD_PRELOAD)", (char *)NULL);
}

/*
 * Resolve always, enabled or not: later calls then forward in one jump.
 * Numbered, this constructor runs before the core's (unnumbered) one, so
 * the next definitions are known before libodebug turns on, as when the
 * core's setup did this itself; enabling is idempotent, whichever comes
 * first decides.
 */
__attribute__((constructor(101))) static void preload_constructor(void)
{
	odebug_start_step("loaded");
	resolve_all();
	odebug_start_step("next.c: free, realloc, munmap...");
	odebug_enable_slow();
	odebug_start_step("decided (init.c)");
	/* Decided on (started or IDLE): free(NULL) then marks the binding. */
	if (odebug_load(&odebug_mode) >= ODEBUG_MODE_ON) {
		odebug_guard_enter();	/* the probe's blocks are not ours to check */
		odebug_free_probe();
		odebug_guard_exit();
		odebug_start_step("free() probe");
		check_binding();
	}
	odebug_start_step("free() binding");
}
