/* SPDX-License-Identifier: MIT */
/*
 * internal.h - libodebug's internal interfaces, grouped by the file that
 * owns them.  Every name here carries the odebug_ prefix and hidden
 * visibility; only include/odebug.h and the interposers are exported.
 */
#ifndef ODEBUG_INTERNAL_H
#define ODEBUG_INTERNAL_H

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lock.h"
#if (defined(__x86_64__)) && defined(__has_include)
#if __has_include(<sys/single_threaded.h>)
#include <sys/single_threaded.h>
#define ODEBUG_LOCAL_CAS 1
#endif
#endif
#ifndef ODEBUG_LOCAL_CAS
#define ODEBUG_LOCAL_CAS 0
#endif
/* The library defines the functions the header would inline. */
#define ODEBUG_OUT_OF_LINE
#include "odebug.h"

#define ODEBUG_EXPORT	__attribute__((visibility("default")))
/* Thread-locals: initial-exec, since a dynamic TLS access may malloc. */
#define ODEBUG_TLS	__thread __attribute__((tls_model("initial-exec")))
#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)

/* Relaxed counters: statistics, never used to order memory. */
#define odebug_inc(p)		__atomic_fetch_add((p), 1, __ATOMIC_RELAXED)
#define odebug_add(p, n)	__atomic_fetch_add((p), (n), __ATOMIC_RELAXED)
#define odebug_load(p)		__atomic_load_n((p), __ATOMIC_RELAXED)
#define odebug_store(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELAXED)

/* Limits, each named once. */
#define ODEBUG_MAX_FRAMES	128	/* stack_depth's maximum */
#define ODEBUG_FRAME_SLACK	32	/* frames captured beyond it: ours, skipped */
#define ODEBUG_NOTICE_LIMIT	5	/* lines of one kind of notice printed */

/* Objects are grouped by 4 KiB chunk, whatever the MMU's page size. */
#define ODEBUG_CHUNK_SHIFT	12
#define ODEBUG_CHUNK_SIZE	((uintptr_t)1 << ODEBUG_CHUNK_SHIFT)
#define ODEBUG_CHUNK_MASK	(~(ODEBUG_CHUNK_SIZE - 1))

/*
 * One tracker per tracked address: 16 bytes on LP64 (asserted below).
 * Its word holds all a lockless annotation call compares and changes, so
 * one compare-and-swap both checks the object's identity and makes the
 * transition (table.c's header gives the rules):
 *
 *   bit 63 ........ 16 | 15 ........ 4 |  3   | 2 .. 0
 *       address (48)   | descr slot(12)| busy | state
 *
 * The slot names the descriptor in descr.c's registry; busy is set exactly
 * while astate is not 0; state 7 (RETIRED) marks a tracker unlinked or on
 * its way out, its address kept so the chain it left can still be found.
 */
struct odebug_tracker {
	uint64_t word;				/* address | descr slot | busy | state */
	uint32_t hnext;				/* chain or free list (pool index) */
	unsigned int astate;			/* changed only under the bucket lock */
};

#define ODEBUG_STATE_BITS	7u
#define ODEBUG_WORD_BUSY	8u
#define ODEBUG_WORD_RETIRED	7u		/* a state no tracker in a chain has */
#define ODEBUG_WORD_FREED	6u		/* linked, untracked: debug_object_free()d */
#define ODEBUG_DESCR_SHIFT	4
#define ODEBUG_DESCR_SLOTS	4096u		/* 12 bits */
#define ODEBUG_ADDR_SHIFT	16
#define ODEBUG_ADDR_LIMIT	((uintptr_t)1 << (64 - ODEBUG_ADDR_SHIFT))
_Static_assert(ODEBUG_STATE_MAX <= ODEBUG_WORD_FREED, "states fit below FREED and RETIRED");
_Static_assert(sizeof(void *) != 8 || sizeof(struct odebug_tracker) == 16, "a tracker is 16 bytes");

static inline uint64_t odebug_word(uintptr_t addr, unsigned int slot, enum debug_obj_state state)
{
	return (uint64_t)addr << ODEBUG_ADDR_SHIFT | (uint64_t)slot << ODEBUG_DESCR_SHIFT | state;
}

