/* SPDX-License-Identifier: MIT */
/*
 * odebug.h - lifetime debugging of C objects (a userspace port of the
 * Linux kernel's debugobjects facility).
 *
 * A subsystem describes each object type with a struct debug_obj_descr and
 * calls debug_object_init/activate/deactivate/destroy/free at the matching
 * points of an object's life.  libodebug tracks the state of every annotated
 * object and reports misuse at the moment it happens, with a backtrace of
 * the culprit; the descriptor's fixup callbacks then repair the damage so the
 * program keeps running.
 *
 * libodebug is off unless the environment has ODEBUG=1.  Defining
 * ODEBUG_DISABLE before including this header turns every call into an
 * empty inline function.
 */
#ifndef ODEBUG_H
#define ODEBUG_H

#include <stddef.h>

#ifndef __cplusplus
#include <stdbool.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/**
 * enum debug_obj_state - the states of a tracked object.
 * @ODEBUG_STATE_NONE:         tracker allocated, not yet initialised
 * @ODEBUG_STATE_INIT:         initialised (debug_object_init)
 * @ODEBUG_STATE_INACTIVE:     deactivated (debug_object_deactivate)
 * @ODEBUG_STATE_ACTIVE:       in use by its subsystem (debug_object_activate)
 * @ODEBUG_STATE_DESTROYED:    destroyed (debug_object_destroy); any further
 *                             use is reported until debug_object_free
 * @ODEBUG_STATE_NOTAVAILABLE: not tracked; never stored, only passed to
 *                             fixups and returned by debug_object_get_state
 */
enum debug_obj_state {
	ODEBUG_STATE_NONE,
	ODEBUG_STATE_INIT,
	ODEBUG_STATE_INACTIVE,
	ODEBUG_STATE_ACTIVE,
	ODEBUG_STATE_DESTROYED,
	ODEBUG_STATE_NOTAVAILABLE,
	ODEBUG_STATE_MAX
};

/**
 * struct debug_obj_descr - describes one object type.
 * @name:              type name printed in reports (required)
 * @debug_hint:        returns a code address that identifies the object
 *                     (a timer's callback, say), printed as "hint:"
 * @is_static_object:  returns true when the untracked object at @addr was
 *                     initialised statically; such an object is tracked
 *                     silently on its first activate or assert_init
 * @fixup_init:        called when an ACTIVE object is initialised
 * @fixup_activate:    called when an ACTIVE or untracked (NOTAVAILABLE)
 *                     object is activated
 * @fixup_destroy:     called when an ACTIVE object is destroyed
 * @fixup_free:        called when an ACTIVE object is freed, by
 *                     debug_object_free or because its memory is released
 * @fixup_assert_init: called when debug_object_assert_init finds the
 *                     object untracked (NOTAVAILABLE)
 *
 * Every member but @name is optional.  A fixup receives the object's
 * address and the state the tracker had when the misuse was found; it
 * returns true when it repaired the damage (counted in "fixups").  Fixups run
 * with no libodebug lock held and may call the debug_object_* functions
 * again, as the repair usually needs to.  @is_static_object runs under a
 * bucket lock: it must only read the object (calls it makes into
 * libodebug do nothing).  @debug_hint runs under the report lock: it
 * should only read the object too; calls it makes into libodebug do their
 * work, but a misuse they find is counted and not printed.  A fixup_free must leave the object
 * untracked (deactivate, then debug_object_free); libodebug drops the
 * tracker itself when the memory is gone and the fixup did not.
 *
 * Without @is_static_object, an untracked activate first calls
 * fixup_activate(NOTAVAILABLE), which may track a statically initialised
 * object itself (debug_object_init, then debug_object_activate); the report
 * is made only if the object is still untracked afterwards.
 */
struct debug_obj_descr {
	const char *name;
	void *(*debug_hint)(void *addr);
	bool (*is_static_object)(void *addr);
	bool (*fixup_init)(void *addr, enum debug_obj_state state);
	bool (*fixup_activate)(void *addr, enum debug_obj_state state);
	bool (*fixup_destroy)(void *addr, enum debug_obj_state state);
	bool (*fixup_free)(void *addr, enum debug_obj_state state);
	bool (*fixup_assert_init)(void *addr, enum debug_obj_state state);
};

