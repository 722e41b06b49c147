/* SPDX-License-Identifier: MIT */
/* Frees one armed widget; prints what the fixup saw.  For shell tests. */
#include <stdio.h>
#include <stdlib.h>

#include "fixture.h"

void release_it(struct widget *w);
__attribute__((noinline)) void release_it(struct widget *w)
{
	free(w);
	__asm__ volatile("" ::: "memory");
}

int main(void)
{
	struct widget *w = malloc(sizeof(*w));

	widget_init(w);
	widget_arm(w);
	release_it(w);
	printf("fixup_free calls: %lu, canary ok: %lu\n",
	       fixture_fixup_free_calls(), fixture_canary_ok());
	return 0;
}
