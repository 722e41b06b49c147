/* SPDX-License-Identifier: MIT */
/*
 * modules.h - the annotation modules (modules.c): found and attached at the
 * start for the libraries loaded, and at each dlopen().
 */
#ifndef ODEBUG_MODULES_H
#define ODEBUG_MODULES_H

#include "core.h"

void odebug_modules_scan(void);

#endif /* ODEBUG_MODULES_H */