static inline uintptr_t odebug_word_addr(uint64_t w) { return (uintptr_t)(w >> ODEBUG_ADDR_SHIFT); }
static inline unsigned int odebug_word_slot(uint64_t w)
{
	return (unsigned int)(w >> ODEBUG_DESCR_SHIFT) & (ODEBUG_DESCR_SLOTS - 1);
}
static inline unsigned int odebug_word_state(uint64_t w)
{
	return (unsigned int)(w & ODEBUG_STATE_BITS);
}
/* @w with state @state and busy set as @astate says. */
static inline uint64_t odebug_word_set(uint64_t w, unsigned int state, unsigned int astate)
{
	return (w & ~(uint64_t)(ODEBUG_STATE_BITS | ODEBUG_WORD_BUSY)) | state |
	       (astate ? ODEBUG_WORD_BUSY : 0);
}

static inline uint64_t odebug_tracker_word(const struct odebug_tracker *t)
{
	return __atomic_load_n(&t->word, __ATOMIC_ACQUIRE);
}

/*
 * Every change of a linked tracker's word is a compare-and-swap, under the
 * bucket lock or not: false when the word is no longer @old (a lockless
 * call changed it), and the caller reads it again and decides again.
 */
static inline bool odebug_tracker_cas(struct odebug_tracker *t, uint64_t old, uint64_t new)
{
#ifdef ODEBUG_TABLE_KERNEL
	/* The kernel's table: no lockless writer, the bucket lock orders all. */
	if (t->word != old)
		return false;
	__atomic_store_n(&t->word, new, __ATOMIC_RELAXED);
	return true;
#else
#if ODEBUG_LOCAL_CAS
	/*
	 * No other thread (glibc's __libc_single_threaded, as libstdc++ reads
	 * it for shared_ptr): the word can only change under us in a signal
	 * handler, which runs between instructions, so one cmpxchg without
	 * the lock prefix is atomic enough, and it neither locks the line
	 * nor drains the store buffer.  The flag turns false before the
	 * second thread starts and cannot while this thread is in here.
	 */
	if (__libc_single_threaded) {
		bool ok;

		__asm__ volatile("cmpxchgq %3, %1"
				 : "+a"(old), "+m"(t->word), "=@ccz"(ok)
				 : "r"(new)
				 : "memory");
		return ok;
	}
#endif
	return __atomic_compare_exchange_n(&t->word, &old, new, false,
					   __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
#endif
}

/* descr.c: the registry the word's slot indexes (64 bytes an entry). */
struct odebug_descr_entry {
	const struct debug_obj_descr *descr;	/* the key; NULL: empty */
	const char *name;
	char copy[48];
};
extern struct odebug_descr_entry odebug_descr_entries[];

/* The descriptor a tracker's slot names (registered before the tracker was made). */
static inline const struct debug_obj_descr *odebug_descr_at(unsigned int slot)
{
	return __atomic_load_n(&odebug_descr_entries[slot & (ODEBUG_DESCR_SLOTS - 1)].descr,
			       __ATOMIC_RELAXED);
}

static inline uintptr_t odebug_tracker_addr(const struct odebug_tracker *t)
{
	return odebug_word_addr(odebug_tracker_word(t));
}

static inline const struct debug_obj_descr *odebug_tracker_descr(const struct odebug_tracker *t)
{
	return odebug_descr_at(odebug_word_slot(odebug_tracker_word(t)));
}

static inline enum debug_obj_state odebug_tracker_state(const struct odebug_tracker *t)
{
	return (enum debug_obj_state)odebug_word_state(odebug_tracker_word(t));
}

static inline unsigned int odebug_tracker_next(const struct odebug_tracker *t)
{
	return __atomic_load_n(&t->hnext, __ATOMIC_RELAXED);
}

/* Chain links are read without the lock too: written atomically. */
static inline void odebug_tracker_set_next(struct odebug_tracker *t, uint32_t next)
{
	__atomic_store_n(&t->hnext, next, __ATOMIC_RELAXED);
}

/* What a report needs, copied under the bucket lock. */
struct odebug_snapshot {
	uintptr_t addr;
	const struct debug_obj_descr *descr;
	unsigned int astate;
	enum debug_obj_state state;
	uint32_t init_stack, activate_stack;
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

/* "init.c": the switch, the re-entry guard, process setup */
/*
 * IDLE: on, but nothing started until the first API call (init.c).  It
 * comes after ON, so "mode >= ODEBUG_MODE_ON" (decided on, started or not)
 * costs the free path the same one compare as "mode == ODEBUG_MODE_ON".
 */
enum odebug_mode { ODEBUG_MODE_UNINIT, ODEBUG_MODE_OFF, ODEBUG_MODE_ON, ODEBUG_MODE_IDLE };
extern int odebug_mode;
extern ODEBUG_TLS int odebug_guard;
bool odebug_enable_slow(void);
bool odebug_start_slow(void);
bool odebug_selftesting(void);
void odebug_disable(void);

/*
 * True when the debug_object_* calls should do their work.  Disabled, this
 * is a load and a compare that always goes the same way.
 */
static inline bool odebug_on(void)
{
	int mode = odebug_load(&odebug_mode);

	if (likely(mode == ODEBUG_MODE_ON))
		return odebug_guard == 0;
	if (likely(mode == ODEBUG_MODE_OFF))
		return false;
	return odebug_start_slow() && odebug_guard == 0;
}

static inline void odebug_guard_enter(void) { odebug_guard++; __atomic_signal_fence(__ATOMIC_SEQ_CST); }
static inline void odebug_guard_exit(void) { __atomic_signal_fence(__ATOMIC_SEQ_CST); odebug_guard--; }

/* "options.c": the one table of ODEBUG_OPTIONS */
#define ODEBUG_OPT_STRLEN 256
struct odebug_options {
	unsigned long max_reports;
	unsigned long pool_size;
	unsigned long pool_max;
	unsigned long stack_depth;
	unsigned long selftest;
	unsigned long check_free;
	unsigned long check_pthread;
	unsigned long check_sem;
	unsigned long check_held;
	unsigned long origins;
	char log_path[ODEBUG_OPT_STRLEN];
	char log_format[ODEBUG_OPT_STRLEN];
	char suppressions[ODEBUG_OPT_STRLEN];
	char symbolizer[ODEBUG_OPT_STRLEN];
	char modules[ODEBUG_OPT_STRLEN], module_path[ODEBUG_OPT_STRLEN];	/* lib/modules.c */
	unsigned long exitcode;
	unsigned long abort_on_error;
	unsigned long halt_on_error;
	unsigned long report_active_at_exit;
	unsigned long print_stats;
	unsigned long help;
	unsigned long verbosity;
	unsigned long dedup;
};
extern struct odebug_options odebug_opt;
void odebug_options_parse(const char *text);
void odebug_options_help(void);
#define ODEBUG_QUOTE_LEN (64 * 4 + 4)
const char *odebug_quote(char *dst, const char *s, size_t len);
/* A path from an option, with room for a ".<pid>" suffix: whole. */
#define ODEBUG_QUOTE_PATH_KEEP	(ODEBUG_OPT_STRLEN + 24)
#define ODEBUG_QUOTE_PATH_LEN	(ODEBUG_QUOTE_PATH_KEEP * 4 + 4)
const char *odebug_quote_n(char *dst, size_t keep, const char *s, size_t len);

/* "held.c": memory the kernel and libc hold (held.h) */
void odebug_held_init(void);
bool odebug_held_released(const struct odebug_snapshot *o);
bool odebug_held_describe(const struct odebug_snapshot *o, char *buf, size_t cap);

/* "prim.c": the only file that talks to the kernel directly */
void *odebug_map(size_t size);
void *odebug_reserve(size_t size);
void odebug_unmap(void *addr, size_t size);
void odebug_write(int fd, const char *buf, size_t len);
int odebug_gettid(void);
const char *odebug_getenv(const char *name);

/* "fmt.c": formatting into a fixed buffer, flushed with write(2) */
struct odebug_buf {
	int fd;			/* flushed to when full; -1: truncate instead */
	size_t len, cap;
	char *data;
	char inline_data[512];
};
void odebug_buf_init(struct odebug_buf *b, int fd);
void odebug_buf_init_mem(struct odebug_buf *b, char *mem, size_t cap);
void odebug_puts(struct odebug_buf *b, const char *s);
void odebug_putc(struct odebug_buf *b, char c);
void odebug_put_hex(struct odebug_buf *b, uintptr_t v);
void odebug_put_dec(struct odebug_buf *b, unsigned long v);
void odebug_put_pad(struct odebug_buf *b, const char *s, size_t width);
void odebug_put_json_str(struct odebug_buf *b, const char *s);
void odebug_civil_from_days(long days, int *year, unsigned int *month, unsigned int *day);
void odebug_flush(struct odebug_buf *b);
void odebug_message(const char *first, ...) __attribute__((sentinel));

/* "pool.c": trackers, in one mapping reserved at start */
bool odebug_pool_init(void);
void odebug_pool_fini(void);
bool odebug_pool_fill(void);
extern struct odebug_tracker *odebug_pool_base;
/* Indexes below this are mapped (never unmapped while on): lockless reads. */
extern unsigned long odebug_pool_reserved;

/* Trackers are named by their 32-bit index in the pool; 0 is none. */
static inline struct odebug_tracker *odebug_tracker_at(uint32_t index)
{
	return index ? &odebug_pool_base[index] : NULL;
}

static inline uint32_t odebug_tracker_index(const struct odebug_tracker *t)
{
	return (uint32_t)(t - odebug_pool_base);
}

/*
 * With origins=1, the depot ids of a tracker's init and activate stacks,
 * beside the pool (NULL otherwise): trackers stay 24 bytes without them.
 */
enum odebug_origin { ODEBUG_ORIGIN_INIT, ODEBUG_ORIGIN_ACTIVATE };
extern uint32_t (*odebug_origins)[2];

static inline uint32_t odebug_tracker_origin(const struct odebug_tracker *t,
					     enum odebug_origin which)
{
	return odebug_origins ? odebug_origins[odebug_tracker_index(t)][which] : 0;
}

static inline void odebug_tracker_set_origin(const struct odebug_tracker *t,
					     enum odebug_origin which, uint32_t id)
{
	if (odebug_origins)
		odebug_origins[odebug_tracker_index(t)][which] = id;
}
extern unsigned long odebug_trackers_out;
void odebug_pool_drain_cache(void);

/* Can anything be tracked?  Zero is exact: the free() fast path. */
static inline bool odebug_tracking_any(void)
{
	return odebug_load(&odebug_trackers_out) != 0;
}
struct odebug_tracker *odebug_pool_alloc(void);
void odebug_pool_free(struct odebug_tracker *t);
void odebug_pool_recycle(struct odebug_tracker *t);
void odebug_pool_count(bool alloc);
void odebug_pool_lock(void);
void odebug_pool_unlock(void);
void odebug_pool_stats(struct debug_objects_stats *s);
void odebug_pool_restore(const struct debug_objects_stats *s);

/*
 * "bucket.c", "table.c" (or "table-kernel.c"): the tracker table, 8192
 * (the kernel's: 16384) buckets hashed by 4 KiB chunk.  How a bucket chains its trackers is
 * private to table.c; its users walk trackers through these operations.
 */
/*
 * Ours: a line each (0.5 MiB in all), so that threads working on objects
 * of different chunks never share a lock's line.  The kernel-style
 * table's 16384: two a line, the same 0.5 MiB.
 */
struct odebug_bucket {
	odebug_spinlock_t lock;
	uint32_t count;				/* trackers in the bucket */
#ifdef ODEBUG_TABLE_KERNEL
} __attribute__((aligned(32)));
#else
} __attribute__((aligned(64)));
#endif
extern struct odebug_bucket *odebug_buckets;
/*
 * The kernel's 16384 buckets for its table; 8192 for ours, whose buckets
 * hold 128 chains each (table.c): the same 4 MiB of chain heads.
 */
#ifdef ODEBUG_TABLE_KERNEL
#define ODEBUG_HASH_BITS 14
#else
#define ODEBUG_HASH_BITS 13
#endif

/* The kernel's hash_long() of the chunk number: the golden ratio. */
static inline uint64_t odebug_chunk_hash(uintptr_t addr)
{
	return (uint64_t)(addr >> ODEBUG_CHUNK_SHIFT) * 0x61C8864680B583EBull;
}

/* The bucket of @addr's chunk: the hash's top bits. */
static inline struct odebug_bucket *odebug_bucket_of(uintptr_t addr)
{
	return &odebug_buckets[odebug_chunk_hash(addr) >> (64 - ODEBUG_HASH_BITS)];
}

/*
 * Every lock of ours is held with the re-entry guard set: a signal handler
 * that calls free() or the API while this thread holds it passes through
 * instead of spinning forever on a lock its own thread holds.
 */
/*
 * Which 4 KiB pages of the bucket array have had a bucket locked: fork()
 * locks and unlocks the buckets of those pages only, so the pages nobody
 * used are not copied in the parent and the child (bucket.c).  A page is
 * marked under a lock the fork handler holds across the fork.
 */
#define ODEBUG_BUCKET_PAGE_SHIFT	12
#define ODEBUG_BUCKET_PAGES	((sizeof(struct odebug_bucket) << ODEBUG_HASH_BITS) >> \
				 ODEBUG_BUCKET_PAGE_SHIFT)
