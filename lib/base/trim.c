/* SPDX-License-Identifier: MIT */
/*
 * trim.c - the pages libodebug gives back once started.
 *
 * The start runs code no program runs again (the options, the table's and
 * the pool's set-up, the selftest) and loads libunwind, with the
 * decompressor it links, so that no report ever calls the loader; neither
 * library runs again until a report.  The kernel maps a cached file's
 * pages 64 KiB around each fault, so all of that stays resident for the
 * life of the program: about 200 KiB of a small program's memory.  Once
 * libodebug has started (the first API call's half, init.c) and the
 * program makes a thread, the read-only segments of those three objects
 * go back to the page cache (MADV_DONTNEED on a private file mapping that
 * nobody wrote); what runs later faults its pages back in, from the page
 * cache, without a system call.  The price is paid once: three madvise()
 * calls (one an object), each zapping the pages it finds mapped, and the
 * faults that map back what runs (0.2-0.5 ms on a virtual machine whose
 * every page-table change is dear, BENCHMARKS.md).  A program that makes a
 * thread lives long enough for the pages to matter; one that never does
 * (a compiler, a shell's tools) is mostly gone before they would, and is
 * spared the price.
 *
 * A page of such a segment that is no longer the file's (a debugger's
 * breakpoint, a uprobe, a text poke: each makes an anonymous copy) keeps
 * its copy: /proc/self/pagemap tells which, and without it nothing is
 * given back.  Nothing here allocates or calls the loader after
 * odebug_trim_note(): the second half of the start may run in a signal
 * handler (init.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base.h"

#ifdef ODEBUG_HAVE_VALGRIND_H
#include <valgrind/valgrind.h>
#else
#define RUNNING_ON_VALGRIND 0
#endif

#define TRIM_RANGES	16
#define PM_BATCH	256		/* pagemap entries read at a time */
#define PM_PRESENT	(1ull << 63)
#define PM_SWAPPED	(1ull << 62)
#define PM_FILE		(1ull << 61)

static struct { uintptr_t start, end; } ranges[TRIM_RANGES];
static unsigned int nranges;
static uintptr_t page_size;
static uintptr_t self_lo, self_hi;	/* odebug_self_holds() */
/* ODEBUG_TRIM_STARTED, ODEBUG_TRIM_THREADED as they happened; TRIM_DONE once given back. */
#define TRIM_DONE	4
#define TRIM_BOTH	(ODEBUG_TRIM_STARTED | ODEBUG_TRIM_THREADED)
static int trim_state;

/* Our own object: the one whose segments hold this function. */
static bool is_self(const struct dl_phdr_info *info)
{
	uintptr_t me = (uintptr_t)&odebug_trim_note;

	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && me >= lo && me - lo < ph->p_memsz)
			return true;
	}
	return false;
}

static bool named(const char *path, const char *prefix)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, prefix, strlen(prefix));
}

/*
 * libodebug, the libunwind backtrace.c loaded, and liblzma, which
 * Debian's libunwind links for compressed debug information and which
 * only the report path needs.  A program of its own that uses liblzma
 * loses nothing: a page it runs faults back in.
 */
static bool wanted(const struct dl_phdr_info *info)
{
	const char *name = info->dlpi_name;

	if (is_self(info))
		return true;
	return name && *name && (named(name, ODEBUG_LIBUNWIND_SONAME) || named(name, "liblzma.so."));
}

/* Does a PT_LOAD segment of @info other than @self map part of the page at @page? */
static bool page_shared(const struct dl_phdr_info *info, int self, uintptr_t page)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (i != self && ph->p_type == PT_LOAD && ph->p_memsz &&
		    lo < page + page_size && lo + ph->p_memsz > page)
			return true;
	}
	return false;
}

/* Our own object's span, all its segments: [self_lo, self_hi). */
static void note_self(const struct dl_phdr_info *info)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD)
			continue;
		if (!self_hi || lo < self_lo)
			self_lo = lo;
		if (lo + ph->p_memsz > self_hi)
			self_hi = lo + ph->p_memsz;
	}
}

