/* SPDX-License-Identifier: MIT */
/*
 * symbolize.c - naming frames: module+offset, function+offset, file:line,
 * inlined calls.
 *
 * Naming happens inside a report, which may run in a signal handler that
 * interrupted malloc, in a dlclose() destructor holding the loader's lock,
 * or on a 16 KiB stack.  So nothing here allocates, uses stdio, or calls
 * the loader (dladdr, dlopen, dl_iterate_phdr), and nothing big lives on
 * the caller's stack:
 *
 *   1. each address's module comes from /proc/self/maps, read with raw
 *      system calls, and its address in the ELF file from the file's
 *      program headers (pread);
 *   2. an external symboliser names them (helper.c runs it): llvm-symbolizer
 *      (kept running for the process, one request per stack), else binutils
 *      addr2line (one run per module and stack); with neither, or with
 *      symbolizer=none, frames are "module+0xoffset" only.
 *
 * The symboliser reads only local files, in an environment without
 * DEBUGINFOD_URLS: a report never touches the network.  Frames are
 * module+offset for the rest of the process once a symboliser has timed
 * out (a silent one would cost a timeout per report) or once the thread
 * that reports is in a seccomp sandbox (helper.c: starting one would kill
 * the process; one already running is not used either).  Under the report
 * lock only; the strings it returns live until the next
 * odebug_symbolize_begin().  Its system calls that can block are raw
 * syscall()s: none is a cancellation point.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "report.h"

#define MAX_MODULES	64
#define PATH_CAP	512
#define NAME_CAP	512		/* longer names are cut, ending in "..." */
#define LLVM_TIMEOUT_MS	20000		/* the first request loads debug info */
#define A2L_TIMEOUT_MS	10000

struct module {
	char path[PATH_CAP];
	uintptr_t base;		/* where its file offset 0 is mapped */
	uintptr_t vaddr0;	/* the ELF address mapped at base */
	bool elf_ok;
};

/* Under the report lock: this report's modules, strings and exchange. */
static ODEBUG_LARGE struct module modules[MAX_MODULES];
static int nmodules;
/*
 * Room for every string a report can name: two per frame (function, file)
 * for three stacks and the hint, plus addr2line's frames of one stack
 * gathered before they are put in order.  Nothing is ever cut for lack
 * of room.
 */
#define MAX_NAMED ((3 * ODEBUG_MAX_FRAMES + 4) + 2 * ODEBUG_MAX_FRAMES)
static ODEBUG_LARGE char strings[MAX_NAMED * 2 * (NAME_CAP + 1)];
static size_t strings_len;
static ODEBUG_LARGE char io[128 * 1024];		/* requests, then answers */
static ODEBUG_LARGE char maps_buf[4096], line[PATH_CAP + 128];

enum kind { SYM_UNTRIED, SYM_LLVM, SYM_ADDR2LINE, SYM_NONE };
static enum kind kind;
static char sym_path[ODEBUG_OPT_STRLEN];
static struct odebug_helper llvm = { .fd = -1 };
static bool sandbox_checked;	/* in this report */

/* Where each address of the current stack lives. */
struct place {
	int module;		/* -1: none */
	uintptr_t vaddr;	/* the address looked up (call site for returns) */
};
static struct place places[ODEBUG_MAX_FRAMES + 1];
/* A module unmapped by this thread's dlclose(), while it reports (held-module.c). */
static ODEBUG_TLS const struct odebug_unmapped *unmapped;

void odebug_symbolize_unmapped(const struct odebug_unmapped *u)
{
	unmapped = u;
}

void odebug_symbolize_begin(void)
{
	strings_len = 0;
	nmodules = 0;
	sandbox_checked = false;
}

/* A copy of @s (@n bytes) that lives until the next begin; "" when full. */
static const char *keep(const char *s, size_t n)
{
	char *p;

	if (n > NAME_CAP)
		n = NAME_CAP;
	if (strings_len + n + 1 > sizeof(strings))
		return "";
	p = strings + strings_len;
	memcpy(p, s, n);
	if (n == NAME_CAP)
		memcpy(p + n - 3, "...", 3);
	p[n] = '\0';
	strings_len += n + 1;
	return p;
}

