/* SPDX-License-Identifier: MIT */
/*
 * odebug.c - the odebug launcher: run a program with libodebug preloaded
 * and enabled; see odebug(1).
 *
 * One small C program, so that wrapping every test of a suite costs about
 * one exec: no shell, no od(1), no getcap(8).  It checks that libodebug can
 * work in the program (dynamically linked, not setuid/setgid, no file
 * capabilities, the library's architecture; #! interpreters followed),
 * orders LD_PRELOAD after a sanitizer runtime the program needs first, sets
 * the environment and exec()s the program.
 *
 * Built twice (preload/meson.build, launcher/meson.build): the build tree's
 * finds the library beside it, the installed one from bindir to libdir;
 * both relative to the launcher's own location.
 *
 * Exit status: the program's own; 125 for a usage error or a missing
 * library, 126 when PROGRAM cannot run with libodebug, 127 when not found.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

/* Set by the build: see the top of this file. */
#ifndef ODEBUG_VERSION
#error "built by meson: ODEBUG_VERSION and the paths below are defined there"
#endif
static const char version[] = ODEBUG_VERSION;
static const char soname[] = ODEBUG_SONAME;
static const char libdir_rel[] = ODEBUG_LIBDIR_REL;	/* from the launcher's directory */
static const char libdir_abs[] = ODEBUG_LIBDIR_ABS;
static const char audit_rel[] = ODEBUG_AUDIT_REL;	/* from the library's directory */
static const char audit_abs[] = ODEBUG_AUDIT_ABS;	/* empty in a build tree */
static const char modules_rel[] = ODEBUG_MODULES_REL;	/* build tree's modules, or empty */

enum { EXIT_USAGE = 125, EXIT_CANNOT = 126, EXIT_NOTFOUND = 127 };

/* What an ELF file says that the launcher needs. */
struct elf_info {
	unsigned cls, data, machine, type;
	bool interp;			/* has PT_INTERP: dynamically linked */
	char runtime[64];		/* a sanitizer runtime in DT_NEEDED, or "" */
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: odebug [-o KEY=VALUE]... [--] PROGRAM [ARGS...]\n"
"       odebug -o help=1 [-o KEY=VALUE]...\n"
"\n"
"Run PROGRAM with libodebug preloaded (LD_PRELOAD) and enabled (ODEBUG=1).\n"
"\n"
"  -o KEY=VALUE  add KEY=VALUE to ODEBUG_OPTIONS (after any settings it has);\n"
"                repeatable; '-o help=1' lists every option (no PROGRAM needed)\n"
"  --audit       also load libodebug-audit.so with LD_AUDIT: a module that\n"
"                dlclose() unloads is checked before its unmap, with hints\n"
"                and fixups (see odebug(1))\n"
"  -h, --help    print this help and exit\n"
"  --version     print the version and exit\n"
"\n"
"PROGRAM must be a dynamically linked program (or a script whose interpreter\n"
"is one), neither setuid nor setgid, and without file capabilities.\n"
"ODEBUG_LIBRARY names the library to preload instead of %s beside\n"
"this launcher.  In CI, -o exitcode=N makes a run with a report fail.\n"
"See odebug(1).\n", soname);
}

/* One line on stderr, then exit with @status: every refusal is one line. */
static void __attribute__((noreturn, format(printf, 2, 3)))
fail(int status, const char *fmt, ...)
{
	va_list ap;

	fputs("odebug: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(status);
}

/* A new string, or the end of the run: a launcher has nothing to save. */
static char * __attribute__((format(printf, 1, 2))) str(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		fail(EXIT_USAGE, "out of memory");
	return s;
}

/* The directory part of @path ("." for a bare name), a new string. */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return str(".");
	if (slash == path)
		return str("/");
	return str("%.*s", (int)(slash - path), path);
}

/*
 * Append KEY=VALUE to @options.  ODEBUG_OPTIONS separates settings with ':'
 * or ',', so a VALUE holding one is quoted for libodebug's parser (double
 * quotes, or single ones if it holds a double quote; there is no escape),
 * unless it is quoted already.
 */