static int note_object(struct dl_phdr_info *info, size_t size, void *ctx)
{
	bool *trimming = ctx;
	bool joins = false;	/* the last segment was noted: the next may join it */

	(void)size;
	if (is_self(info))
		note_self(info);
	if (!*trimming || !wanted(info))
		return 0;
	for (int i = 0; i < info->dlpi_phnum && nranges < TRIM_RANGES; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;

		if (ph->p_type != PT_LOAD || lo >= hi)
			continue;
		/* Never written: not the RELRO or data segment, nothing a relocation touched. */
		if (ph->p_flags & PF_W) {
			joins = false;
			continue;
		}
		/* Whole pages of this segment's own: an end page another segment maps stays. */
		lo &= ~(page_size - 1);
		if (page_shared(info, i, lo))
			lo += page_size;
		hi = (hi + page_size - 1) & ~(page_size - 1);
		if (page_shared(info, i, hi - page_size))
			hi -= page_size;
		if (lo >= hi)
			continue;
		/*
		 * Consecutive read-only segments are one range, with the hole
		 * between them (the loader's PROT_NONE reservation for the
		 * object, where a page is given back only if it is a file's,
		 * odebug_trim()): a system call costs more than a page.
		 */
		if (joins && ranges[nranges - 1].end <= lo) {
			ranges[nranges - 1].end = hi;
		} else {
			ranges[nranges].start = lo;
			ranges[nranges].end = hi;
			nranges++;
		}
		joins = true;
	}
	return 0;
}

/**
 * odebug_trim_note - find the segments odebug_trim() gives back
 *
 * In the constructor's half of the start (it calls the loader), after
 * libunwind is loaded; and our own object's span (odebug_self_holds()).
 * A page a text relocation wrote is a copy, and stays (odebug_trim()).
 * Nothing to trim under valgrind: the program's code runs from its
 * translations, and the memory is valgrind's.
 */
void odebug_trim_note(void)
{
	bool trimming = !RUNNING_ON_VALGRIND;

	nranges = 0;
	page_size = (uintptr_t)getpagesize();
	dl_iterate_phdr(note_object, &trimming);
}

/**
 * odebug_self_holds - is @p in libodebug's own object (its segments' span)?
 *
 * False before odebug_trim_note().  What is there is never unloaded
 * (-z nodelete) and never moves.
 */
bool odebug_self_holds(const void *p)
{
	return (uintptr_t)p - self_lo < self_hi - self_lo;
}

/* Give back [lo, hi): file pages nobody wrote. */
static void trim_run(uintptr_t lo, uintptr_t hi)
{
	if (lo < hi)
		syscall(SYS_madvise, lo, hi - lo, MADV_DONTNEED);
}

/* Pages of [start, end) still the file's, given back in runs; a copied page stays. */
static void trim_range(int fd, uintptr_t start, uintptr_t end)
{
	static uint64_t pm[PM_BATCH];	/* odebug_trim() runs once (or in a test) */
	uintptr_t run = start;

	while (start < end) {
		size_t n = (end - start) / page_size, i;
		long got;

		if (n > PM_BATCH)
			n = PM_BATCH;
		got = syscall(SYS_pread64, fd, pm, n * sizeof(pm[0]),
			      (off_t)(start / page_size * sizeof(pm[0])));
		if (got != (long)(n * sizeof(pm[0])))
			break;	/* unanswered: leave the rest */
		for (i = 0; i < n; i++, start += page_size) {
			bool copied = (pm[i] & PM_SWAPPED) ||
				      ((pm[i] & PM_PRESENT) && !(pm[i] & PM_FILE));

			if (copied) {
				trim_run(run, start);
				run = start + page_size;
			}
		}
	}
	trim_run(run, start);
}

/**
 * odebug_trim - give the noted segments' pages back to the page cache
 *
 * Once (odebug_trim_after()), or from a test.  Raw system calls only (openat,
 * pread, madvise, close): safe in a signal handler and under the start
 * lock; no file descriptor outlives the call, and errno is kept.
 */
void odebug_trim(void)
{
	int saved = errno;
	long fd;

	if (!nranges)
		return;
	fd = odebug_open_proc("pagemap");
	if (fd >= 0) {
		for (unsigned int i = 0; i < nranges; i++)
			trim_range((int)fd, ranges[i].start, ranges[i].end);
		syscall(SYS_close, (int)fd);
	}
	errno = saved;
}

/**
 * odebug_trim_after - give the pages back once libodebug is started and threaded
 * @event:	ODEBUG_TRIM_STARTED (the end of the lazy start) or
 *		ODEBUG_TRIM_THREADED (the program is making a thread)
 *
 * The call that completes the pair gives the pages back, once; later
 * calls cost a load.
 */
void odebug_trim_after(int event)
{
	int s;

	if (likely(__atomic_load_n(&trim_state, __ATOMIC_RELAXED) & TRIM_DONE))
		return;
	s = __atomic_or_fetch(&trim_state, event, __ATOMIC_ACQ_REL);
	if ((s & TRIM_BOTH) != TRIM_BOTH ||
	    (__atomic_fetch_or(&trim_state, TRIM_DONE, __ATOMIC_ACQ_REL) & TRIM_DONE))
		return;
	odebug_trim();
}
