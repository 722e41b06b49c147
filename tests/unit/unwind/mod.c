/* SPDX-License-Identifier: MIT */
/*
 * mod.c - a module built twice (FRAME: the size of its function's frame)
 * for test-unwind's unloaded_modules_rules_are_forgotten: the same code
 * but for the frame's size, so that the return address into it lies at
 * the same offset in both builds.
 */
__attribute__((visibility("default"))) int unwind_mod_call(void (*cb)(void *), void *arg);

__attribute__((visibility("default"), noinline)) int unwind_mod_call(void (*cb)(void *), void *arg)
{
	volatile char pad[FRAME];

	pad[0] = 1;
	cb(arg);
	pad[FRAME - 1] = 2;
	return pad[0] + pad[FRAME - 1];
}
