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
 * message to glibc.  $ORIGIN in a name is the caller's directory
 * (RTLD_DI_ORIGIN); other substitutions mean the same for every caller.
 * A name with a slash and no '$' means the same to every caller, and so
 * does anything in a secure-execution process (left to glibc whole).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "interpose.h"

#define SERINFO_MAX	2048	/* bytes of a search list; longer: glibc's search as is */

/* The object @ra is in; the program's if none, as glibc takes it. */
static struct link_map *caller_map(const void *ra)
{
	struct link_map *map = NULL;
	Dl_info info;

	if (!dladdr1(ra, &info, (void **)&map, RTLD_DL_LINKMAP) || !map)
		return _r_debug.r_map;
	return map;
}

/* @file with each $ORIGIN / ${ORIGIN} replaced by @map's directory, in @out. */
static bool expand_origin(const char *file, struct link_map *map, char *out, size_t len)
{
	char origin[PATH_MAX];
	size_t n = 0;

	if (!map || dlinfo(map, RTLD_DI_ORIGIN, origin) != 0) {
		dlerror();
		return false;
	}
	while (*file) {
		size_t skip = !strncmp(file, "$ORIGIN", 7) ? 7 :
			      !strncmp(file, "${ORIGIN}", 9) ? 9 : 0;
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

void *odebug_dlopen_as_caller(odebug_open_fn *open, void *ctx, const char *file, int mode,
			      const void *ra)
{
	char path[PATH_MAX], theirs_buf[SERINFO_MAX] __attribute__((aligned(16)));
	char ours_buf[SERINFO_MAX] __attribute__((aligned(16)));
	Dl_serinfo *theirs = (Dl_serinfo *)theirs_buf, *ours = (Dl_serinfo *)ours_buf;
	struct link_map *map, *self;
	unsigned int i, tail;
	void *handle;

	if (!file || (strchr(file, '/') && !strchr(file, '$')) || getauxval(AT_SECURE))
		return open(file, mode, ctx);
	map = caller_map(ra);
	self = caller_map((const void *)odebug_dlopen_as_caller);
	if (map == self)
		return open(file, mode, ctx);
	if (strchr(file, '$'))
		return expand_origin(file, map, path, sizeof(path)) ? open(path, mode, ctx) :
								      open(file, mode, ctx);
	if (mode & RTLD_NOLOAD)
		return open(file, mode, ctx);
	handle = open(file, mode | RTLD_NOLOAD, ctx);
	if (handle)
		return handle;
	dlerror();	/* not loaded yet: not the program's error */
	/*
	 * The caller's list and ours (libodebug's: what glibc would search
	 * for us) end alike in the system directories, which glibc searches
	 * after ld.so.cache: those are left to the last open.
	 */
	if (!map || !search_list(map, theirs))
		return open(file, mode, ctx);
	tail = search_list(self, ours) ? common_tail(theirs, ours) : 0;
	for (i = 0; i + tail < theirs->dls_cnt; i++) {
		int n = snprintf(path, sizeof(path), "%s/%s", theirs->dls_serpath[i].dls_name, file);

		if (n <= 0 || (size_t)n >= sizeof(path) || access(path, F_OK) != 0)
			continue;
		handle = open(path, mode, ctx);
		if (handle)
			return handle;
		dlerror();	/* glibc goes on past an object it cannot use, and so do we */
	}
	return open(file, mode, ctx);
}
