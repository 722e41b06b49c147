/* SPDX-License-Identifier: MIT */
/* caller-plugin.c - what caller-app.c's dlopen() calls find: one function. */
int caller_plugin_answer(void);

__attribute__((visibility("default"))) int caller_plugin_answer(void)
{
	return 42;
}
