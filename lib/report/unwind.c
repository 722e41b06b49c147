/* SPDX-License-Identifier: MIT */
/*
 * unwind.c - the caller's return addresses from the call-frame
 * information every object carries (.eh_frame, found through
 * .eh_frame_hdr), on x86-64, with nothing loaded: no libunwind, so that a
 * process that never reports never pays for loading one (BENCHMARKS.md,
 * "Start and the launcher").
 *
 * Safe where a report is: no allocation, no lock but the one
 * dl_iterate_phdr() takes (as libunwind's), a little over 2 KiB of stack.
 * The stack's words are read directly between the stack pointer at the
 * capture and this thread's stack top as learned (lib/table/stack.c), which are
 * mapped; anywhere else (an alternate signal stack, a thread whose stack
 * is not known, a frame pointer that is garbage) a page is first read
 * with odebug_read_mem(), which fails instead of faulting.
 *
 * Each frame runs its FDE's instructions up to the address; the rule
 * found, when it is the common kind (the CFA at rsp or rbp plus an
 * offset, the return address just below it, rbp kept or saved beside
 * it), is kept in a table keyed by the address, so that a stack seen
 * before unwinds in a few dozen instructions a frame, as libunwind's
 * cache does.  The table forgets every rule when a module is unloaded
 * (odebug_unwind_forget(), from dlclose()).  A frame with no call-frame
 * information (code in another link namespace, hand-written assembly)
 * is stepped by its frame pointer, as libunwind does.
 */
#define _GNU_SOURCE
#include <link.h>
#include <string.h>

#include "unwind-cfi.h"

#if defined(__x86_64__) && !ODEBUG_TSAN

struct regs {
	uintptr_t r[NREGS];
};

/*
 * The caller's callee-saved registers, its stack pointer and its address
 * as they are once this call returns: where the walk starts.
 */
void odebug_unwind_regs(struct regs *out);
__asm__(".text\n"
	".p2align 4\n"
	".globl odebug_unwind_regs\n"
	".hidden odebug_unwind_regs\n"
	".type odebug_unwind_regs, @function\n"
	"odebug_unwind_regs:\n"
	".cfi_startproc\n"
	"	movq %rbx, 24(%rdi)\n"
	"	movq %rbp, 48(%rdi)\n"
	"	leaq 8(%rsp), %rax\n"
	"	movq %rax, 56(%rdi)\n"
	"	movq %r12, 96(%rdi)\n"
	"	movq %r13, 104(%rdi)\n"
	"	movq %r14, 112(%rdi)\n"
	"	movq %r15, 120(%rdi)\n"
	"	movq (%rsp), %rax\n"
	"	movq %rax, 128(%rdi)\n"
	"	ret\n"
	".cfi_endproc\n"
	".size odebug_unwind_regs, .-odebug_unwind_regs\n");

/* --- reading the stack ----------------------------------------------- */

#define PAGE_MASK	(~(uintptr_t)4095)
#define KNOWN_PAGES	4

struct mem {
	uintptr_t lo, last;		/* a word at [lo, last] is mapped: read directly */
	uintptr_t page[KNOWN_PAGES];	/* pages read once without a fault */
	unsigned int next;
};

static __attribute__((noinline)) bool read_checked(struct mem *m, uintptr_t addr, uintptr_t *out)
{
	unsigned int i;

	if ((addr & ~PAGE_MASK) <= 4096 - sizeof(*out))
		for (i = 0; i < KNOWN_PAGES; i++)
			if (m->page[i] && m->page[i] == (addr & PAGE_MASK)) {
				memcpy(out, (const void *)addr, sizeof(*out));
				return true;
			}
	if (odebug_read_mem(out, (const void *)addr, sizeof(*out)) != sizeof(*out))
		return false;
	if ((addr & ~PAGE_MASK) <= 4096 - sizeof(*out)) {
		m->page[m->next] = addr & PAGE_MASK;
		m->next = (m->next + 1) % KNOWN_PAGES;
	}
	return true;
}

static inline bool read_word(struct mem *m, uintptr_t addr, uintptr_t *out)
{
	if (likely(addr >= m->lo && addr <= m->last)) {
		memcpy(out, (const void *)addr, sizeof(*out));
		return true;
	}
	return read_checked(m, addr, out);
}

/* --- finding the FDE ----------------------------------------------------- */

