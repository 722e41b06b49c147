/* SPDX-License-Identifier: MIT */
/*
 * nonowner.c - what an unlock by a thread that does not hold the lock
 * leaves behind, and the owner's name in reports.
 *
 * glibc releases a normal or adaptive mutex for any thread that unlocks
 * it.  lib/checks/builtin/builtin.c reports such an unlock at its call, naming the
 * owner; the owner's own unlock comes later, finds the mutex unlocked,
 * and is the victim's, not a second bug.  So the report leaves a note
 * here, (mutex, owner), and that owner's next unlock of that mutex while
 * nobody holds it takes the note and stays silent.  The notes live in a
 * small ring: a program that loses more than ORPHANS holds at once gets
 * the oldest owners' unlocks reported as "unlock" again.  A mutex's init
 * and destroy drop its notes (a new mutex owes nothing to the old one).
 *
 * Reached from interposers, maybe in a signal handler: a spinlock from
 * lib/base/lock.h held with the guard set, no allocation.
 */
#define _GNU_SOURCE
#include <string.h>

#include "builtin.h"
#include "lock.h"

#define ORPHANS	64

static struct orphan {
	uintptr_t addr;
	int owner;
} orphans[ORPHANS];
static odebug_spinlock_t orphans_lock;
static unsigned int orphans_next;
static int orphans_out;		/* notes in the ring: 0 keeps the callers at one load */

/* The non-owner's unlock of @addr, held by @owner: its next unlock is expected. */
void odebug_orphan_add(uintptr_t addr, int owner)
{
	odebug_guard_enter();
	odebug_spin_lock(&orphans_lock);
	if (!orphans[orphans_next].addr)
		odebug_store(&orphans_out, odebug_load(&orphans_out) + 1);
	orphans[orphans_next] = (struct orphan){ addr, owner };
	orphans_next = (orphans_next + 1) % ORPHANS;
	odebug_spin_unlock(&orphans_lock);
	odebug_guard_exit();
}

/*
 * Drop the notes of @addr (@owner 0: every owner's, else @owner's only);
 * true when there was one.
 */
static bool orphan_drop(uintptr_t addr, int owner)
{
	bool found = false;
	int i;

	if (likely(!odebug_load(&orphans_out)))
		return false;
	odebug_guard_enter();
	odebug_spin_lock(&orphans_lock);
	for (i = 0; i < ORPHANS; i++) {
		if (orphans[i].addr != addr || (owner && orphans[i].owner != owner))
			continue;
		orphans[i].addr = 0;
		odebug_store(&orphans_out, odebug_load(&orphans_out) - 1);
		found = true;
	}
	odebug_spin_unlock(&orphans_lock);
	odebug_guard_exit();
	return found;
}

/* @tid unlocks @addr, which nobody holds: did a non-owner release its hold? */
bool odebug_orphan_take(uintptr_t addr, int tid)
{
	return orphan_drop(addr, tid);
}

/* A mutex initialised or destroyed at @addr: nobody's hold there is owed. */
void odebug_orphan_forget(uintptr_t addr)
{
	orphan_drop(addr, 0);
}

/* In a fork() child: other threads' notes name threads that are gone. */
void odebug_orphan_fork_child(void)
{
	/* Written only if used: a write would copy the page in each child. */
	if (atomic_load_explicit(&orphans_lock.v, memory_order_relaxed))
		odebug_spin_init(&orphans_lock);
	if (!odebug_load(&orphans_out))
		return;
	memset(orphans, 0, sizeof(orphans));
	orphans_out = 0;
}

/*
 * The name of thread @tid of this process, as the "in thread" line prints
 * a thread's own (empty when unknown: the thread may be gone).  Raw
 * system calls (odebug_read_file()): no allocation, no stdio, no
 * interposed close(), usable on the report path.
 */
void odebug_thread_name_of(int tid, char name[17])
{
	char path[40] = "/proc/self/task/";
	struct odebug_buf b;
	long n;

	memset(name, 0, 17);
	odebug_buf_init_mem(&b, path + 16, sizeof(path) - 16 - 6);
	odebug_put_dec(&b, (unsigned long)tid);
	memcpy(path + 16 + b.len, "/comm", 6);
	n = odebug_read_file(path, name, 16);
	if (n > 0 && name[n - 1] == '\n')
		name[n - 1] = '\0';
}