/**
 * struct debug_objects_stats - counters, as the kernel's debugfs file.
 * @warnings:       reports made (printed or not)
 * @suppressed:     reports a suppression matched
 * @fixups:         fixups that returned true
 * @max_chain:      longest bucket chain walked by a lookup
 * @max_checked:    most trackers visited by one free-range check
 * @pool_free:      trackers ready in the pool
 * @pool_min_free:  lowest pool_free seen
 * @pool_used:      trackers in use (tracked objects)
 * @pool_max_used:  highest pool_used seen
 * @objs_allocated: trackers handed out since start
 * @objs_freed:     trackers given back since start
 * @distinct:       distinct reports (causes) among the warnings
 * @printed:        reports printed in full
 *
 * New members are only ever added at the end; see debug_objects_get_stats.
 */
struct debug_objects_stats {
	unsigned long warnings;
	unsigned long suppressed;
	unsigned long fixups;
	unsigned long max_chain;
	unsigned long max_checked;
	unsigned long pool_free;
	unsigned long pool_min_free;
	unsigned long pool_used;
	unsigned long pool_max_used;
	unsigned long objs_allocated;
	unsigned long objs_freed;
	unsigned long distinct;
	unsigned long printed;
};

#ifndef ODEBUG_DISABLE

void debug_object_init(void *addr, const struct debug_obj_descr *descr);
void debug_object_init_on_stack(void *addr, const struct debug_obj_descr *descr);
int debug_object_activate(void *addr, const struct debug_obj_descr *descr);
void debug_object_deactivate(void *addr, const struct debug_obj_descr *descr);
void debug_object_destroy(void *addr, const struct debug_obj_descr *descr);
void debug_object_free(void *addr, const struct debug_obj_descr *descr);
void debug_object_assert_init(void *addr, const struct debug_obj_descr *descr);
void debug_object_active_state(void *addr, const struct debug_obj_descr *descr,
			       unsigned int expect, unsigned int next);
void debug_check_no_obj_freed(const void *addr, size_t size);

bool debug_objects_enabled(void);
enum debug_obj_state debug_object_get_state(const void *addr);
size_t debug_objects_get_stats(struct debug_objects_stats *stats, size_t size);
void debug_objects_print_stats(int fd);

/* Since 1.1: for debuggers (debug_object_print(3)). */
void debug_object_print(const void *addr, int fd);
void debug_objects_report_hook(const char *op, const void *addr, const char *type);
/* Since 1.1: for shims that annotate a library from outside (odebug-shim(7)). */
int debug_object_rearm(void *addr, const struct debug_obj_descr *descr);
void debug_object_init_auto(void *addr, const struct debug_obj_descr *descr);
bool debug_object_on_stack(const void *addr);
bool debug_objects_skip_module(const void *addr);
/*
 * __debug_objects_on - nonzero while an annotation call may have work to do:
 * libodebug is on, or has not decided yet (before its constructor ran).
 * Zero once ODEBUG is found unset (and after an out-of-memory switch-off),
 * for the rest of the process.  The calls below test it inline, so with
 * ODEBUG unset a call costs the caller a load and a branch, as glibc's
 * __libc_single_threaded does.  Read it only as they do; never write it.
 * (LIBODEBUG_1.1.  Define ODEBUG_OUT_OF_LINE before including this header
 * to call into the library every time, and need only LIBODEBUG_1.0.)
 */
#if !defined(ODEBUG_OUT_OF_LINE) && defined(__GNUC__)
extern int __debug_objects_on;

#define __ODEBUG_STR1(x) #x
#define __ODEBUG_STR(x) __ODEBUG_STR1(x)
/* The exported function itself, under a second name the inline one calls. */
#define __ODEBUG_ALIAS(name) __asm__(__ODEBUG_STR(__USER_LABEL_PREFIX__) #name)
#define __ODEBUG_INLINE extern __inline __attribute__((__gnu_inline__, __always_inline__))
#define __ODEBUG_ON() __atomic_load_n(&__debug_objects_on, __ATOMIC_RELAXED)

#define __ODEBUG_WRAP(name, params, args)					\
	void __odebug_call_##name params __ODEBUG_ALIAS(debug_##name);		\
	__ODEBUG_INLINE void debug_##name params				\
	{									\
		if (__builtin_expect(__ODEBUG_ON(), 0))				\
			__odebug_call_##name args;				\
	}

