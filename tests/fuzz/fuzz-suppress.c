/* SPDX-License-Identifier: MIT */
/*
 * fuzz-suppress.c - libFuzzer harness for the suppressions parser and
 * matcher (lib/report/suppress.c, compiled into this binary).
 *
 * Any input: no crash, no sanitizer report; the rules it leaves are
 * matched against a few reports (with and without frames) without
 * trouble, and parsing the same text twice gives the same verdicts.
 * Malformed lines print one warning each: run with -close_fd_mask=2.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned int verdicts(void)
{
	static struct odebug_frame frames[3];
	static const char *const types[] = { "timer", "", "a*b", "x" };
	static const char *const ops[] = { "free", "init", "exit", "" };
	unsigned int bits = 0, i;

	frames[0].func = "conn_close";
	frames[1].func = "";
	frames[2].func = "main";
	for (i = 0; i < 4; i++) {
		bits = bits << 1 | odebug_suppress_match(types[i], ops[i], frames, 3);
		bits = bits << 1 | odebug_suppress_match(types[i], ops[3 - i], NULL, 0);
	}
	return bits | (unsigned int)odebug_suppress_any() << 8 |
	       (unsigned int)odebug_suppress_needs_frames() << 9;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), *again = malloc(size + 1);
	unsigned int first;

	if (!text || !again) {
		free(text);
		free(again);
		return 0;
	}
	memcpy(text, data, size);
	memcpy(again, data, size);
	odebug_suppress_parse("fuzz", text, size);
	first = verdicts();
	odebug_suppress_parse("fuzz", again, size);
	if (verdicts() != first) {
		fprintf(stderr, "fuzz-suppress: two parses of the same text differ\n");
		abort();
	}
	free(text);
	free(again);
	return 0;
}