extern uint64_t odebug_bucket_pages_used[(ODEBUG_BUCKET_PAGES + 63) / 64];
bool odebug_bucket_first_use(size_t page, bool wait);

static inline size_t odebug_bucket_page(const struct odebug_bucket *b)
{
	return (size_t)((const char *)b - (const char *)odebug_buckets) >> ODEBUG_BUCKET_PAGE_SHIFT;
}

static inline bool odebug_bucket_page_used(size_t page)
{
	return odebug_load(&odebug_bucket_pages_used[page / 64]) >> (page % 64) & 1;
}

static inline void odebug_bucket_lock(struct odebug_bucket *b)
{
	size_t page = odebug_bucket_page(b);

	odebug_guard_enter();
	if (unlikely(!odebug_bucket_page_used(page)))
		odebug_bucket_first_use(page, true);
	odebug_spin_lock(&b->lock);
}

static inline void odebug_bucket_unlock(struct odebug_bucket *b)
{
	odebug_spin_unlock(&b->lock);
	odebug_guard_exit();
}

/* Never waits (debug_object_print from a debugger): false when held. */
static inline bool odebug_bucket_trylock(struct odebug_bucket *b)
{
	size_t page = odebug_bucket_page(b);

	odebug_guard_enter();
	if ((odebug_bucket_page_used(page) || odebug_bucket_first_use(page, false)) &&
	    odebug_spin_trylock(&b->lock))
		return true;
	odebug_guard_exit();
	return false;
}