struct module {
	uintptr_t lo, hi;		/* its executable segment */
	const uint8_t *hdr;		/* .eh_frame_hdr, NULL: none */
};

struct find {
	uintptr_t pc;
	struct module *m;
	bool found;
};

static int find_module(struct dl_phdr_info *info, size_t size, void *data)
{
	struct find *f = data;
	const uint8_t *hdr = NULL;
	uintptr_t lo = 0, hi = 0;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) &&
		    f->pc >= start && f->pc - start < ph->p_memsz) {
			lo = start;
			hi = start + ph->p_memsz;
		} else if (ph->p_type == PT_GNU_EH_FRAME) {
			hdr = (const uint8_t *)start;
		}
	}
	if (!hi)
		return 0;
	f->m->lo = lo;
	f->m->hi = hi;
	f->m->hdr = hdr;
	f->found = true;
	return 1;
}

#define MODULES	4

struct walk {
	struct mem mem;
	struct module mod[MODULES];
	unsigned int nmod;
};

static const struct module *module_of(struct walk *w, uintptr_t pc)
{
	struct module *m;
	struct find f;
	unsigned int i;

	for (i = 0; i < w->nmod && i < MODULES; i++)
		if (pc >= w->mod[i].lo && pc < w->mod[i].hi)
			return &w->mod[i];
	m = &w->mod[w->nmod++ % MODULES];
	f = (struct find){ pc, m, false };
	dl_iterate_phdr(find_module, &f);
	if (!f.found) {
		w->nmod--;
		return NULL;
	}
	return m;
}

/* The FDE that covers @pc in @m's sorted table: its body and address range. */
static const uint8_t *find_fde(const struct module *m, uintptr_t pc)
{
	const uint8_t *hdr = m->hdr;
	const int32_t *table;
	struct cur c = { hdr + 4, hdr + 64, false };
	uintptr_t count;
	size_t lo = 0, hi;

	/* Version 1, the usual table encoding: 4-byte offsets from the header. */
	if (!hdr || hdr[0] != 1 || hdr[3] != (PE_DATAREL | PE_SDATA4) || hdr[2] == PE_OMIT)
		return NULL;
	odebug_cfi_encoded(&c, hdr[1], (uintptr_t)hdr);
	count = odebug_cfi_encoded(&c, hdr[2], (uintptr_t)hdr);
	if (c.bad || !count)
		return NULL;
	table = (const int32_t *)c.p;
	if ((uintptr_t)hdr + table[0] > pc)
		return NULL;
	hi = count;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if ((uintptr_t)hdr + table[2 * mid] <= pc)
			lo = mid;
		else
			hi = mid;
	}
	return hdr + table[2 * lo + 1];
}

/*
 * The rules at @pc: false when no FDE covers it.  @signal: the CIE marks
 * a signal frame (the next frame's address is where it was interrupted,
 * not a return address).
 */
static bool rules_at(struct walk *w, uintptr_t pc, struct rules *r, bool *signal)
{
	const struct module *m = module_of(w, pc);
	const uint8_t *fde = m ? find_fde(m, pc) : NULL;
	struct rules init;
	struct cie cie;
	struct cur c;
	uintptr_t start, range;
	uint32_t cie_off;

	if (!fde || !odebug_cfi_entry(fde, &c))
		return false;
	cie_off = (uint32_t)odebug_cfi_get_n(&c, 4);
	if (!cie_off || !odebug_cfi_parse_cie(c.p - 4 - cie_off, &cie))
		return false;
	start = odebug_cfi_encoded(&c, cie.fde_enc, 0);
	range = odebug_cfi_encoded(&c, cie.fde_enc & 0x0f, 0);
	if (cie.aug_z)
		c.p += odebug_cfi_uleb(&c);
	if (c.bad || c.p > c.end || pc < start || pc - start >= range)
		return false;
	memset(r, 0, sizeof(*r));
	if (!odebug_cfi_run(cie.insns, &cie, start, pc, r, NULL))
		return false;
	init = *r;
	if (!odebug_cfi_run(c, &cie, start, pc, r, &init))
		return false;
	*signal = cie.signal;
	return true;
}

/* --- DWARF expressions (the PLT's CFA, a signal frame's registers) --------- */

#define EXPR_STACK	16

