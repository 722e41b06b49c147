/* SPDX-License-Identifier: MIT */
/*
 * fuzz-options.c - libFuzzer harness for the ODEBUG_OPTIONS parser
 * (odebug_options_parse in lib/base/options.c, compiled into this binary).
 *
 * Any input: no crash, no sanitizer report, every number within its
 * documented range, every string terminated inside its field, and the same
 * result when parsed twice.  Bad settings print one line each: run with
 * -close_fd_mask=2 to keep the output readable.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(bool ok, const char *what, const char *text)
{
	if (ok)
		return;
	fprintf(stderr, "fuzz-options: %s after parsing \"%s\"\n", what, text);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct odebug_options first;
#ifdef ODEBUG_OPT_STRLEN
	struct odebug_option_strings first_str;
#endif
	char *text = malloc(size + 1);

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';

	odebug_options_parse(text);
	check(odebug_opt.pool_size >= 1 && odebug_opt.pool_size <= odebug_opt.pool_max,
	      "pool_size out of range", text);
	check(odebug_opt.pool_max >= 1 && odebug_opt.pool_max <= (1UL << 32),
	      "pool_max out of range", text);
	check(odebug_opt.stack_depth >= 1 && odebug_opt.stack_depth <= 128,
	      "stack_depth out of range", text);
	check(odebug_opt.selftest <= 1 && odebug_opt.check_free <= 1 &&
	      odebug_opt.print_stats <= 1 && odebug_opt.help <= 1,
	      "a boolean option is neither 0 nor 1", text);
#ifdef ODEBUG_OPT_STRLEN
	check(odebug_opt.origins <= 1 && odebug_opt.abort_on_error <= 1 &&
	      odebug_opt.halt_on_error <= 1 && odebug_opt.report_active_at_exit <= 1 &&
	      odebug_opt.exitcode <= 255, "a report option out of range", text);
	check(memchr(odebug_opt_str.log_path, 0, ODEBUG_OPT_STRLEN) &&
	      memchr(odebug_opt_str.log_format, 0, ODEBUG_OPT_STRLEN) &&
	      memchr(odebug_opt_str.suppressions, 0, ODEBUG_OPT_STRLEN),
	      "a string option is not terminated", text);
	check(!strcmp(odebug_opt_str.log_format, "text") || !strcmp(odebug_opt_str.log_format, "json"),
	      "log_format is neither text nor json", text);
	check(odebug_opt_str.log_path[0] != '\0', "log_path is empty", text);
#endif
	/* The same text, the same options (strings compared as strings). */
	first = odebug_opt;
#ifdef ODEBUG_OPT_STRLEN
	first_str = odebug_opt_str;
#endif
	odebug_options_parse(text);
#ifdef ODEBUG_OPT_STRLEN
	check(!strcmp(first_str.log_path, odebug_opt_str.log_path) &&
	      !strcmp(first_str.log_format, odebug_opt_str.log_format) &&
	      !strcmp(first_str.suppressions, odebug_opt_str.suppressions),
	      "a second parse gave other strings", text);
#endif
	check(!memcmp(&first, &odebug_opt, sizeof(first)),
	      "a second parse gave other options", text);
	free(text);
	return 0;
}
