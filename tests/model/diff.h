/* SPDX-License-Identifier: MIT */
/*
 * diff.h - the differential engine: one operation at a time, applied to
 * libodebug and to the reference model (model.h), then compared.
 *
 * A "world" is the memory one thread plays with: slots (object addresses)
 * in a static arena, in statically "initialised" objects, on the caller's
 * stack and in heap blocks that are really freed and reallocated.  An
 * operation names a slot and a descriptor by number, so a sequence of
 * operations replays in any process (the addresses may differ).  Shared by
 * test-model.c (random sequences, minimiser, threads) and the libFuzzer
 * harness tests/fuzz/fuzz-ops.c.
 */
#ifndef ODEBUG_DIFF_H
#define ODEBUG_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum op_kind {
	OP_INIT, OP_ACTIVATE, OP_DEACTIVATE, OP_DESTROY, OP_FREE,
	OP_ASSERT_INIT, OP_ACTIVE_STATE, OP_CHECK_RANGE, OP_FREE_BLOCK,
	OP_REALLOC_BLOCK, OP_MAX
};

/*
 * slot: the object (modulo the number of slots), or for OP_CHECK_RANGE the
 * area, for the block operations the block.  descr: a descriptor number,
 * or DIFF_HOME (any value >= DIFF_NDESCR) for the slot's own.  arg:
 * active_state's expect (bits 0-1) and next (bits 2-3); the size class of a
 * range.  x, y: offset and size of a range; new size of a block.
 */
struct op {
	uint8_t kind, slot, descr, arg;
	uint16_t x, y;
};

#define DIFF_NDESCR	10
#define DIFF_HOME	0xff
#define DIFF_MAX_THREADS 8
#define DIFF_STACK_AREA	512

struct world_config {
	unsigned int thread;	/* 0 .. nthreads-1 */
	unsigned int nthreads;	/* 0: single-threaded (every check on) */
	uint64_t layout_seed;	/* where the slots are */
	char *stack_area;	/* DIFF_STACK_AREA bytes of the caller's stack, or NULL */
	bool inject_bug;	/* make the model wrong on purpose */
	FILE *log;		/* mismatches are described here */
};

struct world;

/* The library must be enabled (ODEBUG=1); returns NULL if it is not. */
struct world *world_new(const struct world_config *cfg);
/* 0 when library and model agree after @op, else -1 (described on log). */
int world_step(struct world *w, const struct op *op);
/* Release every area (compared too), free the blocks: 0 or -1. */
int world_finish(struct world *w);
void world_free(struct world *w);
/* Totals of the model: for the multithreaded end-of-run check. */
void world_model_totals(const struct world *w, unsigned long *warnings,
			unsigned long *fixups, unsigned long *tracked);
/* Coverage of the state table, added into @cover[MOP_MAX][MROW_MAX]. */
void world_cover(const struct world *w, unsigned long *cover);
/*
 * Does the library check released memory (option check_free)?  Found out
 * once with a probe object: call it from the main thread before threads.
 */
bool diff_check_free(void);
/* Shared objects of a multithreaded run: in no thread's areas. */
#define DIFF_MAX_SHARED	64
void *diff_shared_addr(unsigned int nthreads, unsigned int k);
/* Drop every tracker in the process, no fixup run (single thread only). */
void diff_drop_all(void);

/* A random operation (splitmix64 state in *rng). */
void op_random(uint64_t *rng, struct op *op, bool threaded);
/* An operation from 8 bytes of fuzzer input. */
void op_decode(const uint8_t *b, struct op *op);
/* "name slot descr arg x y", one line; parse returns false on junk. */
void op_print(FILE *f, const struct op *op);
bool op_parse(const char *line, struct op *op);
const char *op_name(int kind);

uint64_t diff_rand(uint64_t *state);

#endif