__ODEBUG_WRAP(object_init, (void *addr, const struct debug_obj_descr *descr), (addr, descr))
__ODEBUG_WRAP(object_init_on_stack, (void *addr, const struct debug_obj_descr *descr), (addr, descr))
__ODEBUG_WRAP(object_deactivate, (void *addr, const struct debug_obj_descr *descr), (addr, descr))
__ODEBUG_WRAP(object_destroy, (void *addr, const struct debug_obj_descr *descr), (addr, descr))
__ODEBUG_WRAP(object_free, (void *addr, const struct debug_obj_descr *descr), (addr, descr))
__ODEBUG_WRAP(object_assert_init, (void *addr, const struct debug_obj_descr *descr), (addr, descr))
__ODEBUG_WRAP(object_active_state,
	      (void *addr, const struct debug_obj_descr *descr, unsigned int expect, unsigned int next),
	      (addr, descr, expect, next))
__ODEBUG_WRAP(check_no_obj_freed, (const void *addr, size_t size), (addr, size))

int __odebug_call_object_activate(void *addr, const struct debug_obj_descr *descr)
	__ODEBUG_ALIAS(debug_object_activate);
__ODEBUG_INLINE int debug_object_activate(void *addr, const struct debug_obj_descr *descr)
{
	if (__builtin_expect(__ODEBUG_ON(), 0))
		return __odebug_call_object_activate(addr, descr);
	return 0;
}

bool __odebug_call_objects_enabled(void) __ODEBUG_ALIAS(debug_objects_enabled);
__ODEBUG_INLINE bool debug_objects_enabled(void)
{
	return __ODEBUG_ON() && __odebug_call_objects_enabled();
}
#undef __ODEBUG_WRAP
#endif /* !ODEBUG_OUT_OF_LINE */

#else /* ODEBUG_DISABLE: everything compiles out, as in the kernel */

static inline void debug_object_init(void *addr, const struct debug_obj_descr *descr) { (void)addr; (void)descr; }
static inline void debug_object_init_on_stack(void *addr, const struct debug_obj_descr *descr) { (void)addr; (void)descr; }
static inline int debug_object_activate(void *addr, const struct debug_obj_descr *descr) { (void)addr; (void)descr; return 0; }
static inline void debug_object_deactivate(void *addr, const struct debug_obj_descr *descr) { (void)addr; (void)descr; }
static inline void debug_object_destroy(void *addr, const struct debug_obj_descr *descr) { (void)addr; (void)descr; }
static inline void debug_object_free(void *addr, const struct debug_obj_descr *descr) { (void)addr; (void)descr; }
static inline void debug_object_assert_init(void *addr, const struct debug_obj_descr *descr) { (void)addr; (void)descr; }
static inline void debug_object_active_state(void *addr, const struct debug_obj_descr *descr,
					     unsigned int expect, unsigned int next)
{ (void)addr; (void)descr; (void)expect; (void)next; }
static inline void debug_check_no_obj_freed(const void *addr, size_t size) { (void)addr; (void)size; }
static inline bool debug_objects_enabled(void) { return false; }
static inline enum debug_obj_state debug_object_get_state(const void *addr) { (void)addr; return ODEBUG_STATE_NOTAVAILABLE; }
static inline size_t debug_objects_get_stats(struct debug_objects_stats *stats, size_t size) { (void)stats; (void)size; return 0; }
static inline void debug_objects_print_stats(int fd) { (void)fd; }
static inline void debug_object_print(const void *addr, int fd) { (void)addr; (void)fd; }
static inline int debug_object_rearm(void *addr, const struct debug_obj_descr *descr) { (void)addr; (void)descr; return 0; }
static inline void debug_object_init_auto(void *addr, const struct debug_obj_descr *descr) { (void)addr; (void)descr; }
static inline bool debug_object_on_stack(const void *addr) { (void)addr; return false; }
static inline bool debug_objects_skip_module(const void *addr) { (void)addr; return false; }

#endif /* ODEBUG_DISABLE */

#ifdef __cplusplus
}
#endif

#endif /* ODEBUG_H */
