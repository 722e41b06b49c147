/* SPDX-License-Identifier: MIT */
/*
 * A module with nothing to check: loaded and unloaded in a loop beside the
 * audit path (torture-report audit-lock), so its dlopen and dlclose wait
 * for the loader's lock that la_objclose() runs under.
 */
int idle_module_value = 1;
