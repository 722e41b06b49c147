/* SPDX-License-Identifier: MIT */
/*
 * dlcaller.c - a dlopen() or dlmopen() made for the code that called the
 * interposer.  glibc takes the caller from its own return address: when
 * an interposer makes the real call and then goes on (dlopen.c counts the
 * handle and scans for modules), the caller glibc sees is libodebug, and
 * the name would be searched as libodebug's:
 *   - a bare name by the caller's DT_RUNPATH (and a library's own
 *     DT_RPATH): libodebug has neither, so a plugin found only there is
 *     not found;
 *   - $ORIGIN as libodebug's directory, not the caller's.
 * So for those names the search is made here, in glibc's order, from the
 * caller's own search list (dlinfo(RTLD_DI_SERINFO) of the caller's
 * object: its paths with $ORIGIN expanded, LD_LIBRARY_PATH, the system
 * directories): an object already loaded under the name first (an open
 * with RTLD_NOLOAD, as glibc matches names before it searches), then each
 * of the caller's directories before the system ones, then the name as
 * given, which leaves ld.so.cache, the system directories and the error
 * message to glibc.  As glibc's open_path, a directory's file of another
 * ELF class or machine, or one that cannot be opened (ENOENT, EACCES), is
 * passed over; any other file found is the answer, loaded or not.
 *
 * glibc gives an object found by a search the name searched for, and
 * later opens of that name from anywhere match it; an object we found
 * was opened by its path and has only that.  So the paths found are kept
 * (an append-only area), and a bare name is matched against the loaded
 * ones among them (an open of the path with RTLD_NOLOAD) after glibc's
 * own names.
 *
 * $ORIGIN in a name with a slash is the caller's directory (RTLD_DI_ORIGIN;
 * the program's from /proc/self/exe, as glibc computes it only when first
 * needed and dlinfo() reads it unchecked); other substitutions mean the
 * same for every caller.  A name with a slash and no '$' means the same
 * to every caller, and so does anything in a secure-execution process
 * (left to glibc whole).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "interpose.h"
#include "lock.h"

#define SERINFO_MAX	2048	/* bytes of a search list; longer: glibc's search as is */
#define FOUND_MAX	65536	/* bytes of paths found; beyond: not kept */

extern const ElfW(Ehdr) __ehdr_start;	/* ours: the class and machine loadable here */

static ODEBUG_LARGE char found[FOUND_MAX];	/* paths found by a search, each NUL-terminated */
static size_t found_len;	/* published with release: bytes of found[] in use */
static odebug_spinlock_t found_lock;	/* for appending */

/* The object @ra is in; the program's if none, as glibc takes it. */
static struct link_map *caller_map(const void *ra)
{
	struct link_map *map = NULL;
	Dl_info info;

	if (!dladdr1(ra, &info, (void **)&map, RTLD_DL_LINKMAP) || !map)
		return _r_debug.r_map;
	return map;
}

/* The program's directory, as glibc's _dl_get_origin() finds it. */
static bool program_origin(char *out, size_t len)
{
	/* The calling thread's view: the main thread's, a zombie after its pthread_exit(), has none. */
	ssize_t n = readlink("/proc/thread-self/exe", out, len);
	const char *env;

	if (n < 0)
		n = readlink("/proc/self/exe", out, len);
	if (n > 0 && (size_t)n < len && out[0] == '/') {
		while (n > 1 && out[n - 1] != '/')
			n--;
		out[n > 1 ? n - 1 : 1] = '\0';
		return true;
	}
	env = getenv("LD_ORIGIN_PATH");
	if (!env || strlen(env) >= len)
		return false;
	n = (ssize_t)strlen(env);
	while (n > 1 && env[n - 1] == '/')
		n--;
	memcpy(out, env, (size_t)n);
	out[n] = '\0';
	return true;
}

/* Length of the ORIGIN substitution at @s ("$ORIGIN" or "${ORIGIN}", as glibc's is_dst()); 0. */
static size_t origin_dst(const char *s)
{
	bool curly = s[0] == '$' && s[1] == '{';
	char c;

	if (s[0] != '$' || strncmp(s + 1 + curly, "ORIGIN", 6))
		return 0;
	c = s[1 + curly + 6];
	if (curly)
		return c == '}' ? 9 : 0;
	if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')
		return 0;
	return 7;
}

/* @file with each $ORIGIN / ${ORIGIN} replaced by @map's directory, in @out. */
static __attribute__((noinline)) bool expand_origin(const char *file, struct link_map *map,
						    char *out, size_t len)
{
	char origin[PATH_MAX];
	size_t n = 0;

	if (!map)
		return false;
	if (!map->l_name[0]) {
		if (!program_origin(origin, sizeof(origin)))
			return false;
	} else if (dlinfo(map, RTLD_DI_ORIGIN, origin) != 0) {
		dlerror();
		return false;
	}
	while (*file) {
		size_t skip = origin_dst(file);
		const char *add = skip ? origin : file;
		size_t add_len = skip ? strlen(origin) : 1;

		if (n + add_len >= len)
			return false;
		memcpy(out + n, add, add_len);
		n += add_len;
		file += skip ? skip : 1;
	}
	out[n] = '\0';
	return true;
}

/* How many entries of @a, from its end, are @b's last ones too (the system directories). */
static unsigned int common_tail(const Dl_serinfo *a, const Dl_serinfo *b)
{
	unsigned int n = 0;

	while (n < a->dls_cnt && n < b->dls_cnt &&
	       !strcmp(a->dls_serpath[a->dls_cnt - 1 - n].dls_name,
		       b->dls_serpath[b->dls_cnt - 1 - n].dls_name))
		n++;
	return n;
}

