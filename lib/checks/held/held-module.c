/* SPDX-License-Identifier: MIT */
/*
 * held-module.c - code a module must keep while something will still
 * call it: when a dlclose() unloads a module, a destructor of a live
 * pthread key, an installed signal handler, the function of an armed
 * SIGEV_THREAD timer, or the start routine of a thread still running,
 * left in the module, is reported ("dlclose held", object type
 * module_code, the function as the object and the hint).
 *
 * When: after the module's destructors, which are where a module
 * releases exactly these (restores its handler, deletes its key and its
 * timer, joins its thread), so asking before them would report a module
 * that cleans up after itself.  glibc runs the destructors inside
 * dlclose() after deciding to unmap, and unmaps right after them: no
 * point exists where the destructors have run and the unmap can still be
 * prevented (an rtld-audit la_objclose() comes between the two, but
 * cannot keep the module either).  So the check is made once the real
 * dlclose() returned and the module is gone from the loader's list,
 * from what was noted before the call (its ranges and name); a module
 * the loader kept (another object needs it, RTLD_NODELETE,
 * DF_1_NODELETE, a symbol bound to it) is not checked.  The fixup can
 * no longer keep the code: it makes each holder stop calling it where
 * that is possible: the key is deleted (no thread's exit calls its
 * destructor), the signal's disposition becomes SIG_DFL, the timer is
 * disarmed.  A running thread cannot be helped: it faults once it runs
 * there again.  A holder that calls into the module between the unmap
 * and the fixup (a signal, a timer's expiry) faults as it would without
 * libodebug.
 *
 * What is asked: key destructors are recorded by the pthread_key_create
 * interposer (glibc's key table is not public); a key counts only if not
 * deleted and either this thread has a value or other threads exist
 * (their values cannot be read: a key no thread ever set is then
 * reported too, which a correct program avoids by deleting its keys).
 * Signal dispositions are read with sigaction(sig, NULL, &old) for every
 * signal; timers come from lib/checks/held/held.c's records, each confirmed armed by
 * timer_gettime; running threads from held-tstack.c's, each confirmed
 * alive by the kernel.
 *
 * Only at the dlclose() of the program's last reference to the handle
 * (counted by the dlopen() and dlclose() interposers,
 * lib/checks/held/held-opens.c): an earlier one only drops a reference.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "builtin.h"
#include "held-ext.h"

/* The holder line of the report being made (reports of one thread are serial). */
static ODEBUG_TLS char module_holder[160];

static bool in_module(const struct odebug_held_module *m, uintptr_t pc)
{
	int i;

	for (i = 0; i < m->nranges; i++)
		if (pc >= m->lo[i] && pc < m->hi[i])
			return true;
	return false;
}

/* Is @info the module?  Its PT_LOAD ranges, the first time. */
static int find_module(struct dl_phdr_info *info, size_t size, void *data)
{
	struct odebug_held_module *m = data;
	int i;

	(void)size;
	if (info->dlpi_addr != m->base || !info->dlpi_name || strcmp(info->dlpi_name, m->name))
		return 0;
	m->found = true;
	for (i = 0; i < info->dlpi_phnum && m->nranges < ODEBUG_MODULE_RANGES; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD)
			continue;
		m->lo[m->nranges] = info->dlpi_addr + ph->p_vaddr;
		m->hi[m->nranges++] = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
	}
	return 1;
}

/* Is the module still in the loader's list (the dlclose() kept it)? */
static bool still_loaded(struct odebug_held_module *m)
{
	int n = m->nranges;

	m->found = false;
	m->nranges = ODEBUG_MODULE_RANGES;	/* ranges kept as noted */
	dl_iterate_phdr(find_module, m);
	m->nranges = n;
	return m->found;
}

/* Threads of this process, as /proc/self/stat's 20th field says (1 when unreadable). */
static long threads(void)
{
	char buf[512], *p;
	long n, r;
	int fd, field;

	fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/stat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 1;
	r = syscall(SYS_read, fd, buf, sizeof(buf) - 1);
	syscall(SYS_close, fd);
	if (r <= 0)
		return 1;
	buf[r] = '\0';
	p = strrchr(buf, ')');
	for (field = 2; p && field < 20; field++)
		p = strchr(p + 1, ' ');
	if (!p)
		return 1;
	n = strtol(p + 1, NULL, 10);
	return n > 0 ? n : 1;
}

static void *function_hint(void *addr)
{
	return addr;
}

