/* SPDX-License-Identifier: MIT */
/*
 * start.h - the start layer: the constructor, fork and exit (init.c,
 * exit.c) and the start's selftest.  The top: it may call every layer.
 */
#ifndef ODEBUG_START_H
#define ODEBUG_START_H

#include "core.h"

/* "exit.c": the exit-time output */
void odebug_exit_init(void);
void odebug_exit_child(void);
void odebug_exit_output(void);
void odebug_exit_before_exec(void);

/* "selftest.c" */
bool odebug_selftest(void);

#endif /* ODEBUG_START_H */
