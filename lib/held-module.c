/* SPDX-License-Identifier: MIT */
/*
 * held-module.c - code a module must keep while something will still
 * call it: at the dlclose() of a module that would unload, a destructor
 * of a live pthread key, an installed signal handler, the function of an
 * armed SIGEV_THREAD timer, or the start routine of a thread still
 * running, when it lies in the module, is reported ("dlclose held",
 * object type module_code, the function as the object and the hint), and
 * the fixup keeps the module loaded: the real dlclose() is not made, so
 * the call that would have jumped into unmapped code finds it in place.
 *
 * What is asked, and when: key destructors are recorded by the
 * pthread_key_create interposer (glibc's key table is not public); a key
 * counts only if not deleted and either this thread has a value or other
 * threads exist (their values cannot be read: a key no thread ever set
 * is then reported too, which a correct program avoids by deleting its
 * keys before the dlclose).  Signal dispositions are read with
 * sigaction(sig, NULL, &old) for every signal; timers come from
 * lib/held.c's records; running threads from held-tstack.c's, each
 * confirmed alive by the kernel.
 *
 * Only at the dlclose() that unloads the module: the program's last
 * reference to the handle (counted by the dlopen() and dlclose()
 * interposers, lib/held-opens.c), no RTLD_NODELETE open and no
 * DF_1_NODELETE flag, and no other loaded object naming it in
 * DT_NEEDED.  Not seen: a module kept by a symbol another module bound
 * to it, or by a STB_GNU_UNIQUE symbol (glibc keeps those loaded); a
 * report is then possible at a dlclose() that leaves the module loaded.
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

#define RANGES 8


struct module {
	uintptr_t base, lo[RANGES], hi[RANGES];
	const char *name, *soname;
	int nranges;
	bool found, needed;
};

/* The holder line of the report being made (reports of one thread are serial). */
static ODEBUG_TLS char module_holder[160];

static bool in_module(const struct module *m, uintptr_t pc)
{
	int i;

	for (i = 0; i < m->nranges; i++)
		if (pc >= m->lo[i] && pc < m->hi[i])
			return true;
	return false;
}

/* The module's PT_LOAD ranges and its DT_SONAME. */
static int find_module(struct dl_phdr_info *info, size_t size, void *data)
{
	struct module *m = data;
	int i;

	(void)size;
	if (info->dlpi_addr != m->base || !info->dlpi_name || strcmp(info->dlpi_name, m->name))
		return 0;
	m->found = true;
	for (i = 0; i < info->dlpi_phnum && m->nranges < RANGES; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD)
			continue;
		m->lo[m->nranges] = info->dlpi_addr + ph->p_vaddr;
		m->hi[m->nranges++] = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
	}
	return 1;
}

/* @info's dynamic section: its string table and the entries of @tag, one by one. */
static const char *dyn_string(const struct dl_phdr_info *info, const ElfW(Dyn) *dyn,
			      ElfW(Sxword) tag, int *pos)
{
	uintptr_t strtab = 0;
	const ElfW(Dyn) *d;

	for (d = dyn; d->d_tag != DT_NULL; d++)
		if (d->d_tag == DT_STRTAB)
			strtab = d->d_un.d_ptr;
	if (!strtab)
		return NULL;
	if (strtab < info->dlpi_addr)	/* not relocated in place (some arches) */
		strtab += info->dlpi_addr;
	for (d = dyn + *pos; d->d_tag != DT_NULL; d++, (*pos)++)
		if (d->d_tag == tag) {
			(*pos)++;
			return (const char *)strtab + d->d_un.d_val;
		}
	return NULL;
}