/* bucket.c */
bool odebug_buckets_init(void);
void odebug_buckets_fini(void);
void odebug_stat_max(unsigned long *stat, unsigned long value);
extern unsigned long odebug_max_chain;
/*
 * A visit of the buckets of a range: @chains is the set of the bucket's
 * chains that can hold an object in [start, end), to pass to
 * odebug_bucket_take() or odebug_bucket_each(); called without the bucket
 * lock; returns true to stop.
 */
typedef bool (*odebug_visit_fn)(struct odebug_bucket *b, uint64_t chains,
				uintptr_t start, uintptr_t end, void *ctx);
void odebug_table_visit_all(uint64_t chains, uintptr_t start, uintptr_t end,
			    odebug_visit_fn visit, void *ctx);
void odebug_trackers_put(uint32_t list);
void odebug_tracker_snapshot(struct odebug_snapshot *o, const struct odebug_tracker *t);
bool odebug_tracker_snapshot_active(struct odebug_snapshot *o, struct odebug_tracker *t,
				    bool claim);
void odebug_table_lock_all(void);
void odebug_table_unlock_all(void);

/* table.c */
bool odebug_table_init(void);
void odebug_table_fini(void);
void odebug_table_go_huge(void);
/* Many trackers: the table and the pool get huge pages (pool.c). */
#define ODEBUG_HUGE_AT		32768
#ifndef MADV_COLLAPSE
#define ODEBUG_MADV_COLLAPSE	25	/* Linux 6.1; EINVAL before */
#else
#define ODEBUG_MADV_COLLAPSE	MADV_COLLAPSE
#endif
void odebug_table_visit(uintptr_t start, uintptr_t end, odebug_visit_fn visit, void *ctx);
bool odebug_range_may_hold(uintptr_t start, uintptr_t end);

