/* SPDX-License-Identifier: MIT */
/* Runs after early.c's constructor; then checks libodebug still works. */
#include <stdio.h>
#include <stdlib.h>

#include "fixture.h"

extern int early_releases;

int main(void)
{
	struct widget *w = malloc(sizeof(*w));

	widget_init(w);
	widget_arm(w);
	free(w);
	printf("early releases: %d, fixup_free calls: %lu\n",
	       early_releases, fixture_fixup_free_calls());
	return early_releases == 2 && fixture_fixup_free_calls() == 1 ? 0 : 1;
}
