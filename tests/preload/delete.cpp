// SPDX-License-Identifier: MIT
// C++ delete reaches free() through libstdc++: an object holding an armed
// widget, deleted, is reported at the delete.
#include <cstdio>

extern "C" {
#include "fixture.h"
}

struct Session {
	int id = 7;
	struct widget keepalive;
	Session() { widget_init(&keepalive); widget_arm(&keepalive); }
};

__attribute__((noinline)) void drop_session(Session *s)
{
	delete s;
	__asm__ volatile("" ::: "memory");
}

int main()
{
	drop_session(new Session);
	std::printf("fixup_free calls: %lu, canary ok: %lu\n",
		    fixture_fixup_free_calls(), fixture_canary_ok());
	return fixture_fixup_free_calls() == 1 && fixture_canary_ok() == 1 ? 0 : 1;
}