/*
 * table.c's chunk map: a byte per 4 KiB chunk below ODEBUG_MAP_LIMIT,
 * nonzero while a tracker of the chunk may exist (RELIABILITY.md); NULL
 * when unmapped and in table-kernel.c.
 */
extern uint8_t *odebug_chunk_map;
#define ODEBUG_MAP_LIMIT	((uintptr_t)1 << 47)
/*
 * Without any lock: the tracker whose word holds @addr, that word in *@w;
 * NULL when none is found within a few steps.  Only a compare-and-swap
 * with *@w may act on it (table.c's header).  The kernel-style table has
 * no lockless path: every call takes the bucket lock, as the kernel does.
 */
#ifdef ODEBUG_TABLE_KERNEL
static inline struct odebug_tracker *odebug_peek(uintptr_t addr, uint64_t *w)
{
	(void)addr;
	(void)w;
	return NULL;
}
#else
/* table.c's chain heads: 128 per bucket (pool indexes). */
extern uint32_t (*odebug_heads)[128];

/*
 * The chain head of @addr (table.c's header): its 32-byte cell in its
 * chunk, xored with the shuffle (table.c's shuffle_of_hash()) of the seven
 * hash bits just below the bucket index.
 */
static inline uint32_t *odebug_chain_head(uintptr_t addr)
{
	uint64_t hash = odebug_chunk_hash(addr);

	unsigned int key = (unsigned int)(hash >> (64 - ODEBUG_HASH_BITS - 7)) & 127;

	return &odebug_heads[hash >> (64 - ODEBUG_HASH_BITS)]
			    [((addr >> 5) ^ key ^ (key >> 2 & 126) ^ (key >> 4 & 126)) & 127];
}