const struct debug_obj_descr odebug_module_descr = {
	.name = "module_code",
	.debug_hint = function_hint,
};

/* The holder line: which module's code is still needed, and by whom. */
static bool module_describe(char *buf, size_t cap)
{
	size_t n = strnlen(module_holder, sizeof(module_holder) - 1);

	if (!n || n >= cap)
		return false;
	memcpy(buf, module_holder, n + 1);
	return true;
}

/* The fixups: each holder made to stop calling into the unmapped code. */
enum fix { FIX_KEY, FIX_SIGNAL, FIX_TIMER, FIX_NONE };

static const char *const fix_words[] = {
	[FIX_KEY] = "key deleted",
	[FIX_SIGNAL] = "reset to SIG_DFL",
	[FIX_TIMER] = "disarmed",
	[FIX_NONE] = "no fixup, it faults when it runs there",
};

/*
 * One report: @fn in the unloaded module, held by what @b says.  The
 * module is gone from /proc/self/maps: the symboliser is told where it
 * was, so that the hint still names the function.
 */
static void held(uintptr_t fn, struct odebug_buf *b, const struct odebug_held_module *m,
		 enum fix fix)
{
	struct odebug_snapshot o = { .addr = fn, .descr = &odebug_module_descr,
				     .state = ODEBUG_STATE_ACTIVE };
	struct odebug_unmapped u = { m->name, m->base, m->lo[0], m->hi[0] };
	const char *slash = strrchr(m->name, '/');
	int i;

	for (i = 1; i < m->nranges; i++) {
		u.lo = m->lo[i] < u.lo ? m->lo[i] : u.lo;
		u.hi = m->hi[i] > u.hi ? m->hi[i] : u.hi;
	}
	odebug_puts(b, " in ");
	odebug_puts(b, slash ? slash + 1 : m->name);
	odebug_puts(b, ", unloaded after its destructors: ");
	odebug_puts(b, fix_words[fix]);
	module_holder[b->len < sizeof(module_holder) ? b->len : sizeof(module_holder) - 1] = '\0';
	odebug_symbolize_unmapped(&u);
	odebug_report(&o, "dlclose held");
	odebug_symbolize_unmapped(NULL);
	module_holder[0] = '\0';
}

static void start(struct odebug_buf *b)
{
	odebug_buf_init_mem(b, module_holder, sizeof(module_holder) - 1);
}

/* No thread's exit calls the destructor of a deleted key. */
static void check_keys(const struct odebug_held_module *m)
{
	struct odebug_xhold c[16];
	struct odebug_buf b;
	unsigned int n, i, skip = 0;
	long others = -1;

	while ((n = odebug_xhold_list(ODEBUG_HELD_KEY, 0, c, 16, skip))) {
		for (i = 0; i < n; i++) {
			bool mine;

			skip++;
			if (!odebug_xhold_current(&c[i]) || !in_module(m, c[i].fn))
				continue;
			mine = pthread_getspecific((pthread_key_t)c[i].key) != NULL;
			if (!mine && others < 0)
				others = threads() - 1;
			if (!mine && others <= 0)
				continue;
			start(&b);
			odebug_puts(&b, "key destructor ");
			odebug_put_dec(&b, (unsigned long)c[i].key);
			odebug_puts(&b, mine ? " (a value set in this thread)" :
				    " (other threads may hold values)");
			held(c[i].fn, &b, m, FIX_KEY);
			if (!pthread_key_delete((pthread_key_t)c[i].key))
				odebug_inc(&odebug_fixups);
			odebug_held_key_delete((unsigned int)c[i].key);
			skip--;		/* its record is gone */
		}
	}
}

/* The disposition a signal has with no handler, unless another was installed meanwhile. */
static void reset_handler(int sig, uintptr_t fn)
{
	struct sigaction now, dfl = { .sa_handler = SIG_DFL };

	if (!sigaction(sig, NULL, &now) && (uintptr_t)now.sa_handler == fn &&
	    !sigaction(sig, &dfl, NULL))
		odebug_inc(&odebug_fixups);
}

