/* SPDX-License-Identifier: MIT */
/*
 * held-ext.h - the held-memory families whose holder is a thread or a
 * stream of this process rather than a kernel object: a stream's
 * setvbuf buffer (held-stdio.c), a thread's sigaltstack
 * (held-sigstack.c), a thread's own stack given with
 * pthread_attr_setstack (held-tstack.c), and the code of a module that
 * a key destructor, a signal handler, a timer or a running thread still
 * needs at its dlclose (held-module.c).
 *
 * lib/checks/held/held-ext.c keeps their records, in the one store of
 * lib/checks/held/held-store.c, and the trackers (as lib/checks/held/held.c does for epoll and
 * timers: ACTIVE at the held address plus the family's number while a
 * record holds it); each family file says
 * whether a record still holds (asked at the free before a report), how
 * to name the holder, and what its fixup does.
 */
#ifndef ODEBUG_HELD_EXT_H
#define ODEBUG_HELD_EXT_H

#include <signal.h>

#include "held.h"

/*
 * The families' numbers: 5 to 7 are tracker offsets (held.h says why an
 * odd offset inside the held word), apart from those of held.c's
 * families; 8 and 9 are records only (nothing is freed while they hold:
 * they are checked at dlclose).
 */
enum {
	ODEBUG_HELD_STDIO = 5,
	ODEBUG_HELD_SIGSTACK = 6,
	ODEBUG_HELD_TSTACK = 7,
	ODEBUG_HELD_THREAD = 8,		/* a thread running its start routine */
	ODEBUG_HELD_KEY = 9,		/* a pthread key with a destructor */
	ODEBUG_HELD_ALL,
};

/* A thread stack record's flags: who made it (held-tstack.c), and whether it is detached. */
#define ODEBUG_TSTACK_CREATOR	1u	/* pthread_create returned in its creator */
#define ODEBUG_TSTACK_THREAD	2u	/* the thread began */
#define ODEBUG_TSTACK_DETACHED	4u

/* A record: who holds [addr, addr + len). */
struct odebug_xhold {
	uintptr_t addr;		/* 0: a free record */
	size_t len;
	uintptr_t key;		/* stdio: the FILE; stacks: 0; threads: pthread_self(); keys: the key */
	uintptr_t fn;		/* threads: the start routine; keys: the destructor */
	int tid;		/* the thread (stacks, threads) */
	uint8_t family;
	uint8_t flags;		/* the family's own (thread stacks: ODEBUG_TSTACK_*) */
	uint16_t gen;		/* fork generation: a child's inherited records are not its own */
};

/* What a family file gives lib/checks/held/held-ext.c. */
struct odebug_held_ext_ops {
	const struct debug_obj_descr *descr;
	/* Does @h still hold (libc or the kernel asked)?  No lock held. */
	bool (*live)(const struct odebug_xhold *h);
	/* The holder line's words. */
	void (*describe)(const struct odebug_xhold *h, struct odebug_buf *b);
	/* The fixup for one live record: true when it no longer holds. */
	bool (*fixup)(const struct odebug_xhold *h);
	/* Not live, yet the record stays (NULL: never); no lock held. */
	bool (*keep)(const struct odebug_xhold *h);
};

extern ODEBUG_HIDDEN const struct odebug_held_ext_ops odebug_held_stdio_ops, odebug_held_sigstack_ops,
	odebug_held_tstack_ops;
extern ODEBUG_HIDDEN const struct debug_obj_descr odebug_stdio_descr, odebug_sigstack_descr,
	odebug_tstack_descr, odebug_module_descr;

/* Records (held-ext.c).  set() replaces the record of (@family, @key, @tid). */
void odebug_xhold_set(int family, uintptr_t key, int tid, uintptr_t addr, size_t len,
		      uintptr_t fn);
void odebug_xhold_end(int family, uintptr_t key, int tid);
/*
 * Two parties make one record: the first of @r's (family, key) that
 * lacks @side in its flags gets @side, @r's other flags and (if nonzero)
 * @r's tid; with none, @r is added with @side.
 */