/* Steps a lockless walk takes before it leaves the call to the locked path. */
#define ODEBUG_PEEK_STEPS	8

/*
 * A tracker on the chain may be unlinked, returned to the pool and reused
 * for another object while the walk reads it, so the walk may wander off
 * the chain: it stays inside the pool's mapping (indexes are checked
 * against the reservation, never unmapped while on) and stops after
 * ODEBUG_PEEK_STEPS.  What it returns is right by identity, not by
 * position: at most one tracker whose word holds @addr and is not RETIRED
 * exists at any time, and the caller's compare-and-swap fails if the word
 * changed since it was read (table.c's header).
 */
static inline struct odebug_tracker *odebug_peek(uintptr_t addr, uint64_t *w)
{
	unsigned long end = odebug_load(&odebug_pool_reserved);
	unsigned int steps = ODEBUG_PEEK_STEPS;
	uint32_t i = __atomic_load_n(odebug_chain_head(addr), __ATOMIC_ACQUIRE);

	for (; i && i < end && steps; steps--) {
		struct odebug_tracker *t = &odebug_pool_base[i];
		uint64_t word = odebug_tracker_word(t);

		if (odebug_word_addr(word) == addr) {
			if (odebug_word_state(word) == ODEBUG_WORD_RETIRED)
				return NULL;
			*w = word;
			return t;
		}
		i = odebug_tracker_next(t);
	}
	return NULL;
}
#endif
/*
 * Before taking @b's lock for @addr: start the misses of its lock line, its
 * chain head and the chain's first tracker together.  The lock is a locked
 * instruction, which waits for every earlier load: without this the three
 * misses of a cold object come one after another.  Prefetches are not
 * waited for; the head is a plain load, checked as odebug_peek() checks it.
 */
#define ODEBUG_PREFETCH_MIN	32768	/* trackers out: 512 KiB of them, beyond L2 */

static inline void odebug_prefetch(struct odebug_bucket *b, uintptr_t addr)
{
#ifdef ODEBUG_TABLE_KERNEL
	(void)b, (void)addr;	/* the kernel's table, as it is */
#else
	uint32_t i;

	/* A few thousand objects stay in cache: the prefetch would be pure cost. */
	if (odebug_load(&odebug_trackers_out) < ODEBUG_PREFETCH_MIN)
		return;
	__builtin_prefetch(b, 1);
	i = __atomic_load_n(odebug_chain_head(addr), __ATOMIC_RELAXED);
	if (i && i < odebug_load(&odebug_pool_reserved))
		__builtin_prefetch(&odebug_pool_base[i], 1);
#endif
}

/* With the bucket lock held: */
struct odebug_tracker *odebug_lookup(struct odebug_bucket *b, uintptr_t addr);
struct odebug_tracker *odebug_lookup_any(struct odebug_bucket *b, uintptr_t addr);
int odebug_release(struct odebug_bucket *b, struct odebug_tracker *t, uint64_t w);
void odebug_revive(struct odebug_tracker *t, uint64_t w);
void odebug_insert(struct odebug_bucket *b, struct odebug_tracker *t);
void odebug_remove(struct odebug_bucket *b, struct odebug_tracker *t);
struct odebug_tracker *odebug_bucket_take(struct odebug_bucket *b, uint64_t chains,
					  uintptr_t start, uintptr_t end,
					  uint32_t *taken, unsigned long *visited);
typedef bool (*odebug_tracker_fn)(const struct odebug_tracker *t, void *ctx);
bool odebug_bucket_each(struct odebug_bucket *b, uint64_t chains,
			odebug_tracker_fn fn, void *ctx);
void odebug_table_drain(void);

/* "debugobjects.c": the state machine */
void odebug_reclaim_last_freed(void);
extern unsigned long odebug_warnings, odebug_fixups, odebug_suppressed;
bool odebug_fixup(bool (*fn)(void *, enum debug_obj_state), void *addr,
		  enum debug_obj_state state);