static void check_signals(const struct odebug_held_module *m)
{
	struct odebug_buf b;
	int sig;

	for (sig = 1; sig < NSIG; sig++) {
		struct sigaction sa;
		uintptr_t fn;
		const char *abbrev;

		if (sigaction(sig, NULL, &sa))
			continue;	/* glibc's own (EINVAL) */
		fn = (uintptr_t)sa.sa_handler;
		if (fn == (uintptr_t)SIG_DFL || fn == (uintptr_t)SIG_IGN || !in_module(m, fn))
			continue;
		start(&b);
		odebug_puts(&b, "signal handler for ");
		abbrev = sig < SIGRTMIN ? sigabbrev_np(sig) : NULL;
		if (abbrev) {
			odebug_puts(&b, "SIG");
			odebug_puts(&b, abbrev);
		} else {
			odebug_puts(&b, "signal ");
			odebug_put_dec(&b, (unsigned long)sig);
		}
		held(fn, &b, m, FIX_SIGNAL);
		reset_handler(sig, fn);
	}
}

/* Each armed timer, disarmed after its report (the next is then found). */
static void check_timers(const struct odebug_held_module *m)
{
	struct odebug_buf b;
	uint64_t id = 0;
	uintptr_t fn;
	int i, ver, left = 64;

	for (i = 0; i < m->nranges; i++) {
		while (left-- > 0 && (fn = odebug_held_timer_fn_in(m->lo[i], m->hi[i], &id, &ver))) {
			start(&b);
			odebug_puts(&b, "timer ");
			odebug_put_hex(&b, (uintptr_t)id);
			odebug_puts(&b, " armed, its SIGEV_THREAD function");
			held(fn, &b, m, FIX_TIMER);
			if (odebug_held_timer_disarm(id, ver))
				odebug_inc(&odebug_fixups);
		}
	}
}

static void check_threads(const struct odebug_held_module *m)
{
	struct odebug_xhold c[16];
	struct odebug_buf b;
	unsigned int n, i, skip = 0;

	while ((n = odebug_xhold_list(ODEBUG_HELD_THREAD, 0, c, 16, skip))) {
		skip += n;
		for (i = 0; i < n; i++) {
			if (!odebug_xhold_current(&c[i]) || !in_module(m, c[i].fn) ||
			    !odebug_glibc_thread_alive(c[i].tid))
				continue;
			start(&b);
			odebug_puts(&b, "thread ");
			odebug_put_dec(&b, (unsigned long)c[i].tid);
			odebug_puts(&b, " running its start routine");
			held(c[i].fn, &b, m, FIX_NONE);
		}
	}
}

/*
 * Before the real dlclose(@handle): note in @m what the check after it
 * needs (the module's ranges and name: gone with the module); false when
 * this dlclose() cannot unload it, and nothing is checked.  Loader calls
 * here, with no lock of ours held.
 */
bool odebug_held_dlclose_before(void *handle, struct odebug_held_module *m)
{
	struct link_map *lm = NULL;
	size_t len;

	m->nranges = 0;
	if (!odebug_load(&odebug_held_on) || odebug_load(&odebug_mode) != ODEBUG_MODE_ON)
		return false;
	if (!odebug_opens_last(handle))
		return false;	/* the program holds it more than once: it stays */
	if (dlinfo(handle, RTLD_DI_LINKMAP, &lm) || !lm || !lm->l_name || !lm->l_name[0])
		return false;
	len = strlen(lm->l_name);
	if (len >= sizeof(m->name))
		return false;	/* its name could not tell it apart afterwards */
	memcpy(m->name, lm->l_name, len + 1);
	m->base = lm->l_addr;
	m->found = false;
	dl_iterate_phdr(find_module, m);
	return m->found && m->nranges;
}

/*
 * After the real dlclose() succeeded, the module's destructors run: if
 * it is unmapped, what still calls into it is reported, each with its
 * fixup.
 */
void odebug_held_dlclose_after(struct odebug_held_module *m)
{
	if (odebug_load(&odebug_mode) != ODEBUG_MODE_ON || still_loaded(m))
		return;
	check_keys(m);
	check_signals(m);
	check_timers(m);
	check_threads(m);
}

/* pthread_key_create and pthread_key_delete succeeded (preload/pthread-key.c). */
void odebug_held_key_create(unsigned int key, void (*destructor)(void *))
{
	odebug_xhold_set(ODEBUG_HELD_KEY, key, 0, (uintptr_t)destructor, 0,
			 (uintptr_t)destructor);
}

void odebug_held_key_delete(unsigned int key)
{
	odebug_xhold_end(ODEBUG_HELD_KEY, key, 0);
}

/* The holder line of a module's code still needed at its dlclose. */
static bool held_module_describe(const struct odebug_snapshot *o, char *buf, size_t cap)
{
	return o->descr == &odebug_module_descr && module_describe(buf, cap);
}

ODEBUG_CHECKER(held_module) = {
	.name = "module code",
	.describe = held_module_describe,
};
