/* SPDX-License-Identifier: MIT */
/*
 * core.h - the core layer: the state machine (debugobjects.c,
 * object-free.c), the free check, unloads, returned frames, thread setup
 * and the statistics.  Checker families and the interposers call it.
 */
#ifndef ODEBUG_CORE_H
#define ODEBUG_CORE_H

#include "report.h"

/* "freecheck.c": the free check */
extern ODEBUG_HIDDEN unsigned long odebug_max_checked;
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
		bool released;		/* its module's word, read while mapped */
	} objs[ODEBUG_UNLOAD_OBJS];
};
void odebug_unload_before(struct odebug_unload *u);
void odebug_unload_after(struct odebug_unload *u);


/* "thread.c" */
void odebug_thread_begin(void);
/* "returned.c": objects of frames that returned, a thread's stack at its exit */
void odebug_returned_init(void);
void odebug_stack_watch_exit(void);
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
		if (unlikely(sp_ > odebug_tls.onstack_low))				\
			odebug_stack_check_returned(sp_);			\
	} while (0)


/* "stats.c" */
void odebug_stats_snapshot(struct debug_objects_stats *s);
void odebug_stats_restore(const struct debug_objects_stats *s);

#endif /* ODEBUG_CORE_H */