/* "freecheck.c": the free check */
extern unsigned long odebug_max_checked;
void odebug_check_range_slow(uintptr_t start, uintptr_t end);

/* The free check of [start, end): a lockless look first (table.c). */
static inline void odebug_check_range(uintptr_t start, uintptr_t end)
{
	if (odebug_range_may_hold(start, end))
		odebug_check_range_slow(start, end);
}
bool odebug_range_tracked(uintptr_t start, uintptr_t end);
void odebug_check_range_dead(uintptr_t start, uintptr_t end);

/* "unload.c": memory gone without a fixup's chance (dlclose, returned frames) */
void odebug_drop_range(uintptr_t start, uintptr_t end,
		       bool (*describe)(struct odebug_snapshot *o, void *arg), void *arg);
#define ODEBUG_UNLOAD_RANGES	8
#define ODEBUG_UNLOAD_OBJS	32
struct odebug_unload {
	int nranges;
	uintptr_t lo[ODEBUG_UNLOAD_RANGES], hi[ODEBUG_UNLOAD_RANGES];
	char module[256];
	bool any;			/* anything tracked in the ranges */
	int nobjs;
	unsigned long more;		/* active trackers not copied */
	struct {
		uintptr_t addr;
		const struct debug_obj_descr *descr;	/* compared, never read after */
		char name[48];
	} objs[ODEBUG_UNLOAD_OBJS];
};
void odebug_unload_before(struct odebug_unload *u);
void odebug_unload_after(struct odebug_unload *u);

/* "report.c": what a misuse looks like, and what follows it */
extern const char *const odebug_state_names[ODEBUG_STATE_MAX];
void odebug_report(const struct odebug_snapshot *o, const char *op);
void odebug_report_on_stack(uintptr_t addr, uintptr_t stack, bool is_on_stack);
extern const struct debug_obj_descr *odebug_quiet_descr;
void odebug_report_init(void);
void odebug_report_lock(void);
void odebug_report_unlock(void);
bool odebug_report_trylock(void);
void odebug_report_child(void);
void odebug_report_at_exit(void);
void odebug_report_before_exec(void);

/* "descr.c": the descriptor registry; descriptors whose module may be gone */
int odebug_descr_note_slow(const struct debug_obj_descr *d);
extern __thread const struct debug_obj_descr *odebug_descr_last
	__attribute__((tls_model("initial-exec")));
extern __thread int odebug_descr_last_slot __attribute__((tls_model("initial-exec")));
extern __thread unsigned int odebug_descr_last_epoch __attribute__((tls_model("initial-exec")));
extern unsigned int odebug_descr_epoch;

/*
 * The slot of @d, registered when a tracker is made: two compares, unless
 * the descriptor changed or a module was unloaded since (another module's
 * descriptor may now have @d's address).  -1 when the registry is full:
 * not tracked.
 */
static inline int odebug_descr_note(const struct debug_obj_descr *d)
{
	if (unlikely(odebug_descr_last != d ||
		     odebug_descr_last_epoch != __atomic_load_n(&odebug_descr_epoch, __ATOMIC_RELAXED)))
		return odebug_descr_note_slow(d);
	return odebug_descr_last_slot;
}

/* A module was unloaded: every thread's cached descriptor is checked again. */
static inline void odebug_descr_forget(void)
{
	__atomic_add_fetch(&odebug_descr_epoch, 1, __ATOMIC_RELAXED);
}
void odebug_descr_resolve(struct odebug_snapshot *o);
/* "group.c": reports grouped by cause, the summary at exit */
#define ODEBUG_GROUPS		1024	/* distinct causes grouped; then ungrouped */
#define ODEBUG_GROUP_REPEAT	(-1)	/* a cause seen before: count, do not print */
#define ODEBUG_GROUP_NONE	(-2)	/* not grouped (dedup=0, table full) */
int odebug_group_add(const struct odebug_snapshot *o, const char *op, bool culprit);
void odebug_group_printed(int g);
void odebug_group_suppressed(int g);
void odebug_group_child(void);
void odebug_group_stats(struct debug_objects_stats *s);
void odebug_group_summary(void);

/* "sink.c": stderr, a log file, or syslog */
void odebug_sink_write(const char *text, size_t len);
size_t odebug_sink_limit(void);

