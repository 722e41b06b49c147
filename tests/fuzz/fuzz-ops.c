/* SPDX-License-Identifier: MIT */
/*
 * fuzz-ops.c - libFuzzer harness: operation sequences applied to libodebug
 * (its core, compiled into this binary) and to the reference model, compared
 * after every step by the engine of tests/model (diff.c).
 *
 * Input: one byte choosing the layout of the objects, then 8 bytes per
 * operation (op_decode in diff.c), at most 1024 operations.  A difference
 * between library and model, or any sanitizer report, aborts.  Each input
 * starts from an empty table and ends by releasing every object.
 *
 * libodebug reads ODEBUG at start: without ODEBUG=1 the harness runs itself
 * again with ODEBUG=1 (and ODEBUG_OPTIONS=max_reports=0 unless set).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "odebug.h"
#include "diff.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *on = getenv("ODEBUG");

	(void)argc;
	if (!on || strcmp(on, "1")) {
		setenv("ODEBUG", "1", 1);
		setenv("ODEBUG_OPTIONS", "max_reports=0", 0);
		execv("/proc/self/exe", *argv);
		perror("fuzz-ops: execv /proc/self/exe");
		exit(1);
	}
	if (!debug_objects_enabled()) {
		fprintf(stderr, "fuzz-ops: libodebug did not start\n");
		exit(1);
	}
	diff_check_free();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char stack_area[DIFF_STACK_AREA];
	struct world_config cfg = { .stack_area = stack_area, .log = stderr };
	struct world *w;
	struct op op;
	size_t i, n = 0;

	if (size < 1)
		return 0;
	cfg.layout_seed = data[0];
	w = world_new(&cfg);
	if (!w)
		abort();
	for (i = 1; i + 8 <= size && n < 1024; i += 8, n++) {
		op_decode(data + i, &op);
		if (world_step(w, &op))
			abort();
	}
	if (world_finish(w))
		abort();
	world_free(w);
	return 0;
}
