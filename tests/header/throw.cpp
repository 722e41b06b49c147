// SPDX-License-Identifier: MIT
// A C++ exception thrown and caught: its unwinding must stay libgcc_s's.
#include <cstdio>
#include <stdexcept>

int main()
{
	try {
		throw std::runtime_error("thrown");
	} catch (const std::exception &e) {
		std::printf("caught %s\n", e.what());
		return 0;
	}
	return 1;
}