static int sys_open(const char *path)
{
	return (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
}

static void sys_close(int fd)
{
	syscall(SYS_close, fd);
}

/* --- which module, and where in its file ---------------------------- */

static uintptr_t parse_hex(const char **s)
{
	uintptr_t v = 0;

	for (;; (*s)++) {
		char c = **s;

		if (c >= '0' && c <= '9')
			v = v * 16 + (uintptr_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v * 16 + (uintptr_t)(c - 'a' + 10);
		else
			return v;
	}
}

/* The ELF address that the mapping of file offset 0 holds. */
static bool elf_vaddr0(const char *path, uintptr_t *vaddr0)
{
	ElfW(Ehdr) eh;
	ElfW(Phdr) ph;
	bool ok = false;
	int fd = sys_open(path), i;

	if (fd < 0)
		return false;
	if (syscall(SYS_pread64, fd, &eh, sizeof(eh), 0) == sizeof(eh) &&
	    !memcmp(eh.e_ident, ELFMAG, SELFMAG) && eh.e_phentsize == sizeof(ph)) {
		for (i = 0; i < eh.e_phnum && i < 256; i++) {
			if (syscall(SYS_pread64, fd, &ph, sizeof(ph),
				    (off_t)(eh.e_phoff + i * sizeof(ph))) != sizeof(ph))
				break;
			if (ph.p_type == PT_LOAD) {
				*vaddr0 = (uintptr_t)(ph.p_vaddr - ph.p_offset);
				ok = true;
				break;
			}
		}
	}
	sys_close(fd);
	return ok;
}

static int module_index(const char *path, size_t len, uintptr_t base)
{
	struct module *m;
	int i;

	for (i = 0; i < nmodules; i++)
		if (modules[i].base == base && !strncmp(modules[i].path, path, len) &&
		    !modules[i].path[len])
			return i;
	if (nmodules == MAX_MODULES || len >= PATH_CAP)
		return -1;
	m = &modules[nmodules];
	memcpy(m->path, path, len);
	m->path[len] = '\0';
	m->base = base;
	m->elf_ok = elf_vaddr0(m->path, &m->vaddr0);
	return nmodules++;
}

/*
 * One line of /proc/self/maps: "lo-hi perms offset dev inode   path".
 * @base0/@base0_path: the last offset-0 mapping seen (a module's first).
 */
static void maps_line(const char *s, const uintptr_t *look, int n,
		      uintptr_t *base0, char *base0_path)
{
	const char *p = s, *path;
	uintptr_t lo, hi, off;
	size_t len;
	int i;

	lo = parse_hex(&p);
	if (*p++ != '-')
		return;
	hi = parse_hex(&p);
	if (*p++ != ' ')
		return;
	p += 5;				/* "r-xp " */
	off = parse_hex(&p);
	path = strchr(p, '/');
	if (!path)
		return;
	len = strlen(path);
	if (len > 10 && !strcmp(path + len - 10, " (deleted)"))
		return;			/* its file is gone: nothing to read */
	if (off == 0 && len < PATH_CAP) {
		*base0 = lo;
		memcpy(base0_path, path, len + 1);
	}
	for (i = 0; i < n; i++) {
		if (look[i] < lo || look[i] >= hi || places[i].module >= 0)
			continue;
		places[i].module = strcmp(base0_path, path) ? -1 :
				   module_index(path, len, *base0);
	}
}

/*
 * @pc in the module this thread's dlclose() unmapped: its file is read
 * as if still mapped, at the base where its file offset 0 was.
 */
static int unmapped_index(uintptr_t pc)
{
	uintptr_t vaddr0;

	if (!unmapped || pc < unmapped->lo || pc >= unmapped->hi ||
	    !elf_vaddr0(unmapped->path, &vaddr0))
		return -1;
	return module_index(unmapped->path, strlen(unmapped->path), unmapped->bias + vaddr0);
}

/* Fill places[] for @look[0..n): module and ELF address, or none. */
static void locate(const uintptr_t *look, int n)
{
	static char base0_path[PATH_CAP];
	uintptr_t base0 = 0;
	size_t have = 0;
	int fd, i;

	for (i = 0; i < n; i++)
		places[i].module = -1;
	base0_path[0] = '\0';
	fd = odebug_open_proc("maps");
	if (fd < 0)
		return;
	for (;;) {
		ssize_t got = syscall(SYS_read, fd, maps_buf, sizeof(maps_buf));
		ssize_t k;

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		for (k = 0; k < got; k++) {
			if (maps_buf[k] != '\n') {
				if (have < sizeof(line) - 1)
					line[have++] = maps_buf[k];
				continue;
			}
			line[have] = '\0';
			maps_line(line, look, n, &base0, base0_path);
			have = 0;
		}
	}
	sys_close(fd);
	for (i = 0; i < n; i++) {
		const struct module *m;

		if (places[i].module < 0)
			places[i].module = unmapped_index(look[i]);
		if (places[i].module < 0)
			continue;
		m = &modules[places[i].module];
		if (m->elf_ok)
			places[i].vaddr = look[i] - m->base + m->vaddr0;
		else
			places[i].module = -1;
	}
}

/* --- talking to the symboliser -------------------------------------- */

static void put_str(struct odebug_buf *b, const char *s, size_t n)
{
	while (n--)
		odebug_putc(b, *s++);
}

/* Is @name an executable file in one of PATH's directories? */
static bool find_in_path(const char *name, char *out, size_t cap)
{
	const char *path = odebug_getenv("PATH"), *p, *end;

	for (p = path ? path : "/usr/bin:/bin"; *p; p = *end ? end + 1 : end) {
		struct odebug_buf b;

		end = strchrnul(p, ':');
		odebug_buf_init_mem(&b, out, cap - 1);
		put_str(&b, p, (size_t)(end - p));
		odebug_putc(&b, '/');
		odebug_puts(&b, name);
		out[b.len] = '\0';
		if (b.len < cap - 1 && out[0] == '/' && !access(out, X_OK))
			return true;
	}
	return false;
}

/*
 * symbolizer=NAME or PATH: the program into @out.  A name without '/' is
 * looked up in PATH (as a shell would); a path must be an executable file.
 */
static bool option_program(const char *opt, char *out, size_t cap)
{
	struct stat st;

	if (!strchr(opt, '/'))
		return find_in_path(opt, out, cap);
	if (strlen(opt) >= cap || access(opt, X_OK) || stat(opt, &st) || !S_ISREG(st.st_mode))
		return false;
	strcpy(out, opt);
	return true;
}

/*
 * At start (the constructor, where access() and PATH may be used): a
 * symbolizer= the reports could not run is said now, in one line, rather
 * than found out from frames without names.
 */
void odebug_symbolize_check_option(void)
{
	const char *opt = odebug_opt_str.symbolizer;
	char path[ODEBUG_OPT_STRLEN], quoted[ODEBUG_QUOTE_PATH_LEN];

	if (!opt[0] || !strcmp(opt, "none") || option_program(opt, path, sizeof(path)))
		return;
	odebug_message("symbolizer=", odebug_quote_n(quoted, ODEBUG_QUOTE_PATH_KEEP, opt, strlen(opt)),
		       strchr(opt, '/') ? " is not an executable file" : " is not found in PATH",
		       "; frames will be named module+0xoffset only", (char *)NULL);
}

/* symbolizer=: "" finds llvm-symbolizer, then addr2line; "none"; or a program. */
static void choose(void)
{
	const char *opt = odebug_opt_str.symbolizer, *base;

	kind = SYM_NONE;
	if (!strcmp(opt, "none"))
		return;
	if (opt[0]) {
		base = strrchr(opt, '/');
		base = base ? base + 1 : opt;
		if (option_program(opt, sym_path, sizeof(sym_path)))
			kind = strstr(base, "addr2line") ? SYM_ADDR2LINE : SYM_LLVM;
		return;
	}
	if (find_in_path("llvm-symbolizer", sym_path, sizeof(sym_path)))
		kind = SYM_LLVM;
	else if (find_in_path("addr2line", sym_path, sizeof(sym_path)))
		kind = SYM_ADDR2LINE;
}

/* Answers: @count blocks, each ended by an empty line (llvm) or EOF. */
static bool blocks_done(const char *text, size_t len, void *ctx)
{
	int want = *(int *)ctx, seen = 0;
	size_t i;

	for (i = 1; i < len; i++)
		if (text[i] == '\n' && text[i - 1] == '\n')
			seen++;
	return seen >= want;
}

static bool eof_done(const char *text, size_t len, void *ctx)
{
	(void)text;
	(void)len;
	(void)ctx;
	return false;		/* only EOF ends an addr2line answer */
}

/* Next line of @text (cut at '\n'); NULL at the end. */
static char *next_line(char **text, char *end)
{
	char *s = *text, *nl;

	if (s >= end)
		return NULL;
	nl = memchr(s, '\n', (size_t)(end - s));
	if (!nl)
		nl = end;
	*nl = '\0';
	*text = nl + 1;
	return s;
}

static bool starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* Frames out, in order; inlined frames before the one they sit in. */
struct sink {
	struct odebug_frame *out;
	int n, max;
};

static struct odebug_frame *add_frame(struct sink *k, uintptr_t pc, const struct place *pl)
{
	struct odebug_frame *f;

	if (k->n == k->max)
		return NULL;
	f = &k->out[k->n++];
	memset(f, 0, sizeof(*f));
	f->pc = pc;
	f->func = "";
	f->file = "";
	if (pl && pl->module >= 0) {
		f->module = modules[pl->module].path;
		f->module_off = pc - modules[pl->module].base;
	}
	return f;
}

/* "name" or "??": the function; "file:line[:col]" or "??:0". */
static void set_func(struct odebug_frame *f, const char *name)
{
	if (strcmp(name, "??"))
		f->func = keep(name, strlen(name));
}

static void set_file_line(struct odebug_frame *f, const char *file, const char *lineno)
{
	unsigned int v = 0;

	while (*lineno >= '0' && *lineno <= '9')
		v = v * 10 + (unsigned int)(*lineno++ - '0');
	if (v && strcmp(file, "??")) {
		f->file = keep(file, strlen(file));
		f->line = v;
	}
}

/*
 * llvm-symbolizer --verbose, one block per address:
 *	NAME
 *	  Filename: FILE
 *	  Function start address: 0x...	(when known)
 *	  Line: N
 *	(more NAME entries: the callers an inlined call sits in)
 *	<empty line>
 * The last entry of a block is the function the code really lives in.
 */
static void parse_llvm(char *text, size_t len, const uintptr_t *pcs,
		       const uintptr_t *look, int n, struct sink *k)
{
	char *end = text + len, *s;
	int i = 0, first = k->n;
	struct odebug_frame *f = NULL;
	uintptr_t start = 0;
	bool has_start = false;

	while (i < n && (s = next_line(&text, end))) {
		while (i < n && places[i].module < 0) {	/* not asked */
			add_frame(k, pcs[i], NULL);
			i++, first = k->n;
		}
		if (i == n)
			break;
		if (!*s) {			/* the block's end */
			if (f && k->n > first) {
				int j;

				for (j = first; j < k->n - 1; j++)
					k->out[j].inlined = true;
				if (has_start && f->func[0]) {
					f->func_off = look[i] - modules[places[i].module].base +
						      modules[places[i].module].vaddr0 - start +
						      (pcs[i] - look[i]);
					f->has_off = true;
				}
			} else {
				add_frame(k, pcs[i], &places[i]);
			}
			f = NULL;
			has_start = false;
			i++;
			first = k->n;
			continue;
		}
		if (s[0] != ' ') {		/* a function entry */
			f = add_frame(k, pcs[i], &places[i]);
			if (f)
				set_func(f, s);
			has_start = false;
		} else if (f && starts(s, "  Filename: ")) {
			f->file = s + 12;	/* until "Line:" comes */
		} else if (f && starts(s, "  Function start address: 0x")) {
			const char *p = s + 28;

			start = parse_hex(&p);
			has_start = true;
		} else if (f && starts(s, "  Line: ")) {
			const char *file = f->file;

			f->file = "";
			set_file_line(f, file, s + 8);
		}
	}
	for (; i < n; i++)
		add_frame(k, pcs[i], places[i].module >= 0 ? &places[i] : NULL);
	for (i = 0; i < k->n; i++)	/* a Filename: left without a Line: */
		if (k->out[i].file >= io && k->out[i].file < io + sizeof(io))
			k->out[i].file = "";
}

static bool llvm_ready(void)
{
	static char *argv[] = { "llvm-symbolizer", "--inlines", "--verbose",
				"--no-demangle", NULL };

	if (odebug_helper_alive(&llvm))
		return true;
	return odebug_helper_start(&llvm, sym_path, argv);
}

static bool ask_llvm(const uintptr_t *pcs, const uintptr_t *look, int n, struct sink *k)
{
	struct odebug_buf b;
	size_t req_len, len;
	int asked = 0, i;

	odebug_buf_init_mem(&b, io, sizeof(io));
	for (i = 0; i < n; i++) {
		if (places[i].module < 0)
			continue;
		odebug_putc(&b, '"');
		odebug_puts(&b, modules[places[i].module].path);
		odebug_puts(&b, "\" ");
		odebug_put_hex(&b, places[i].vaddr);
		odebug_putc(&b, '\n');
		asked++;
	}
	if (!asked || b.len == b.cap || !llvm_ready())
		return false;
	req_len = b.len;
	/* The request is copied out before the answer overwrites io. */
	if (!odebug_helper_talk(&llvm, io, req_len, io + req_len, sizeof(io) - req_len,
				&len, blocks_done, &asked, LLVM_TIMEOUT_MS, false)) {
		if (llvm.timed_out)
			kind = SYM_NONE;	/* one timeout per process */
		odebug_helper_stop(&llvm);	/* dead: fresh next time */
		return false;
	}
	parse_llvm(io + req_len, len, pcs, look, n, k);
	return true;
}

/*
 * addr2line -a -f -i -e MODULE, fed every address of one module; answers
 * "0xADDR" then NAME and FILE:LINE pairs (the inlined ones first).  It
 * gives no function start, so these frames have no +offset.  The pairs of
 * one address land together in @t; first[]/count[] say where.
 */
static void ask_addr2line_module(int mod, const uintptr_t *pcs, int n,
				 struct sink *t, int *first, int *count)
{
	static char *argv[] = { "addr2line", "-a", "-f", "-i", "-e", NULL, NULL };
	struct odebug_helper h;
	struct odebug_buf b;
	char *text, *end, *s, *name = NULL;
	size_t len = 0;
	int i = -1, j;

	argv[5] = modules[mod].path;
	odebug_buf_init_mem(&b, io, sizeof(io) / 2);
	for (j = 0; j < n; j++) {
		if (places[j].module != mod)
			continue;
		odebug_put_hex(&b, places[j].vaddr);
		odebug_putc(&b, '\n');
	}
	if (b.len == b.cap || !odebug_helper_start(&h, sym_path, argv))
		return;
	/* Only EOF ends its answer: whatever came by then is used. */
	odebug_helper_talk(&h, io, b.len, io + b.len, sizeof(io) - b.len, &len,
			   eof_done, NULL, A2L_TIMEOUT_MS, true);
	if (h.timed_out)
		kind = SYM_NONE;	/* one timeout per process */
	odebug_helper_stop(&h);
	text = io + b.len;
	end = text + len;
	j = -1;
	while ((s = next_line(&text, end))) {
		struct odebug_frame *f;
		char *colon;

		if (starts(s, "0x")) {	/* the next address asked */
			for (j++; j < n && places[j].module != mod; j++)
				;
			i = j < n ? j : -1;
			name = NULL;
			continue;
		}
		if (i < 0)
			continue;
		if (!name) {
			name = s;
			continue;
		}
		f = add_frame(t, pcs[i], &places[i]);
		if (f) {
			if (first[i] < 0)
				first[i] = t->n - 1;
			count[i]++;
			set_func(f, name);
			colon = strrchr(s, ':');
			if (colon) {
				*colon = '\0';
				set_file_line(f, s, colon + 1);
			}
		}
		name = NULL;
	}
}

/* addr2line answers per module; the frames are put back in stack order. */
static bool ask_addr2line(const uintptr_t *pcs, int n, struct sink *k)
{
	static ODEBUG_LARGE struct odebug_frame tmp[2 * ODEBUG_MAX_FRAMES];
	static int first[ODEBUG_MAX_FRAMES + 1], count[ODEBUG_MAX_FRAMES + 1];
	struct sink t = { tmp, 0, 2 * ODEBUG_MAX_FRAMES };
	int mod, i, j;

	for (i = 0; i < n; i++) {
		first[i] = -1;
		count[i] = 0;
	}
	for (mod = 0; mod < nmodules && kind == SYM_ADDR2LINE; mod++)
		ask_addr2line_module(mod, pcs, n, &t, first, count);
	for (i = 0; i < n; i++) {
		if (first[i] < 0) {
			add_frame(k, pcs[i], places[i].module >= 0 ? &places[i] : NULL);
			continue;
		}
		for (j = 0; j < count[i] && k->n < k->max; j++) {
			k->out[k->n] = tmp[first[i] + j];
			k->out[k->n++].inlined = j < count[i] - 1;
		}
	}
	return true;
}

/*
 * odebug.h's inline wrappers (the test of __debug_objects_on) are not the
 * culprit: an inlined frame of theirs is dropped, leaving the caller's.
 */
static int drop_header_frames(struct odebug_frame *out, int n)
{
	int i, j = 0;

	for (i = 0; i < n; i++) {
		const char *file = out[i].file;
		size_t len = file ? strlen(file) : 0;

		if (out[i].inlined && out[i].func && !strncmp(out[i].func, "debug_", 6) &&
		    len >= 8 && !strcmp(file + len - 8, "odebug.h") &&
		    (len == 8 || file[len - 9] == '/'))
			continue;
		out[j++] = out[i];
	}
	return j;
}

/**
 * odebug_symbolize - name a stack
 * @pcs:	the addresses, innermost first
 * @n:		how many (at most ODEBUG_MAX_FRAMES + 1)
 * @is_return:	@pcs are return addresses: name the call before each
 * @out, @max:	the frames; an address with inlined calls gives several
 *
 * Returns the number of frames written.  Under the report lock.
 */
int odebug_symbolize(const uintptr_t *pcs, int n, bool is_return,
		     struct odebug_frame *out, int max)
{
	static uintptr_t look[ODEBUG_MAX_FRAMES + 1];
	struct sink k = { out, 0, max };
	bool named = false;
	int i;

	if (n > ODEBUG_MAX_FRAMES + 1)
		n = ODEBUG_MAX_FRAMES + 1;
	for (i = 0; i < n; i++)
		look[i] = is_return && pcs[i] ? pcs[i] - 1 : pcs[i];
	odebug_guard_enter();
	locate(look, n);
	if (kind == SYM_UNTRIED)
		choose();
	if (kind != SYM_NONE && !sandbox_checked) {
		sandbox_checked = true;		/* once a report */
		if (odebug_helper_sandboxed())
			kind = SYM_NONE;	/* for good: see helper.c */
	}
	if (kind == SYM_LLVM)
		named = ask_llvm(pcs, look, n, &k);
	else if (kind == SYM_ADDR2LINE)
		named = ask_addr2line(pcs, n, &k);
	if (!named) {
		k.n = 0;
		for (i = 0; i < n; i++)
			add_frame(&k, pcs[i], places[i].module >= 0 ? &places[i] : NULL);
	}
	odebug_guard_exit();
	return drop_header_frames(out, k.n);
}

/* A forked child: the parent's symboliser is not ours to use. */
void odebug_symbolize_child(void)
{
	/* Written only if one ran: a write would copy the page in each child. */
	if (llvm.fd < 0 && !llvm.pid)
		return;
	if (llvm.fd >= 0)
		sys_close(llvm.fd);
	llvm.fd = -1;
	llvm.pid = 0;
}