/* @map's search list into @buf; false if it does not fit or cannot be had. */
static bool search_list(struct link_map *map, Dl_serinfo *buf)
{
	Dl_serinfo size;

	if (dlinfo(map, RTLD_DI_SERINFOSIZE, &size) != 0 || size.dls_size > SERINFO_MAX) {
		dlerror();
		return false;
	}
	buf->dls_size = size.dls_size;
	buf->dls_cnt = size.dls_cnt;
	if (dlinfo(map, RTLD_DI_SERINFO, buf) != 0) {
		dlerror();
		return false;
	}
	return true;
}

/*
 * Whether glibc's search goes on past @path (open_path, open_verify): it
 * cannot be opened for want of it or of permission, or it is an ELF file
 * of another class or, valid otherwise, of another machine.  Anything
 * else it loads or fails on, and so ends the search.
 */
static bool passed_over(const char *path)
{
	ElfW(Ehdr) ehdr;
	long got = odebug_read_file(path, (char *)&ehdr, sizeof(ehdr));

	if (got < 0)
		return got == -ENOENT || got == -EACCES || got == -ENOTDIR;
	if ((size_t)got < sizeof(ehdr) || memcmp(ehdr.e_ident, ELFMAG, SELFMAG))
		return false;
	if (ehdr.e_ident[EI_CLASS] != __ehdr_start.e_ident[EI_CLASS])
		return true;
	return ehdr.e_ident[EI_DATA] == __ehdr_start.e_ident[EI_DATA] &&
	       ehdr.e_version == EV_CURRENT && ehdr.e_machine != __ehdr_start.e_machine;
}

/* Keep @path (a search's find) for later opens of its last component. */
static void found_add(const char *path)
{
	size_t len = strlen(path) + 1, used, at;

	odebug_spin_lock(&found_lock);
	used = __atomic_load_n(&found_len, __ATOMIC_RELAXED);
	for (at = 0; at < used; at += strlen(found + at) + 1)
		if (!strcmp(found + at, path))
			break;
	if (at == used && used + len <= sizeof(found)) {
		memcpy(found + used, path, len);
		__atomic_store_n(&found_len, used + len, __ATOMIC_RELEASE);
	}
	odebug_spin_unlock(&found_lock);
}

/* A loaded object a search found for @file before: as glibc matches the name it gave it. */
static void *found_open(odebug_open_fn *open, void *ctx, const char *file, int mode)
{
	size_t used = __atomic_load_n(&found_len, __ATOMIC_ACQUIRE), at, len;
	void *handle;

	for (at = 0; at < used; at += len + 1) {
		const char *path = found + at, *slash = strrchr(path, '/');

		len = strlen(path);
		if (!slash || strcmp(slash + 1, file))
			continue;
		handle = open(path, mode | RTLD_NOLOAD, ctx);
		if (handle)
			return handle;
		dlerror();
	}
	return NULL;
}

/* A bare name, searched for as the caller at @map would have it. */
static __attribute__((noinline)) void *search_as(odebug_open_fn *open, void *ctx,
						 const char *file, int mode,
						 struct link_map *map, struct link_map *self,
						 int saved)
{
	char path[PATH_MAX], theirs_buf[SERINFO_MAX] __attribute__((aligned(16)));
	char ours_buf[SERINFO_MAX] __attribute__((aligned(16)));
	Dl_serinfo *theirs = (Dl_serinfo *)theirs_buf, *ours = (Dl_serinfo *)ours_buf;
	unsigned int i, tail;
	void *handle;

	handle = open(file, mode | RTLD_NOLOAD, ctx);
	if (!handle) {
		dlerror();	/* not loaded under that name: not the program's error */
		handle = found_open(open, ctx, file, mode);
	}
	if (handle) {
		errno = saved;
		return handle;
	}
	/*
	 * The caller's list and ours (libodebug's: what glibc would search
	 * for us) end alike in the system directories, which glibc searches
	 * after ld.so.cache: those are left to the last open.
	 */
	if (!map || !search_list(map, theirs))
		goto as_given;
	tail = search_list(self, ours) ? common_tail(theirs, ours) : 0;
	for (i = 0; i + tail < theirs->dls_cnt; i++) {
		int n = snprintf(path, sizeof(path), "%s/%s", theirs->dls_serpath[i].dls_name, file);

		if (n <= 0 || (size_t)n >= sizeof(path) || passed_over(path))
			continue;
		errno = saved;
		handle = open(path, mode, ctx);
		if (handle)
			found_add(path);
		return handle;
	}
as_given:
	errno = saved;
	return open(file, mode, ctx);
}

/* A name with a slash and a '$': $ORIGIN as the caller at @map's directory. */
static __attribute__((noinline)) void *open_expanded(odebug_open_fn *open, void *ctx,
						     const char *file, int mode,
						     struct link_map *map, int saved)
{
	char path[PATH_MAX];
	bool expanded = expand_origin(file, map, path, sizeof(path));

	errno = saved;
	return open(expanded ? path : file, mode, ctx);
}

/* The stack holds at most one of the two paths' buffers (a few KiB). */
void *odebug_dlopen_as_caller(odebug_open_fn *open, void *ctx, const char *file, int mode,
			      const void *ra)
{
	struct link_map *map, *self;
	int saved = errno;

	if (!file || (strchr(file, '/') && !strchr(file, '$')) || getauxval(AT_SECURE))
		return open(file, mode, ctx);
	map = caller_map(ra);
	self = caller_map((const void *)odebug_dlopen_as_caller);
	if (map == self)
		return open(file, mode, ctx);
	if (strchr(file, '/'))
		return open_expanded(open, ctx, file, mode, map, saved);
	return search_as(open, ctx, file, mode, map, self, saved);
}