static bool eval(struct walk *w, const struct regs *regs, int64_t at, uintptr_t push,
		 bool pushed, uintptr_t *out)
{
	uintptr_t st[EXPR_STACK], a, b;
	unsigned int sp = 0, steps = 0;
	struct cur c = { (const uint8_t *)(uintptr_t)at, (const uint8_t *)(uintptr_t)at + 16, false };
	uint64_t len = odebug_cfi_uleb(&c);

	if (len > 4096)
		return false;
	c.end = c.p + len;
	if (pushed)
		st[sp++] = push;
	while (c.p < c.end && !c.bad && steps++ < 256) {
		uint8_t op = *c.p++;

		if (op >= 0x30 && op <= 0x4f) {			/* lit0..31 */
			if (sp == EXPR_STACK)
				return false;
			st[sp++] = op - 0x30u;
			continue;
		}
		if (op >= 0x70 && op <= 0x8f) {			/* breg0..31 */
			if (sp == EXPR_STACK || op - 0x70u >= NREGS)
				return false;
			st[sp++] = regs->r[op - 0x70] + (uintptr_t)odebug_cfi_sleb(&c);
			continue;
		}
		switch (op) {
		case 0x06:	/* deref */
			if (!sp || !read_word(&w->mem, st[sp - 1], &st[sp - 1]))
				return false;
			continue;
		case 0x08: case 0x0a: case 0x0c: case 0x0e:	/* const1u..const8u */
			if (sp == EXPR_STACK)
				return false;
			st[sp++] = (uintptr_t)odebug_cfi_get_n(&c, (size_t)1 << ((op - 0x08) / 2));
			continue;
		case 0x09: a = (uintptr_t)(int64_t)(int8_t)odebug_cfi_get_n(&c, 1); goto push;
		case 0x0b: a = (uintptr_t)(int64_t)(int16_t)odebug_cfi_get_n(&c, 2); goto push;
		case 0x0d: a = (uintptr_t)(int64_t)(int32_t)odebug_cfi_get_n(&c, 4); goto push;
		case 0x0f: a = (uintptr_t)odebug_cfi_get_n(&c, 8); goto push;
		case 0x10: a = (uintptr_t)odebug_cfi_uleb(&c); goto push;
		case 0x11: a = (uintptr_t)odebug_cfi_sleb(&c); goto push;
		case 0x12: if (!sp) return false; a = st[sp - 1]; goto push;	/* dup */
		case 0x13: if (!sp) return false; sp--; continue;		/* drop */
		case 0x23:	/* plus_uconst */
			if (!sp)
				return false;
			st[sp - 1] += (uintptr_t)odebug_cfi_uleb(&c);
			continue;
		case 0x92:	/* bregx */
			a = (uintptr_t)odebug_cfi_uleb(&c);
			if (a >= NREGS)
				return false;
			a = regs->r[a] + (uintptr_t)odebug_cfi_sleb(&c);
			goto push;
		case 0x96:	/* nop */
			continue;
		}
		/* Binary operators. */
		if (sp < 2)
			return false;
		b = st[--sp];
		a = st[--sp];
		switch (op) {
		case 0x1a: a &= b; break;
		case 0x1c: a -= b; break;
		case 0x1e: a *= b; break;
		case 0x21: a |= b; break;
		case 0x22: a += b; break;
		case 0x24: a = b < 64 ? a << b : 0; break;
		case 0x25: a = b < 64 ? a >> b : 0; break;
		case 0x27: a ^= b; break;
		case 0x29: a = a == b; break;
		case 0x2a: a = (intptr_t)a >= (intptr_t)b; break;
		case 0x2b: a = (intptr_t)a > (intptr_t)b; break;
		case 0x2c: a = (intptr_t)a <= (intptr_t)b; break;
		case 0x2d: a = (intptr_t)a < (intptr_t)b; break;
		case 0x2e: a = a != b; break;
		default: return false;
		}
push:
		if (sp == EXPR_STACK)
			return false;
		st[sp++] = a;
	}
	if (c.bad || !sp)
		return false;
	*out = st[sp - 1];
	return true;
}

/* --- one step ------------------------------------------------------------ */