static char *add_option(char *options, const char *kv)
{
	const char *eq = strchr(kv, '=');
	const char *value, *q = "";
	size_t vlen;

	if (!eq || eq == kv)
		fail(EXIT_USAGE, "-o '%s': expected KEY=VALUE (try -o help=1)", kv);
	value = eq + 1;
	vlen = strlen(value);
	if (vlen >= 2 && (value[0] == '"' || value[0] == '\'') && value[vlen - 1] == value[0])
		;	/* quoted already */
	else if (strpbrk(value, ":,")) {
		bool dq = strchr(value, '"'), sq = strchr(value, '\'');

		if (dq && sq)
			fail(EXIT_USAGE, "-o '%s': the value holds ':' or ',' and both quote "
			     "characters, which ODEBUG_OPTIONS cannot express", kv);
		q = dq ? "'" : "\"";
	}
	return str("%s%s%.*s%s%s%s", options ? options : "", options ? ":" : "",
		   (int)(eq - kv + 1), kv, q, value, q);
}

/* The @size-byte integer at @p in byte order @data (1: little endian). */
static uint64_t get(const unsigned char *p, int size, unsigned data)
{
	uint64_t n = 0;
	int i;

	for (i = 0; i < size; i++)
		n = n << 8 | p[data == 1 ? size - 1 - i : i];
	return n;
}

/* Does libodebug read @value as a switch turned off (lib/base/options.c)? */
static bool is_off(const char *value)
{
	return !strcmp(value, "0") || !strcmp(value, "false") || !strcmp(value, "no") ||
	       !strcmp(value, "off");
}

/* Is @name a sanitizer runtime that must come first in the link map? */
static bool is_sanitizer_runtime(const char *name)
{
	static const char *const prefix[] = {
		"libasan.so", "libtsan.so", "libubsan.so", "liblsan.so", "libhwasan.so",
		"libclang_rt.asan", "libclang_rt.tsan", "libclang_rt.ubsan",
		"libclang_rt.lsan", "libclang_rt.hwasan", "libclang_rt.memprof", NULL
	};
	int i;

	for (i = 0; prefix[i]; i++)
		if (!strncmp(name, prefix[i], strlen(prefix[i])))
			return true;
	return false;
}

/*
 * The first sanitizer runtime among the DT_NEEDED entries of @fd's dynamic
 * section (@dyn_off, @dyn_size), into @e->runtime.  DT_STRTAB is an
 * address: the PT_LOAD segments in @ph map it to a file offset.
 */
static void find_runtime(int fd, struct elf_info *e, const unsigned char *ph,
			 unsigned phnum, unsigned phentsize, uint64_t dyn_off,
			 uint64_t dyn_size)
{
	bool w = e->cls == 2;
	unsigned dsz = w ? 16 : 8, i;
	uint64_t strtab = 0, strsz = 0, stroff = UINT64_MAX, needed[64];
	unsigned nneeded = 0;
	unsigned char *dyn;
	char *strs;

	if (dyn_size > (1 << 20) || !(dyn = malloc(dyn_size ? dyn_size : 1)))
		return;
	if (pread(fd, dyn, dyn_size, (off_t)dyn_off) != (ssize_t)dyn_size)
		goto out;
	for (i = 0; (i + 1) * dsz <= dyn_size; i++) {
		uint64_t tag = get(dyn + i * dsz, dsz / 2, e->data);
		uint64_t val = get(dyn + i * dsz + dsz / 2, dsz / 2, e->data);

		if (tag == 0)			/* DT_NULL */
			break;
		if (tag == 1 && nneeded < 64)	/* DT_NEEDED */
			needed[nneeded++] = val;
		else if (tag == 5)		/* DT_STRTAB */
			strtab = val;
		else if (tag == 10)		/* DT_STRSZ */
			strsz = val;
	}
	for (i = 0; i < phnum; i++) {
		const unsigned char *p = ph + i * phentsize;
		uint64_t off = get(p + (w ? 8 : 4), w ? 8 : 4, e->data);
		uint64_t vaddr = get(p + (w ? 16 : 8), w ? 8 : 4, e->data);
		uint64_t filesz = get(p + (w ? 32 : 16), w ? 8 : 4, e->data);

		if (get(p, 4, e->data) == 1 && strtab >= vaddr && strtab - vaddr < filesz)
			stroff = strtab - vaddr + off;	/* PT_LOAD holding the table */
	}
	if (stroff == UINT64_MAX || !strsz || strsz > (1 << 24) || !(strs = malloc(strsz + 1)))
		goto out;
	if (pread(fd, strs, strsz, (off_t)stroff) == (ssize_t)strsz) {
		strs[strsz] = '\0';
		for (i = 0; i < nneeded; i++) {
			const char *name = needed[i] < strsz ? strs + needed[i] : "";

			if (is_sanitizer_runtime(name) && strlen(name) < sizeof(e->runtime)) {
				strcpy(e->runtime, name);
				break;
			}
		}
	}
	free(strs);
out:
	free(dyn);
}