static const ElfW(Dyn) *dynamic(const struct dl_phdr_info *info)
{
	int i;

	for (i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			return (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	return NULL;
}

/* Does another loaded object name the module in DT_NEEDED (so it stays)? */
static int needs_module(struct dl_phdr_info *info, size_t size, void *data)
{
	struct module *m = data;
	const ElfW(Dyn) *dyn = dynamic(info);
	const char *need;
	int pos = 0;

	(void)size;
	if (!dyn || info->dlpi_addr == m->base || !m->soname)
		return 0;
	while ((need = dyn_string(info, dyn, DT_NEEDED, &pos)))
		if (!strcmp(need, m->soname)) {
			m->needed = true;
			return 1;
		}
	return 0;
}

/* The module's DT_SONAME (else its file name), and whether it is DF_1_NODELETE. */
static int soname_of(struct dl_phdr_info *info, size_t size, void *data)
{
	struct module *m = data;
	const ElfW(Dyn) *dyn, *d;
	int pos = 0;

	(void)size;
	if (info->dlpi_addr != m->base || !(dyn = dynamic(info)))
		return 0;
	for (d = dyn; d->d_tag != DT_NULL; d++)
		if (d->d_tag == DT_FLAGS_1 && (d->d_un.d_val & DF_1_NODELETE))
			m->needed = true;	/* never unloaded */
	m->soname = dyn_string(info, dyn, DT_SONAME, &pos);
	if (!m->soname) {	/* no DT_SONAME: DT_NEEDED names the file */
		const char *slash = strrchr(m->name, '/');

		m->soname = slash ? slash + 1 : m->name;
	}
	return 1;
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

/* The holder line, for lib/held-ext.c's describe. */
bool odebug_held_module_describe(char *buf, size_t cap)
{
	size_t n = strnlen(module_holder, sizeof(module_holder) - 1);

	if (!n || n >= cap)
		return false;
	memcpy(buf, module_holder, n + 1);
	return true;
}

/* One report: @fn in the module, held by what @b says. */
static void held(uintptr_t fn, struct odebug_buf *b, const struct module *m, unsigned int *n)
{
	struct odebug_snapshot o = { .addr = fn, .descr = &odebug_module_descr,
				     .state = ODEBUG_STATE_ACTIVE };
	const char *slash = strrchr(m->name, '/');

	odebug_puts(b, " in ");
	odebug_puts(b, slash ? slash + 1 : m->name);
	module_holder[b->len < sizeof(module_holder) ? b->len : sizeof(module_holder) - 1] = '\0';
	odebug_report(&o, "dlclose held");
	module_holder[0] = '\0';
	(*n)++;
}

static void start(struct odebug_buf *b)
{
	odebug_buf_init_mem(b, module_holder, sizeof(module_holder) - 1);
}

static unsigned int check_keys(const struct module *m)
{
	struct odebug_xhold c[16];
	struct odebug_buf b;
	unsigned int n, i, found = 0, skip = 0;
	long others = -1;

	while ((n = odebug_xhold_list(ODEBUG_HELD_KEY, 0, c, 16, skip))) {
		skip += n;
		for (i = 0; i < n; i++) {
			bool mine;

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
			held(c[i].fn, &b, m, &found);
		}
	}
	return found;
}

static unsigned int check_signals(const struct module *m)
{
	struct odebug_buf b;
	unsigned int found = 0;
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
		held(fn, &b, m, &found);
	}
	return found;
}

static unsigned int check_timers(const struct module *m)
{
	struct odebug_buf b;
	unsigned int found = 0;
	uint64_t id = 0;
	uintptr_t fn = 0;
	int i;

	for (i = 0; i < m->nranges && !fn; i++)
		fn = odebug_held_timer_fn_in(m->lo[i], m->hi[i], &id);
	if (!fn)
		return 0;
	start(&b);
	odebug_puts(&b, "timer ");
	odebug_put_hex(&b, (uintptr_t)id);
	odebug_puts(&b, " armed, its SIGEV_THREAD function");
	held(fn, &b, m, &found);
	return found;
}

static unsigned int check_threads(const struct module *m)
{
	struct odebug_xhold c[16];
	struct odebug_buf b;
	unsigned int n, i, found = 0, skip = 0;

	while ((n = odebug_xhold_list(ODEBUG_HELD_THREAD, 0, c, 16, skip))) {
		skip += n;
		for (i = 0; i < n; i++) {
			if (!odebug_xhold_current(&c[i]) || !in_module(m, c[i].fn) ||
			    !odebug_held_thread_alive(c[i].tid))
				continue;
			start(&b);
			odebug_puts(&b, "thread ");
			odebug_put_dec(&b, (unsigned long)c[i].tid);
			odebug_puts(&b, " running its start routine");
			held(c[i].fn, &b, m, &found);
		}
	}
	return found;
}

/*
 * Before the real dlclose(@handle): true when code of the module is
 * still held (each holder reported), and the module must stay loaded.
 * Loader calls here, with no lock of ours held.
 */
bool odebug_held_dlclose(void *handle)
{
	struct link_map *lm = NULL;
	struct module m = { 0 };
	unsigned int found;

	if (!odebug_load(&odebug_held_on) || odebug_load(&odebug_mode) != ODEBUG_MODE_ON)
		return false;
	if (!odebug_opens_last(handle))
		return false;	/* the program holds it more than once: it stays */
	if (dlinfo(handle, RTLD_DI_LINKMAP, &lm) || !lm || !lm->l_name || !lm->l_name[0])
		return false;
	m.base = lm->l_addr;
	m.name = lm->l_name;
	dl_iterate_phdr(find_module, &m);
	if (!m.found || !m.nranges)
		return false;
	dl_iterate_phdr(soname_of, &m);
	if (!m.needed)
		dl_iterate_phdr(needs_module, &m);
	if (m.needed)
		return false;
	found = check_keys(&m) + check_signals(&m) + check_timers(&m) + check_threads(&m);
	if (found)
		odebug_inc(&odebug_fixups);	/* the module stays: the fixup */
	return found != 0;
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
