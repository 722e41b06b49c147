/* SPDX-License-Identifier: MIT */
/*
 * types.h - what every file of libodebug shares: the build's macros,
 * limits, and the structures passed between files (a report's snapshot
 * of a tracker, a named frame).  Included through base.h.
 */
#ifndef ODEBUG_TYPES_H
#define ODEBUG_TYPES_H

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lock.h"
/* The library defines the functions the header would inline. */
#define ODEBUG_OUT_OF_LINE
#include "odebug.h"

/* Every line libodebug writes begins with it (the kernel's pr_fmt). */
#define ODEBUG_PREFIX	"ODEBUG: "

#define ODEBUG_EXPORT	__attribute__((visibility("default")))
/*
 * On the declaration of each internal variable: -fvisibility=hidden marks
 * definitions only, and a variable declared without it is read through
 * the GOT (two instructions where one does).
 */
#define ODEBUG_HIDDEN	__attribute__((visibility("hidden")))
/* Thread-locals: initial-exec, since a dynamic TLS access may malloc. */
#define ODEBUG_TLS	__thread __attribute__((tls_model("initial-exec")))
/*
 * Static data of a page or more (buffers, tables): kept apart from the
 * small variables, so that these share a few pages and a process makes
 * resident only the pages of the big ones it really touches.  x86-64's
 * large-data section, NOBITS like .bss and placed after it by the
 * default linker script; elsewhere (and with clang, which may not know
 * the name) plain .bss.
 */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define ODEBUG_LARGE	__attribute__((section(".lbss.odebug")))
#else
#define ODEBUG_LARGE
#endif
/*
 * The @i-th slot an open-addressing table of @size slots probes for a key
 * hashed to @h (both sizes powers of two): the first @first probes stay
 * in slots [0, @first), a page, so that a program with few keys makes one
 * page of the table resident; the others go over the whole table from
 * @h.  Every slot is visited within @first + @size probes.
 */
static inline __attribute__((always_inline)) size_t
odebug_probe(size_t h, size_t i, size_t first, size_t size)
{
	return i < first ? (h + i) & (first - 1) : (h + i - first) & (size - 1);
}

/*
 * Small variables the frequent paths read and rarely write (the mode, the
 * families' on flags and descriptor slots, the table's and the pool's
 * bases): kept together with .data, so that a call reads libodebug's own
 * data from a page or two.  On a kernel that flushes the TLB at each
 * system call, each page a call touches after one is a page walk.
 */
#define ODEBUG_HOT	__attribute__((section(".data.odebug_hot")))

#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)

/* A ThreadSanitizer build (gcc defines the macro, clang the feature). */
#if defined(__SANITIZE_THREAD__)
#define ODEBUG_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ODEBUG_TSAN 1
#endif
#endif
#ifndef ODEBUG_TSAN
#define ODEBUG_TSAN 0
#endif

/* Relaxed counters: statistics, never used to order memory. */
#define odebug_inc(p)		__atomic_fetch_add((p), 1, __ATOMIC_RELAXED)
#define odebug_add(p, n)	__atomic_fetch_add((p), (n), __ATOMIC_RELAXED)
/*
 * A relaxed load.  GCC makes an __atomic load of a global in position-
 * independent code two instructions (its address, then the load); on
 * x86-64 a naturally aligned volatile load is the same single mov, one
 * instruction, which every interposer's first test pays.  Sanitizer
 * builds keep the __atomic form, which ThreadSanitizer sees as atomic.
 */
#if defined(__x86_64__) && defined(__GNUC__) && !ODEBUG_TSAN
#define odebug_load(p)		(*(const volatile __typeof__(*(p)) *)(p))
#else
#define odebug_load(p)		__atomic_load_n((p), __ATOMIC_RELAXED)
#endif
#define odebug_store(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELAXED)
/*
 * A word another thread may change, read once for a test whose every
 * answer is safe (a stale one takes the slow path, or is an answer a
 * racing caller could get anyway): a plain load, which GCC folds into the
 * test or compare that uses it, where a volatile or __atomic load costs a
 * mov of its own.  For the few fast paths that count each instruction
 * (an rwlock's seal); sanitizer builds keep the __atomic form.
 */
#if defined(__x86_64__) && defined(__GNUC__) && !ODEBUG_TSAN
#define odebug_load_folded(p)	(*(p))
#else
#define odebug_load_folded(p)	__atomic_load_n((p), __ATOMIC_RELAXED)
#endif

/* Limits, each named once. */
#define ODEBUG_MAX_FRAMES	128	/* stack_depth's maximum */
#define ODEBUG_FRAME_SLACK	32	/* frames captured beyond it: ours, skipped */
#define ODEBUG_NOTICE_LIMIT	5	/* lines of one kind of notice printed */

/* Objects are grouped by 4 KiB chunk, whatever the MMU's page size. */
#define ODEBUG_CHUNK_SHIFT	12
#define ODEBUG_CHUNK_SIZE	((uintptr_t)1 << ODEBUG_CHUNK_SHIFT)
#define ODEBUG_CHUNK_MASK	(~(ODEBUG_CHUNK_SIZE - 1))

/* What a report needs, copied under the bucket lock. */
struct odebug_snapshot {
	uintptr_t addr;
	const struct debug_obj_descr *descr;
	unsigned int astate;
	enum debug_obj_state state;
	uint32_t init_stack, activate_stack;
	/*
	 * Set: the culprit's return addresses, recorded at its call (as
	 * odebug_backtrace_skip() leaves them) for a misuse judged later (a
	 * close whose watch was still live at its loop's next poll); the
	 * report and its dedup key use them in place of the reporting
	 * call's stack.
	 */
	void *const *culprit_pcs;
	int culprit_n;
	unsigned int flags;		/* ODEBUG_SNAP_* */
	const char *type_name;		/* set: used instead of descr->name */
	const char *module;		/* ODEBUG_SNAP_UNLOADED: its path */
	bool dead;		/* the object's memory is gone: never call debug_hint on it */
	const char *name;	/* the type to print; NULL until odebug_descr_resolve() */
};

/*
 * The object's memory is gone or reused: its frame returned (FRAME_GONE),
 * or its module was unloaded (UNLOADED; the descriptor may be gone too).
 * No debug_hint is called and no fixup follows.
 */
#define ODEBUG_SNAP_FRAME_GONE	1u
#define ODEBUG_SNAP_UNLOADED	2u

static inline const char *odebug_snapshot_type(const struct odebug_snapshot *o)
{
	if (o->type_name)
		return o->type_name;
	return o->name ? o->name : o->descr->name;
}

/*
 * A frame, named.  Strings live in symbolize.c until the next report ("",
 * never NULL, when unknown).  An inlined call is a frame of its own, with
 * the address of the code it was inlined into.
 */
struct odebug_frame {
	uintptr_t pc;
	const char *module;		/* NULL when unknown */
	uintptr_t module_off;
	uintptr_t func_off;		/* when has_off */
	const char *func;
	const char *file;
	unsigned int line;
	bool inlined;
	bool has_off;
};

#endif /* ODEBUG_TYPES_H */
