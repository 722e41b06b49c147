/* SPDX-License-Identifier: MIT */
/*
 * registry.c - the checkers, as the linker gathered them (registry.h), and
 * the core's questions to them.  An answer is the first checker's that
 * gives one: a checker answers for its own descriptors only.
 */
#include "registry.h"

void (*odebug_sync_one)(struct odebug_tracker *t);
ODEBUG_HOT uint64_t odebug_left_key;

/* The section's bounds, defined by the linker; weak: a build with no checker. */
extern const struct odebug_checker *const __start_odebug_checkers[]
	__attribute__((weak, visibility("hidden")));
extern const struct odebug_checker *const __stop_odebug_checkers[]
	__attribute__((weak, visibility("hidden")));

#define each_checker(c)								\
	for (const struct odebug_checker *const *p_ = __start_odebug_checkers;	\
	     p_ < __stop_odebug_checkers && ((c) = *p_); p_++)

void odebug_checkers_init(void)
{
	const struct odebug_checker *c;

	each_checker(c)
		if (c->init)
			c->init();
}

void odebug_checkers_mode(bool on)
{
	const struct odebug_checker *c;

	each_checker(c)
		if (c->mode)
			c->mode(on);
}

bool odebug_checkers_released(const struct odebug_snapshot *o)
{
	const struct odebug_checker *c;

	each_checker(c)
		if (c->released && c->released(o))
			return true;
	return false;
}

bool odebug_checkers_describe(const struct odebug_snapshot *o, char *buf, size_t cap)
{
	const struct odebug_checker *c;

	each_checker(c)
		if (c->describe && c->describe(o, buf, cap))
			return true;
	return false;
}

bool odebug_checkers_state(const struct odebug_snapshot *o, struct report_state *s)
{
	const struct odebug_checker *c;

	each_checker(c)
		if (c->state && c->state(o, s))
			return true;
	return false;
}

const char *odebug_checkers_origin_words(const struct debug_obj_descr *d)
{
	const struct odebug_checker *c;
	const char *words;

	each_checker(c)
		if (c->origin_words && (words = c->origin_words(d)))
			return words;
	return NULL;
}

void odebug_checkers_sync_one(struct odebug_tracker *t)
{
	const struct odebug_checker *c;

	each_checker(c)
		if (c->sync_one)
			c->sync_one(t);
}

/* Idempotent: every caller computes the same answer. */
void odebug_sync_want(void)
{
	void (*one)(struct odebug_tracker *t) = NULL;
	const struct odebug_checker *c;
	int n = 0;

	if (odebug_load(&odebug_sync_one))
		return;
	each_checker(c)
		if (c->sync_one && n++ == 0)
			one = c->sync_one;
	if (n)
		__atomic_store_n(&odebug_sync_one, n == 1 ? one : odebug_checkers_sync_one,
				 __ATOMIC_RELEASE);
}

void odebug_checkers_sync_range(struct odebug_bucket *b, uint64_t chains, uintptr_t start,
				uintptr_t end)
{
	const struct odebug_checker *c;

	each_checker(c)
		if (c->sync_range)
			c->sync_range(b, chains, start, end);
}

void odebug_checkers_sync_exit(struct odebug_bucket *b, uint64_t chains)
{
	const struct odebug_checker *c;

	each_checker(c)
		if (c->sync_exit)
			c->sync_exit(b, chains);
}

void odebug_checkers_left(void)
{
	const struct odebug_checker *c;

	each_checker(c)
		if (c->left)
			c->left();
}

void odebug_checkers_thread_exited(void)
{
	const struct odebug_checker *c;

	each_checker(c)
		if (c->thread_exited)
			c->thread_exited();
}