/*
 * Read @path's ELF header and program headers into @e; false for a file
 * that is not ELF.  With @runtime, also look for a sanitizer runtime in its
 * DT_NEEDED (only for a program of the library's own architecture).
 */
static bool elf_read(const char *path, struct elf_info *e, bool runtime)
{
	unsigned char h[64], *ph = NULL;
	unsigned phnum, phentsize, i;
	uint64_t phoff, dyn_off = 0, dyn_size = 0;
	bool w, has_dyn = false;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	memset(e, 0, sizeof(*e));
	if (fd < 0)
		return false;
	if (pread(fd, h, sizeof(h), 0) != sizeof(h) || memcmp(h, "\177ELF", 4) ||
	    (h[4] != 1 && h[4] != 2) || (h[5] != 1 && h[5] != 2)) {
		close(fd);
		return false;
	}
	e->cls = h[4];
	e->data = h[5];
	w = e->cls == 2;
	e->type = (unsigned)get(h + 16, 2, e->data);
	e->machine = (unsigned)get(h + 18, 2, e->data);
	phoff = get(h + (w ? 32 : 28), w ? 8 : 4, e->data);
	phentsize = (unsigned)get(h + (w ? 54 : 42), 2, e->data);
	phnum = (unsigned)get(h + (w ? 56 : 44), 2, e->data);
	if (phnum && phentsize >= (w ? 56u : 32u) && phentsize <= 256 &&
	    (ph = malloc((size_t)phnum * phentsize)) &&
	    pread(fd, ph, (size_t)phnum * phentsize, (off_t)phoff) == (ssize_t)(phnum * phentsize)) {
		for (i = 0; i < phnum; i++) {
			const unsigned char *p = ph + i * phentsize;
			uint32_t type = (uint32_t)get(p, 4, e->data);

			if (type == 3)		/* PT_INTERP */
				e->interp = true;
			else if (type == 2) {	/* PT_DYNAMIC */
				has_dyn = true;
				dyn_off = get(p + (w ? 8 : 4), w ? 8 : 4, e->data);
				dyn_size = get(p + (w ? 32 : 16), w ? 8 : 4, e->data);
			}
		}
		if (runtime && has_dyn)
			find_runtime(fd, e, ph, phnum, phentsize, dyn_off, dyn_size);
	}
	free(ph);
	close(fd);
	return true;
}

/* Is @path a regular file? */
static bool is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/*
 * The first executable regular file @name in $PATH, searched as execvp()
 * does; else a non-executable match, if any (for the refusal); else NULL.
 */
static char *find_in_path(const char *name)
{
	const char *path = getenv("PATH"), *p, *end;
	char *found = NULL;

	if (!path)
		path = "/bin:/usr/bin";
	for (p = path;; p = end + 1) {
		char *file;

		end = strchrnul(p, ':');
		file = str("%.*s/%s", end > p ? (int)(end - p) : 1, end > p ? p : ".", name);
		if (is_file(file) && access(file, X_OK) == 0) {
			free(found);
			return file;
		}
		if (!found && access(file, F_OK) == 0)
			found = file;
		else
			free(file);
		if (!*end)
			return found;
	}
}

