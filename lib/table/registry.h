/* SPDX-License-Identifier: MIT */
/*
 * registry.h - how a checker family reaches the core.
 *
 * A family (the pthread and semaphore checks, held memory, the annotation
 * modules, descriptors) knows its objects; the core knows the table, the
 * free check and the report.  The core never calls a family by name: it
 * asks every registered checker through the hooks below, each optional,
 * and a checker answers only for its own descriptors.  A family registers
 * with one line in its own folder, ODEBUG_CHECKER(); the entries are
 * gathered by the linker (a section, as the kernel's initcalls are), so
 * the core needs no list of families and a family added touches no core
 * file.
 *
 * Every hook may run on a free() or report path: from a signal handler
 * that interrupted malloc, on a small stack.  Hooks read and write their
 * own state; they take no lock the loader or malloc may hold.
 */
#ifndef ODEBUG_REGISTRY_H
#define ODEBUG_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "types.h"

struct odebug_bucket;
struct odebug_tracker;
struct report_state;

struct odebug_checker {
	const char *name;
	/* Decided on (the constructor, under the loader's lock): read options, set up. */
	void (*init)(void);
	/* The mode changed: on (started) or off. */
	void (*mode)(bool on);
	/*
	 * The holder's own word, before an ACTIVE object of one of the
	 * checker's descriptors is reported released (its memory freed, its
	 * frame returned, its module unloaded, at exit): true when the holder
	 * no longer holds it (the tracker then goes silently).  False when it
	 * still does, or the descriptor is not the checker's.
	 */
	bool (*released)(const struct odebug_snapshot *o);
	/* The report's "holder:" line into @buf: true when written. */
	bool (*describe)(const struct odebug_snapshot *o, char *buf, size_t cap);
	/* The report's state in words (who holds it, who waits): true when filled. */
	bool (*state)(const struct odebug_snapshot *o, struct report_state *s);
	/* What origins=1 would show of an object of @d ("where it was ..."), or NULL. */
	const char *(*origin_words)(const struct debug_obj_descr *d);
	/*
	 * Trackers whose state is their holder's word (a mutex's hold lives
	 * in glibc's), brought in step before a range is decided, under the
	 * bucket lock: one tracker of live memory, the trackers of @chains
	 * in [start, end), and every tracker of @chains at exit (memory maybe
	 * gone).  Asked only once the checker called odebug_sync_want().
	 */
	void (*sync_one)(struct odebug_tracker *t);
	void (*sync_range)(struct odebug_bucket *b, uint64_t chains, uintptr_t start,
			   uintptr_t end);
	void (*sync_exit)(struct odebug_bucket *b, uint64_t chains);
	/* A tracker whose word matched odebug_left_key left the table. */
	void (*left)(void);
	/* The calling thread's stack was checked at its exit. */
	void (*thread_exited)(void);
};

/* One line per family, at file scope: ODEBUG_CHECKER(name) = { ... }; */
#define ODEBUG_CHECKER(id)								\
	static const struct odebug_checker odebug_checker_##id;			\
	static const struct odebug_checker *const odebug_checker_entry_##id		\
		__attribute__((used, section("odebug_checkers"))) = &odebug_checker_##id; \
	static const struct odebug_checker odebug_checker_##id

/*
 * A checker whose trackers' state is a holder's word calls this when the
 * first such tracker is made.  Until then odebug_sync_one is NULL and the
 * free check pays one load for every family; after, it is the one sync
 * to call per tracker (the checker's own when it is the only one).
 */
void odebug_sync_want(void);
struct odebug_tracker;
extern ODEBUG_HIDDEN void (*odebug_sync_one)(struct odebug_tracker *t);
/*
 * A tracker word key (tracker.h's settled key) whose trackers' leaving
 * the table a checker must hear of (odebug_tracker_left()); 0: none.
 */
extern ODEBUG_HIDDEN uint64_t odebug_left_key;

void odebug_checkers_init(void);
void odebug_checkers_mode(bool on);
bool odebug_checkers_released(const struct odebug_snapshot *o);
bool odebug_checkers_describe(const struct odebug_snapshot *o, char *buf, size_t cap);
bool odebug_checkers_state(const struct odebug_snapshot *o, struct report_state *s);
const char *odebug_checkers_origin_words(const struct debug_obj_descr *d);
void odebug_checkers_sync_one(struct odebug_tracker *t);
void odebug_checkers_sync_range(struct odebug_bucket *b, uint64_t chains, uintptr_t start,
				uintptr_t end);
void odebug_checkers_sync_exit(struct odebug_bucket *b, uint64_t chains);
void odebug_checkers_left(void);
void odebug_checkers_thread_exited(void);

#endif /* ODEBUG_REGISTRY_H */