void odebug_xhold_meet(const struct odebug_xhold *r, uint8_t side);
/* Every record of (@family, @key) without @unless gets @set; how many did. */
unsigned int odebug_xhold_mark(int family, uintptr_t key, uint8_t unless, uint8_t set);
/* The tracker of (@family, @addr) made to agree with the records again. */
void odebug_xhold_settle(int family, uintptr_t addr);
/* Copies of the records of @family (all when @addr is 0, else holding @addr); at most @max. */
unsigned int odebug_xhold_list(int family, uintptr_t addr, struct odebug_xhold *out,
			       unsigned int max, unsigned int skip);
/* Records per family (held-store.c): the interposers' one load. */
extern ODEBUG_HIDDEN unsigned long odebug_hold_count[16];
bool odebug_xhold_current(const struct odebug_xhold *h);

/* lib/checks/held/held.c's free-check questions and the descriptors' callbacks, for these families. */
bool odebug_held_ext_released(const struct odebug_snapshot *o);
bool odebug_held_ext_describe(const struct odebug_snapshot *o, char *buf, size_t cap);
bool odebug_held_ext_fixup(void *t, enum debug_obj_state state);

/* stdio: the preload side's real calls (preload/stdio.c). */
struct odebug_held_stdio_calls {
	int (*unbuffer)(void *stream);		/* glibc's setvbuf(stream, NULL, _IONBF, 0) */
};
extern ODEBUG_HIDDEN const struct odebug_held_stdio_calls *odebug_held_stdio_calls;
void odebug_held_stdio_after(void *stream, void *buf, size_t size, int how);
void odebug_held_stdio_closed(void *stream);
void odebug_held_stdio_closed_all(void);

/* sigaltstack: the real call (preload/sigaltstack.c), and the events. */
extern ODEBUG_HIDDEN int (*odebug_held_sigaltstack_call)(const stack_t *ss, stack_t *old);
void odebug_held_sigstack_set(const stack_t *ss);
void odebug_held_sigstack_thread_end(void);

/* Threads (preload/pthread-create.c): begun in the new thread, ended when its routine returns. */
void odebug_held_thread_begin(uintptr_t routine, void *stack, size_t size, bool detached);
void odebug_held_thread_end(void);
/* Thread stacks: the thread @t made (its creator), joined or detached (preload/pthread-join.c). */
void odebug_held_tstack_created(uintptr_t t, void *stack, size_t size, bool detached);
void odebug_held_tstack_joined(uintptr_t t);
void odebug_held_tstack_detached(uintptr_t t);
/* lib/table/stack.c: this thread's exit check of its own stack is done. */
void odebug_held_tstack_exit_checked(void);

/* Keys (preload/pthread-key.c) and the check at dlclose (preload/dlclose.c). */
void odebug_held_key_create(unsigned int key, void (*destructor)(void *));
void odebug_held_key_delete(unsigned int key);
/* A module at its dlclose: what the check after the real call needs, noted before it. */
#define ODEBUG_MODULE_RANGES	8
struct odebug_held_module {
	uintptr_t base, lo[ODEBUG_MODULE_RANGES], hi[ODEBUG_MODULE_RANGES];
	int nranges;
	bool found;
	char name[512];
};
bool odebug_held_dlclose_before(void *handle, struct odebug_held_module *m);
void odebug_held_dlclose_after(struct odebug_held_module *m);
/* The program's references per handle (held-opens.c): dlopen.c adds, dlclose.c takes. */
void odebug_opens_add(void *handle, bool nodelete);
bool odebug_opens_last(void *handle);
void odebug_opens_closed(void *handle);
/* lib/checks/held/held.c: a SIGEV_THREAD timer armed with its function in [lo, hi)?  And its fixup. */
uintptr_t odebug_held_timer_fn_in(uintptr_t lo, uintptr_t hi, uint64_t *id, int *ver);
bool odebug_held_timer_disarm(uint64_t id, int ver);

#endif /* ODEBUG_HELD_EXT_H */