/*
 * Has @path file capabilities (the security.capability attribute)?  They
 * put the loader in secure-execution mode (AT_SECURE), as setuid does.
 */
static bool has_caps(const char *path)
{
	return getxattr(path, "security.capability", NULL, 0) > 0;
}

/* The interpreter named by @path's "#!" line, a new string; NULL if none. */
static char *shebang(const char *name, const char *path)
{
	char line[256], *p, *end;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	n = read(fd, line, sizeof(line) - 1);
	close(fd);
	if (n < 2 || line[0] != '#' || line[1] != '!')
		return NULL;
	line[n] = '\0';
	line[strcspn(line, "\n")] = '\0';
	for (p = line + 2; *p == ' ' || *p == '\t'; p++)
		;
	end = p + strcspn(p, " \t");
	if (end == p)
		fail(EXIT_CANNOT, "%s: has an empty #! line", name);
	return str("%.*s", (int)(end - p), p);
}

/*
 * Can @file run with libodebug preloaded?  @name is what the user called
 * it, for messages.  Follows #! interpreters; a sanitizer runtime of the
 * program (ELF, at the end of the chain) goes into @runtime, which is
 * empty for every other outcome (a script run by /bin/sh included).
 */
static void check(const char *name, const char *file, const char *lib_path,
		  const struct elf_info *lib, char *runtime, size_t runtime_size)
{
	const char *why = "LD_PRELOAD and ODEBUG are ignored in secure mode, it would run unchecked";
	struct elf_info e;
	struct stat st;
	int depth = 0;

	runtime[0] = '\0';
	for (;;) {
		char *interp;

		if (stat(file, &st) != 0)
			fail(EXIT_CANNOT, "%s: not a regular file (%s)", name, strerror(errno));
		if (S_ISDIR(st.st_mode))
			fail(EXIT_CANNOT, "%s: is a directory", name);
		if (!S_ISREG(st.st_mode))
			fail(EXIT_CANNOT, "%s: not a regular file", name);
		if (access(file, X_OK) != 0)
			fail(EXIT_CANNOT, "%s: not executable (permission denied)", name);
		if (st.st_mode & S_ISUID)
			fail(EXIT_CANNOT, "%s: is setuid: %s (run a copy without the bit)", name, why);
		if ((st.st_mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP))
			fail(EXIT_CANNOT, "%s: is setgid: %s (run a copy without the bit)", name, why);
		if (access(file, R_OK) != 0)
			fail(EXIT_CANNOT, "%s: not readable, cannot check that it is dynamically linked",
			     name);
		if (elf_read(file, &e, true)) {
			if (e.type != 2 && e.type != 3)
				fail(EXIT_CANNOT, "%s: is an ELF file but not an executable (type %u)",
				     name, e.type);
			if (e.cls != lib->cls || e.data != lib->data || e.machine != lib->machine)
				fail(EXIT_CANNOT, "%s: is built for another architecture than %s "
				     "(ELF class.data.machine %u.%u.%u, library %u.%u.%u): it "
				     "cannot be preloaded", name, lib_path, e.cls, e.data, e.machine,
				     lib->cls, lib->data, lib->machine);
			if (!e.interp)
				fail(EXIT_CANNOT, "%s: is statically linked (no program interpreter): "
				     "LD_PRELOAD cannot load libodebug into it", name);
			if (has_caps(file))
				fail(EXIT_CANNOT, "%s: has file capabilities: %s (run a copy without them)",
				     name, why);
			snprintf(runtime, runtime_size, "%s", e.runtime);
			return;
		}
		/* Not ELF: a #! script runs its interpreter, which must pass too. */
		if (!(interp = shebang(name, file)))
			return;		/* run by /bin/sh, as exec does */
		if (++depth > 4)
			fail(EXIT_CANNOT, "%s: too many levels of #! interpreters", name);
		if (access(interp, F_OK) != 0)
			fail(EXIT_CANNOT, "%s: its interpreter %s is not found", name, interp);
		name = str("%s: its interpreter %s", name, interp);
		file = interp;
	}
}

