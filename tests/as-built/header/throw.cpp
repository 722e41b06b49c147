// SPDX-License-Identifier: MIT
// A C++ exception thrown and caught: its unwinding must stay libgcc_s's,
// also once a preloaded libodebug has started (and loaded libunwind) on
// its first API call, made here through dlsym: this program is not linked
// with libodebug.
#include <cstdio>
#include <dlfcn.h>
#include <stdexcept>

int main()
{
	void *sym = dlsym(RTLD_DEFAULT, "debug_objects_enabled");

	if (sym)
		reinterpret_cast<bool (*)()>(sym)();
	try {
		throw std::runtime_error("thrown");
	} catch (const std::exception &e) {
		std::printf("caught %s\n", e.what());
		return 0;
	}
	return 1;
}
