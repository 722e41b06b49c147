/* SPDX-License-Identifier: MIT */
/*
 * unwind-cfi.h - what unwind.c shares with unwind-cfi.c: the call-frame
 * information's encoded numbers, its entries (CIE and FDE) and the rules
 * its instructions leave for one address, on x86-64.
 */
#ifndef ODEBUG_UNWIND_CFI_H
#define ODEBUG_UNWIND_CFI_H

#include "report.h"

/* DWARF's register numbers on x86-64: 16 is the return address column. */
#define R_RBP	6
#define R_RSP	7
#define R_RA	16
#define NREGS	17

/* --- the encoded numbers of .eh_frame ---------------------------------- */

#define PE_OMIT		0xff
#define PE_ABSPTR	0x00
#define PE_ULEB128	0x01
#define PE_UDATA2	0x02
#define PE_UDATA4	0x03
#define PE_UDATA8	0x04
#define PE_SLEB128	0x09
#define PE_SDATA2	0x0a
#define PE_SDATA4	0x0b
#define PE_SDATA8	0x0c
#define PE_PCREL	0x10
#define PE_DATAREL	0x30
#define PE_INDIRECT	0x80

/* A cursor over one entry: every read stays before end. */
struct cur {
	const uint8_t *p, *end;
	bool bad;
};


enum rule { UNSET, UNDEF, SAME, OFFSET, VAL_OFFSET, REG, EXPR, VAL_EXPR };

struct rules {
	uint8_t how[NREGS];
	int64_t val[NREGS];		/* offset, register, or the expression's address */
	bool cfa_expr;
	uint8_t cfa_reg;
	int64_t cfa_off;		/* or the expression's address */
};

struct cie {
	uint64_t code_align;
	int64_t data_align;
	unsigned int ra;
	uint8_t fde_enc;
	bool aug_z, signal;
	struct cur insns;
};

uint64_t odebug_cfi_get_n(struct cur *c, size_t n);
uint64_t odebug_cfi_uleb(struct cur *c);
int64_t odebug_cfi_sleb(struct cur *c);
uintptr_t odebug_cfi_encoded(struct cur *c, uint8_t enc, uintptr_t data);
bool odebug_cfi_entry(const uint8_t *p, struct cur *c);
bool odebug_cfi_parse_cie(const uint8_t *p, struct cie *cie);
bool odebug_cfi_run(struct cur c, const struct cie *cie, uintptr_t loc, uintptr_t pc,
		    struct rules *r, const struct rules *init);

#endif /* ODEBUG_UNWIND_CFI_H */