/* The library to preload: ODEBUG_LIBRARY, else beside the launcher. */
static char *find_library(const char *argv0)
{
	const char *env = getenv("ODEBUG_LIBRARY");
	char self[PATH_MAX], *dir = NULL;
	ssize_t n;

	if (env && *env) {
		char cwd[PATH_MAX];

		if (env[0] == '/' || !getcwd(cwd, sizeof(cwd)))
			return str("%s", env);
		return str("%s/%s", cwd, env);
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0)
		self[n] = '\0';
	else if (!realpath(argv0, self))
		snprintf(self, sizeof(self), "%s", argv0);
	if (libdir_rel[0]) {
		char *rel = str("%s/%s", dir_of(self), libdir_rel);

		dir = realpath(rel, NULL);
	}
	return str("%s/%s", dir ? dir : libdir_abs, soname);
}

/* NAME=VALUE with @value in front of what @name holds, joined by @sep. */
static void prepend_env(const char *name, const char *value, const char *sep)
{
	const char *old = getenv(name);

	if (setenv(name, old && *old ? str("%s%s%s", value, sep, old) : value, 1) != 0)
		fail(EXIT_USAGE, "cannot set %s: %s", name, strerror(errno));
}

/* libodebug-audit.so for --audit, relative to the library, else installed. */
static const char *find_audit(const char *libdir)
{
	const char *cand[] = { str("%s/%s", libdir, audit_rel),
			       str("%s/libodebug-audit.so", libdir), audit_abs };
	size_t i;

	for (i = 0; i < 3; i++)
		if (cand[i][0] && is_file(cand[i]) && access(cand[i], R_OK) == 0) {
			if (strchr(cand[i], ':'))
				fail(EXIT_USAGE, "--audit: the path of libodebug-audit.so, '%s', "
				     "contains ':', which LD_AUDIT cannot express", cand[i]);
			return cand[i];
		}
	fail(EXIT_USAGE, "--audit: cannot find libodebug-audit.so (not at %s%s%s)",
	     cand[0], audit_abs[0] ? " nor at " : "", audit_abs);
}

/*
 * The environment the program runs with.  Every variable the launcher sets
 * is set here, in this order: a new one belongs here too.
 */
static void set_environment(const char *lib, const char *runtime, const char *options,
			    bool audit)
{
	char *libdir = dir_of(lib), *mods;

	setenv("ODEBUG", "1", 1);
	/*
	 * A sanitizer runtime checks that it comes first in the link map
	 * (AddressSanitizer refuses to run otherwise) and its interceptors must
	 * see the calls before libodebug does: preloaded first, by the name the
	 * program needs (found as its DT_NEEDED entry would be), then
	 * libodebug, as a program linked with -lodebug has them.  Nothing
	 * else ever goes into LD_PRELOAD: the runtime only as one bare name
	 * of the list, which LD_PRELOAD reads as one entry.
	 */
	if (!is_sanitizer_runtime(runtime) || strpbrk(runtime, " \t\n:/"))
		runtime = "";
	prepend_env("LD_PRELOAD", runtime[0] ? str("%s %s", runtime, lib) : lib, " ");
	if (audit)
		prepend_env("LD_AUDIT", find_audit(libdir), ":");
	/* The build tree's modules (installed ones libodebug finds itself). */
	if (modules_rel[0] && !(getenv("ODEBUG_MODULE_PATH") && *getenv("ODEBUG_MODULE_PATH")) &&
	    (mods = realpath(str("%s/%s", libdir, modules_rel), NULL)))
		setenv("ODEBUG_MODULE_PATH", mods, 1);
	if (options)
		setenv("ODEBUG_OPTIONS", options, 1);
	/*
	 * GLib before 2.76 keeps g_slice memory in its own allocator, which
	 * never calls free(): with always-malloc it does, so libodebug checks
	 * it.  Set for every program unless already set (even empty): only
	 * GLib reads it, GLib 2.76 and later ignore it, and which GLib a
	 * program will load (perhaps by dlopen) cannot be known here.
	 */
	setenv("G_SLICE", "always-malloc", 0);
}