/* Apply @r to @regs: the caller's registers.  False at the stack's end. */
static bool apply(struct walk *w, const struct rules *r, struct regs *regs)
{
	struct regs old = *regs;
	uintptr_t cfa, v;
	int i;

	if (r->cfa_expr) {
		if (!eval(w, &old, r->cfa_off, 0, false, &cfa))
			return false;
	} else {
		cfa = old.r[r->cfa_reg] + (uintptr_t)r->cfa_off;
	}
	if (r->how[R_RA] == UNDEF || r->how[R_RA] == UNSET)
		return false;		/* the outermost frame (_start, a thread's start) */
	for (i = 0; i < NREGS; i++) {
		switch (r->how[i]) {
		case OFFSET:
			if (!read_word(&w->mem, cfa + (uintptr_t)r->val[i], &regs->r[i]))
				return false;
			break;
		case VAL_OFFSET:
			regs->r[i] = cfa + (uintptr_t)r->val[i];
			break;
		case REG:
			if ((uint64_t)r->val[i] >= NREGS)
				return false;
			regs->r[i] = old.r[r->val[i]];
			break;
		case EXPR:
			if (!eval(w, &old, r->val[i], cfa, true, &v) ||
			    !read_word(&w->mem, v, &regs->r[i]))
				return false;
			break;
		case VAL_EXPR:
			if (!eval(w, &old, r->val[i], cfa, true, &regs->r[i]))
				return false;
			break;
		}
	}
	if (r->how[R_RSP] == UNSET || r->how[R_RSP] == SAME)
		regs->r[R_RSP] = cfa;
	return true;
}

/* Without call-frame information: the frame pointer's chain, if it looks like one. */
static bool frame_pointer_step(struct walk *w, struct regs *regs)
{
	uintptr_t fp = regs->r[R_RBP], up, ra;

	if (!fp || (fp & 7) || fp < regs->r[R_RSP] ||
	    !read_word(&w->mem, fp, &up) || !read_word(&w->mem, fp + 8, &ra))
		return false;
	regs->r[R_RBP] = up;
	regs->r[R_RSP] = fp + 16;
	regs->r[R_RA] = ra;
	return true;
}

/* --- the rules kept ------------------------------------------------------ */

/*
 * A rule of the common kind, in one word: the CFA's offset (bits 0-31)
 * from rsp or rbp (bit 32), rbp's slot from the CFA (bits 33-48, with bit
 * 49 set when saved), or the stack's end (bit 50: the return address is
 * undefined, as in _start), and the table's epoch (bits 51-63), so that
 * a rule kept before a module was unloaded is never used after.
 */
#define KEPT		1024		/* a power of two: 16 KiB */
#define K_RBP		(1ull << 32)
#define K_SAVED		(1ull << 49)
#define K_END		(1ull << 50)
#define K_EPOCH_SHIFT	51

static ODEBUG_LARGE struct kept {
	uintptr_t pc;
	uint64_t rule;
} kept[KEPT];
static unsigned int epoch;

void odebug_unwind_forget(void)
{
	__atomic_fetch_add(&epoch, 1, __ATOMIC_RELEASE);
}

static size_t slot_of(uintptr_t pc)
{
	return (size_t)((pc * 0x9e3779b97f4a7c15ull) >> 54) & (KEPT - 1);
}

static uint64_t epoch_bits(void)
{
	return (uint64_t)(__atomic_load_n(&epoch, __ATOMIC_ACQUIRE) & 0x1fff) << K_EPOCH_SHIFT;
}

