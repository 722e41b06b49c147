/* SPDX-License-Identifier: MIT */
/*
 * unwind-cfi.c - reading .eh_frame for unwind.c: its encoded numbers, a
 * CIE, and an FDE's instructions run up to an address into the rules
 * that leave a frame.  Reads only the bytes of one entry (every read
 * stays before its end); no allocation, no lock.
 */
#include <string.h>

#include "unwind-cfi.h"

#if defined(__x86_64__) && !ODEBUG_TSAN

uint64_t odebug_cfi_get_n(struct cur *c, size_t n)
{
	uint64_t v = 0;

	if ((size_t)(c->end - c->p) < n) {
		c->bad = true;
		c->p = c->end;
		return 0;
	}
	memcpy(&v, c->p, n);	/* little-endian */
	c->p += n;
	return v;
}

/* A LEB128 number; @sign: sign-extended from its last byte's bit 6. */
static uint64_t get_leb(struct cur *c, bool sign)
{
	uint64_t v = 0;
	unsigned int shift = 0;
	uint8_t b;

	do {
		if (c->p >= c->end) {
			c->bad = true;
			return 0;
		}
		b = *c->p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (sign && shift < 64 && (b & 0x40))
		v |= ~(uint64_t)0 << shift;
	return v;
}

uint64_t odebug_cfi_uleb(struct cur *c)
{
	return get_leb(c, false);
}

int64_t odebug_cfi_sleb(struct cur *c)
{
	return (int64_t)get_leb(c, true);
}

/* A pointer encoded as @enc says (pc-relative or absolute; datarel from @data). */
uintptr_t odebug_cfi_encoded(struct cur *c, uint8_t enc, uintptr_t data)
{
	uintptr_t base = 0, at = (uintptr_t)c->p;
	uint64_t v;

	if (enc == PE_OMIT)
		return 0;
	switch (enc & 0x0f) {
	case PE_ABSPTR:
	case PE_UDATA8:
	case PE_SDATA8:		v = odebug_cfi_get_n(c, 8); break;
	case PE_ULEB128:	v = odebug_cfi_uleb(c); break;
	case PE_UDATA2:		v = odebug_cfi_get_n(c, 2); break;
	case PE_UDATA4:		v = odebug_cfi_get_n(c, 4); break;
	case PE_SLEB128:	v = (uint64_t)odebug_cfi_sleb(c); break;
	case PE_SDATA2:		v = (uint64_t)(int64_t)(int16_t)odebug_cfi_get_n(c, 2); break;
	case PE_SDATA4:		v = (uint64_t)(int64_t)(int32_t)odebug_cfi_get_n(c, 4); break;
	default:		c->bad = true; return 0;
	}
	switch (enc & 0x70) {
	case 0:			break;
	case PE_PCREL:		base = at; break;
	case PE_DATAREL:	base = data; break;
	default:		c->bad = true; return 0;	/* text- and function-relative: not in .eh_frame */
	}
	/* Indirect pointers (personality routines) are skipped, never followed. */
	return (uintptr_t)v + base;
}

/* --- the call-frame information of one address ------------------------- */

/* The entry at @p: its body as a cursor; false for a terminator or garbage. */
bool odebug_cfi_entry(const uint8_t *p, struct cur *c)
{
	uint32_t len;

	memcpy(&len, p, 4);
	if (len == 0 || len == 0xffffffffu)	/* the end; 64-bit lengths: not in practice */
		return false;
	c->p = p + 4;
	c->end = p + 4 + len;
	c->bad = false;
	return true;
}

bool odebug_cfi_parse_cie(const uint8_t *p, struct cie *cie)
{
	const char *aug;
	struct cur c;
	uint8_t version;

	if (!odebug_cfi_entry(p, &c) || odebug_cfi_get_n(&c, 4) != 0)
		return false;
	version = (uint8_t)odebug_cfi_get_n(&c, 1);
	aug = (const char *)c.p;
	while (c.p < c.end && *c.p)
		c.p++;
	if (c.p++ >= c.end || (version != 1 && version != 3))
		return false;	/* an augmentation string that does not end in the entry */
	cie->code_align = odebug_cfi_uleb(&c);
	cie->data_align = odebug_cfi_sleb(&c);
	cie->ra = version == 1 ? (unsigned int)odebug_cfi_get_n(&c, 1) : (unsigned int)odebug_cfi_uleb(&c);
	cie->fde_enc = PE_ABSPTR;
	cie->aug_z = aug[0] == 'z';
	cie->signal = false;
	if (cie->aug_z) {
		uint64_t n = odebug_cfi_uleb(&c);
		const uint8_t *end = c.p + n;

		for (aug++; *aug && !c.bad && c.p < c.end; aug++) {
			if (*aug == 'R') {
				cie->fde_enc = (uint8_t)odebug_cfi_get_n(&c, 1);
			} else if (*aug == 'P') {
				uint8_t enc = (uint8_t)odebug_cfi_get_n(&c, 1);

				odebug_cfi_encoded(&c, enc & ~PE_INDIRECT, 0);
			} else if (*aug == 'L') {
				odebug_cfi_get_n(&c, 1);
			} else if (*aug == 'S') {
				cie->signal = true;
			} else if (*aug != 'B' && *aug != 'G') {
				break;	/* unknown: the length says where the rest starts */
			}
		}
		c.p = end;
	} else if (aug[0]) {
		return false;
	}
	if (c.bad || c.p > c.end || cie->ra != R_RA)
		return false;
	cie->insns = c;
	return true;
}

/* Skip a DW_CFA block's operand; its address for an expression rule. */
static int64_t block(struct cur *c)
{
	const uint8_t *start = c->p;
	uint64_t n = odebug_cfi_uleb(c);

	if (n > (uint64_t)(c->end - c->p)) {
		c->bad = true;
		return 0;
	}
	c->p += n;
	return (int64_t)(uintptr_t)start;
}

static void set_rule(struct rules *r, uint64_t reg, enum rule how, int64_t val)
{
	if (reg < NREGS) {
		r->how[reg] = (uint8_t)how;
		r->val[reg] = val;
	}
}

#define REMEMBERED	4

/*
 * Run @c's instructions from address @loc while it is not past @pc; the
 * CIE's rules, @init, are what DW_CFA_restore goes back to.
 */
bool odebug_cfi_run(struct cur c, const struct cie *cie, uintptr_t loc, uintptr_t pc,
		struct rules *r, const struct rules *init)
{
	struct rules saved[REMEMBERED];
	unsigned int depth = 0;

	while (c.p < c.end && !c.bad) {
		uint8_t op = *c.p++;
		uint64_t reg, delta = 0;

		switch (op & 0xc0) {
		case 0x40:
			delta = op & 0x3f;
			goto advance;
		case 0x80:
			set_rule(r, op & 0x3f, OFFSET, (int64_t)odebug_cfi_uleb(&c) * cie->data_align);
			continue;
		case 0xc0:
			reg = op & 0x3f;
			if (reg < NREGS)
				set_rule(r, reg, init ? init->how[reg] : UNSET, init ? init->val[reg] : 0);
			continue;
		}
		switch (op) {
		case 0x00:	/* nop */
			break;
		case 0x01:	/* set_loc */
			loc = odebug_cfi_encoded(&c, cie->fde_enc, 0);
			if (loc > pc)
				return !c.bad;
			break;
		case 0x02: delta = odebug_cfi_get_n(&c, 1); goto advance;
		case 0x03: delta = odebug_cfi_get_n(&c, 2); goto advance;
		case 0x04: delta = odebug_cfi_get_n(&c, 4); goto advance;
		case 0x05:	/* offset_extended */
			reg = odebug_cfi_uleb(&c);
			set_rule(r, reg, OFFSET, (int64_t)odebug_cfi_uleb(&c) * cie->data_align);
			break;
		case 0x06:	/* restore_extended */
			reg = odebug_cfi_uleb(&c);
			if (reg < NREGS)
				set_rule(r, reg, init ? init->how[reg] : UNSET, init ? init->val[reg] : 0);
			break;
		case 0x07: set_rule(r, odebug_cfi_uleb(&c), UNDEF, 0); break;
		case 0x08: set_rule(r, odebug_cfi_uleb(&c), SAME, 0); break;
		case 0x09:	/* register */
			reg = odebug_cfi_uleb(&c);
			set_rule(r, reg, REG, (int64_t)odebug_cfi_uleb(&c));
			break;
		case 0x0a:	/* remember_state */
			if (depth == REMEMBERED)
				return false;
			saved[depth++] = *r;
			break;
		case 0x0b:	/* restore_state, the CFA's rule too (an epilogue's ret) */
			if (!depth)
				return false;
			*r = saved[--depth];
			break;
		case 0x0c:	/* def_cfa */
			r->cfa_reg = (uint8_t)odebug_cfi_uleb(&c);
			r->cfa_off = (int64_t)odebug_cfi_uleb(&c);
			r->cfa_expr = false;
			break;
		case 0x0d: r->cfa_reg = (uint8_t)odebug_cfi_uleb(&c); r->cfa_expr = false; break;
		case 0x0e: r->cfa_off = (int64_t)odebug_cfi_uleb(&c); break;
		case 0x0f:	/* def_cfa_expression */
			r->cfa_off = block(&c);
			r->cfa_expr = true;
			break;
		case 0x10:	/* expression */
			reg = odebug_cfi_uleb(&c);
			set_rule(r, reg, EXPR, block(&c));
			break;
		case 0x11:	/* offset_extended_sf */
			reg = odebug_cfi_uleb(&c);
			set_rule(r, reg, OFFSET, odebug_cfi_sleb(&c) * cie->data_align);
			break;
		case 0x12:	/* def_cfa_sf */
			r->cfa_reg = (uint8_t)odebug_cfi_uleb(&c);
			r->cfa_off = odebug_cfi_sleb(&c) * cie->data_align;
			r->cfa_expr = false;
			break;
		case 0x13: r->cfa_off = odebug_cfi_sleb(&c) * cie->data_align; break;
		case 0x14:	/* val_offset */
			reg = odebug_cfi_uleb(&c);
			set_rule(r, reg, VAL_OFFSET, (int64_t)odebug_cfi_uleb(&c) * cie->data_align);
			break;
		case 0x15:	/* val_offset_sf */
			reg = odebug_cfi_uleb(&c);
			set_rule(r, reg, VAL_OFFSET, odebug_cfi_sleb(&c) * cie->data_align);
			break;
		case 0x16:	/* val_expression */
			reg = odebug_cfi_uleb(&c);
			set_rule(r, reg, VAL_EXPR, block(&c));
			break;
		case 0x2e:	/* GNU_args_size */
			odebug_cfi_uleb(&c);
			break;
		case 0x2f:	/* GNU_negative_offset_extended */
			reg = odebug_cfi_uleb(&c);
			set_rule(r, reg, OFFSET, -(int64_t)odebug_cfi_uleb(&c) * cie->data_align);
			break;
		default:
			return false;
		}
		continue;
advance:
		loc += delta * cie->code_align;
		if (loc > pc)
			break;
	}
	return !c.bad && r->cfa_reg < NREGS;
}

#endif