/* "suppress.c" */
void odebug_suppress_init(void);
void odebug_suppress_parse(const char *file, char *text, size_t len);
bool odebug_suppress_any(void);
bool odebug_suppress_needs_frames(void);
bool odebug_suppress_match(const char *type, const char *op,
		       const struct odebug_frame *frames, int nframes);

/* "depot.c": stacks stored once, named by 32-bit ids */
bool odebug_depot_init(void);
uint32_t odebug_depot_save(void *const *pcs, int n);
int odebug_depot_get(uint32_t id, const uintptr_t **pcs);
void odebug_depot_lock(void);
void odebug_depot_unlock(void);
uint32_t odebug_origin_here(void);
void odebug_origin_init(void);	/* "origin.c" */
uintptr_t odebug_stack_top(void);	/* "stack.c" */

/* "symbolize.c": naming frames (an external symboliser; see there) */
void odebug_symbolize_begin(void);
int odebug_symbolize(const uintptr_t *pcs, int n, bool is_return,
		     struct odebug_frame *out, int max);
void odebug_symbolize_child(void);
bool odebug_symbolize_running(void);

/* "helper.c": a helper process on a socket, started without fork() */
struct odebug_helper {
	int pid, fd, owner;
	unsigned long dev, ino;
	bool timed_out;		/* the last odebug_helper_talk() ran out of time */
};
bool odebug_helper_sandboxed(void);
bool odebug_helper_start(struct odebug_helper *h, const char *path, char *const *argv);
bool odebug_helper_alive(struct odebug_helper *h);
void odebug_helper_stop(struct odebug_helper *h);
bool odebug_helper_talk(struct odebug_helper *h, const char *req, size_t req_len,
			char *out, size_t cap, size_t *len,
			bool (*done)(const char *text, size_t len, void *ctx), void *ctx,
			int timeout_ms, bool shut);

/* "backtrace.c": capturing and naming frames */
void odebug_backtrace_init(void);
int odebug_backtrace(void **pcs, int max);
void odebug_backtrace_thread_prepare(void);
int odebug_backtrace_skip(void *const *pcs, int n);
int odebug_backtrace_drop_own(const uintptr_t *pcs, int n, uintptr_t *out);
bool odebug_backtrace_skip_module(const void *addr);
void odebug_modules_scan(void);	/* lib/modules.c */
void odebug_backtrace_skip_through(const void *fn);

/* "stack.c": thread stacks */
void odebug_stack_init(void);
bool odebug_on_stack(uintptr_t addr, uintptr_t *stack_base);
void odebug_stack_prepare(void);
void odebug_stack_learn(bool main);
void odebug_stack_note_main(void);
void odebug_thread_begin(bool main);	/* "thread.c" */
extern bool odebug_thread_hook;
void odebug_stack_watch_exit(void);
extern __thread uintptr_t odebug_onstack_low __attribute__((tls_model("initial-exec")));
void odebug_stack_mark(uintptr_t addr);
void odebug_stack_check_returned(uintptr_t sp);

/*
 * At each entry point (after odebug_on()): did the caller's frames return
 * over an on-stack object?  One compare unless an on-stack object of this
 * thread may lie below the caller's frame.
 */
#define odebug_check_returned()	odebug_check_returned_above(0)

/*
 * @above: bytes known to lie between this frame and the caller's stack
 * pointer (other frames of ours); 0 in an entry point, where the frame
 * address plus the saved frame pointer and return address is the caller's
 * stack pointer (x86-64) or below it.
 */
#if defined(__GNUC__) && !defined(__clang__)
/* The call's CFA (the caller's stack pointer before the call) needs no frame
 * pointer: __builtin_frame_address(0) made every caller (free()'s check_block)
 * set one up, 3 instructions a call. */
#define odebug_caller_sp()	((uintptr_t)__builtin_dwarf_cfa())
#else
#define odebug_caller_sp()	((uintptr_t)__builtin_frame_address(0) + 16)
#endif
#define odebug_check_returned_above(above)					\
	do {									\
		uintptr_t sp_ = odebug_caller_sp() + (above);			\
		if (unlikely(sp_ > odebug_onstack_low))				\
			odebug_stack_check_returned(sp_);			\
	} while (0)

/* "selftest.c" */
bool odebug_selftest(void);

/* "stats.c" */
void odebug_stats_snapshot(struct debug_objects_stats *s);
void odebug_stats_restore(const struct debug_objects_stats *s);

#endif /* ODEBUG_INTERNAL_H */