/* The rule kept for @pc, 0 if none.  The address read again after the rule: a writer marks it first. */
static uint64_t kept_rule(uintptr_t pc)
{
	struct kept *k = &kept[slot_of(pc)];
	uint64_t rule;

	if (__atomic_load_n(&k->pc, __ATOMIC_ACQUIRE) != pc)
		return 0;
	rule = __atomic_load_n(&k->rule, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (__atomic_load_n(&k->pc, __ATOMIC_RELAXED) != pc ||
	    (rule >> K_EPOCH_SHIFT) != epoch_bits() >> K_EPOCH_SHIFT)
		return 0;
	return rule;
}

static void keep(uintptr_t pc, const struct rules *r)
{
	struct kept *k = &kept[slot_of(pc)];
	uintptr_t old;
	uint64_t rule;
	int i;

	if (r->how[R_RA] == UNDEF || r->how[R_RA] == UNSET) {
		rule = K_END | epoch_bits();
		goto store;
	}
	if (r->cfa_expr || (r->cfa_reg != R_RSP && r->cfa_reg != R_RBP) ||
	    r->cfa_off != (int32_t)r->cfa_off || r->how[R_RA] != OFFSET || r->val[R_RA] != -8 ||
	    (r->how[R_RSP] != UNSET && r->how[R_RSP] != SAME))
		return;
	rule = (uint32_t)r->cfa_off | (r->cfa_reg == R_RBP ? K_RBP : 0) | epoch_bits();
	if (r->how[R_RBP] == OFFSET) {
		if (r->val[R_RBP] != (int16_t)r->val[R_RBP])
			return;
		rule |= K_SAVED | (uint64_t)(uint16_t)r->val[R_RBP] << 33;
	} else if (r->how[R_RBP] != UNSET && r->how[R_RBP] != SAME) {
		return;
	}
	/* Only rsp, rbp and the address move on a kept step: the others must not matter. */
	for (i = 0; i < NREGS; i++)
		if (r->how[i] == REG || r->how[i] == EXPR || r->how[i] == VAL_EXPR ||
		    r->how[i] == VAL_OFFSET)
			return;
store:
	/* One writer a slot (1 marks it taken); a reader that meets one misses. */
	old = __atomic_load_n(&k->pc, __ATOMIC_RELAXED);
	if (old == 1 || !__atomic_compare_exchange_n(&k->pc, &old, 1, false,
						     __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return;
	__atomic_store_n(&k->rule, rule, __ATOMIC_RELAXED);
	__atomic_store_n(&k->pc, pc, __ATOMIC_RELEASE);
}

static bool kept_step(struct walk *w, uint64_t rule, struct regs *regs)
{
	uintptr_t cfa;

	if (rule & K_END)
		return false;
	cfa = regs->r[rule & K_RBP ? R_RBP : R_RSP] + (uintptr_t)(int64_t)(int32_t)rule;
	if (!read_word(&w->mem, cfa - 8, &regs->r[R_RA]))
		return false;
	if ((rule & K_SAVED) &&
	    !read_word(&w->mem, cfa + (uintptr_t)(int64_t)(int16_t)(rule >> 33), &regs->r[R_RBP]))
		return false;
	regs->r[R_RSP] = cfa;
	return true;
}

/* --- the walk ------------------------------------------------------------ */

/*
 * From @regs to the caller's registers.  @exact: the address is where the
 * frame was interrupted (a signal), else a return address, looked up one
 * byte back, in its call.  *@exact is set for the next frame.
 */
static bool step(struct walk *w, struct regs *regs, bool *exact)
{
	uintptr_t pc = regs->r[R_RA] - (*exact ? 0 : 1), sp = regs->r[R_RSP];
	uint64_t rule = kept_rule(pc);
	struct rules r;
	bool signal = false;

	if (rule) {
		if (!kept_step(w, rule, regs))
			return false;
	} else if (rules_at(w, pc, &r, &signal)) {
		if (!signal)
			keep(pc, &r);
		if (!apply(w, &r, regs))
			return false;
	} else if (!frame_pointer_step(w, regs)) {
		return false;
	}
	*exact = signal;
	/* Each frame is above the one it called, but where a signal switched stacks. */
	return regs->r[R_RA] && (signal || regs->r[R_RSP] > sp);
}

/*
 * Where the stack can be read without a check: from the caller's stack
 * pointer to the top of this thread's stack, when it is on it.
 */
static void mem_init(struct mem *m, uintptr_t sp)
{
	uintptr_t top = odebug_stack_top();

	memset(m, 0, sizeof(*m));
	m->lo = 1;			/* none */
	if (top > sizeof(uintptr_t) && sp >= odebug_tls.stack_lo && sp <= top - sizeof(uintptr_t)) {
		m->lo = sp;
		m->last = top - sizeof(uintptr_t);
	}
}

/**
 * odebug_unwind - capture up to @max return addresses, innermost first
 *
 * The first is our caller's own address (in odebug_backtrace()), as
 * unw_backtrace() gives it.
 */
__attribute__((noinline)) int odebug_unwind(void **pcs, int max)
{
	struct walk w;
	struct regs regs;
	bool exact = false;
	int n = 0;

	memset(&regs, 0, sizeof(regs));
	odebug_unwind_regs(&regs);
	mem_init(&w.mem, regs.r[R_RSP]);
	w.nmod = 0;
	/* The first step leaves this frame. */
	while (n < max && step(&w, &regs, &exact))
		pcs[n++] = (void *)regs.r[R_RA];
	return n;
}

#else

/* Not built here: backtrace.c uses libunwind (or glibc's backtrace()). */
int odebug_unwind(void **pcs, int max)
{
	(void)pcs;
	(void)max;
	return 0;
}

void odebug_unwind_forget(void)
{
}

#endif