/* ODEBUG_OPTIONS: what it had, then the -o settings (so -o wins); or NULL. */
static char *joined_options(const char *options)
{
	const char *old = getenv("ODEBUG_OPTIONS");

	if (!options)
		return NULL;
	return old && *old ? str("%s:%s", old, options) : str("%s", options);
}

/* Run @path as @argv: exec, or /bin/sh for a file with no #! (as execvp). */
static void __attribute__((noreturn)) run(const char *name, const char *path, char **argv)
{
	int err;

	execv(path, argv);
	err = errno;
	if (err == ENOEXEC) {
		int argc = 0;
		char **sh;

		while (argv[argc])
			argc++;
		sh = calloc((size_t)argc + 2, sizeof(*sh));
		if (sh) {
			sh[0] = "sh";
			sh[1] = (char *)path;
			memcpy(sh + 2, argv + 1, (size_t)argc * sizeof(*sh));
			execv("/bin/sh", sh);
			err = errno;
		}
	}
	fail(err == ENOENT ? EXIT_NOTFOUND : EXIT_CANNOT, "%s: %s", name, strerror(err));
}

int main(int argc, char **argv)
{
	char *options = NULL, *lib, *path, runtime[64] = "";
	bool audit = false, help_option = false;
	struct elf_info lib_elf;
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--")) {
			i++;
			break;
		} else if (!strcmp(a, "--audit")) {
			audit = true;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(a, "--version")) {
			printf("odebug (libodebug) %s\n", version);
			return 0;
		} else if (!strncmp(a, "-o", 2)) {
			if (!a[2] && i + 1 == argc)
				fail(EXIT_USAGE, "option -o needs KEY=VALUE (try --help)");
			a = a[2] ? a + 2 : argv[++i];
			options = add_option(options, a);
			if (!strncmp(a, "help=", 5))
				help_option = !is_off(a + 5);
		} else if (a[0] == '-' && a[1]) {
			fail(EXIT_USAGE, "unknown option '%s' (try --help)", a);
		} else {
			break;
		}
	}
	if (i == argc && !help_option) {
		usage(stderr);
		return EXIT_USAGE;
	}

	lib = find_library(argv[0]);
	if (!is_file(lib) || access(lib, R_OK) != 0)
		fail(EXIT_USAGE, "cannot find libodebug: %s does not exist (set ODEBUG_LIBRARY "
		     "to its path)", lib);
	if (strpbrk(lib, " :\t\n"))
		fail(EXIT_USAGE, "the path of libodebug, '%s', contains a space or ':', which "
		     "LD_PRELOAD cannot express", lib);
	if (!elf_read(lib, &lib_elf, false))
		fail(EXIT_USAGE, "%s is not an ELF shared library", lib);

	if (i == argc) {
		/*
		 * -o help=1 alone: libodebug's constructor prints the table in
		 * any dynamic program; the launcher itself may be static, so
		 * the shell POSIX guarantees does nothing under it.
		 */
		static char *shell[] = { "sh", "-c", ":", NULL };

		set_environment(lib, "", joined_options(options), false);
		run("sh", "/bin/sh", shell);
	}

	/* The program: as execvp() will find it (an empty name names none). */
	if (!argv[i][0])
		fail(EXIT_NOTFOUND, "'': command not found (an empty program name)");
	if (strchr(argv[i], '/')) {
		path = argv[i];
	} else if (!(path = find_in_path(argv[i]))) {
		fail(EXIT_NOTFOUND, "%s: command not found", argv[i]);
	}
	if (access(path, F_OK) != 0)
		fail(EXIT_NOTFOUND, "%s: no such file", argv[i]);
	check(argv[i], path, lib, &lib_elf, runtime, sizeof(runtime));

	set_environment(lib, runtime, joined_options(options), audit);
	/* A name starting with '-' would read as a login shell's argv[0]. */
	if (argv[i][0] == '-')
		argv[i] = path;
	run(argv[i], path, argv + i);
}
