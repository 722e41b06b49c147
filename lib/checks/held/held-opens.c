/* SPDX-License-Identifier: MIT */
/*
 * held-opens.c - how many references the program holds on each module
 * handle, so that lib/checks/held/held-module.c checks a module only at the dlclose()
 * that unloads it.  glibc counts a handle's dlopen() calls in a private
 * field of its link_map (nothing public reads it), so the interposers
 * count them again: preload/dlopen.c adds one per successful dlopen(),
 * preload/dlclose.c takes one per successful dlclose().  A dlclose() of
 * a handle counted more than once only drops a reference: nothing is
 * checked.  An RTLD_NODELETE open makes the handle one that never
 * unloads.
 *
 * Not seen, and so a count below glibc's (a report the loader would not
 * confirm is possible): opens made by glibc itself (NSS, iconv: they do
 * not call dlopen()), dlmopen() (another handle anyway), and opens made
 * by another library's constructor before ours decided on.  A handle
 * counted zero times is never checked (prefer a missed report to a
 * false one).
 *
 * A fixed table (1024 handles, open addressing by handle; the first
 * probes in its first page), one spinlock
 * with the re-entry guard set; no loader call under it.  Beyond the
 * table, a handle is not counted and so not checked.
 */
#define _GNU_SOURCE
#include "builtin.h"
#include "held-ext.h"
#include "lock.h"

#define OPENS		1024u	/* a power of two */
#define NODELETE	(1ul << 63)	/* in count: never unloads */
#define FIRST		(4096 / sizeof(struct opens))	/* probed first: one page */

struct opens {
	uintptr_t handle;	/* 0: free; 1: a deleted entry (probes go on) */
	unsigned long count;
};

static ODEBUG_LARGE struct opens opens[OPENS] __attribute__((aligned(4096)));
static odebug_spinlock_t lock;

static void olock(void)
{
	odebug_guard_enter();
	odebug_spin_lock(&lock);
}

static void ounlock(void)
{
	odebug_spin_unlock(&lock);
	odebug_guard_exit();
}

/* The entry of @handle, or with @add the free slot it goes in; NULL.  Locked. */
static struct opens *slot(uintptr_t handle, bool add)
{
	size_t h = (size_t)((handle * 0x9e3779b97f4a7c15ull) >> 54) & (OPENS - 1), i, n;
	struct opens *spare = NULL;

	for (n = 0; n < OPENS + FIRST; n++) {
		i = odebug_probe(h, n, FIRST, OPENS);
		if (opens[i].handle == handle)
			return &opens[i];
		if (opens[i].handle <= 1 && !spare)
			spare = &opens[i];
		if (!opens[i].handle)
			break;
	}
	if (!add || !spare)
		return NULL;
	spare->handle = handle;
	spare->count = 0;
	return spare;
}

/* A dlopen() returned @handle (with @nodelete: RTLD_NODELETE). */
void odebug_opens_add(void *handle, bool nodelete)
{
	struct opens *o;

	olock();
	o = slot((uintptr_t)handle, true);
	if (o)
		o->count = (o->count + 1) | (nodelete ? NODELETE : 0);
	ounlock();
}

/*
 * Would a dlclose(@handle) now drop the last reference the program
 * holds?  False when it holds more, when it was opened RTLD_NODELETE, or
 * when no open of it was seen.
 */
bool odebug_opens_last(void *handle)
{
	struct opens *o;
	bool last;

	olock();
	o = slot((uintptr_t)handle, false);
	last = o && o->count == 1;
	ounlock();
	return last;
}

/* A dlclose(@handle) succeeded: one reference fewer. */
void odebug_opens_closed(void *handle)
{
	struct opens *o;

	olock();
	o = slot((uintptr_t)handle, false);
	if (o && (o->count & ~NODELETE) > 1)
		o->count--;
	else if (o)
		o->handle = 1;	/* gone: a later module may get the same address */
	ounlock();
}
