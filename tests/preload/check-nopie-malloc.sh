#!/bin/sh
# libodebug knows glibc's malloc behind a non-PIE executable's canonical
# PLT entry for malloc: at verbosity=1 it says when it does not read
# glibc's chunk headers, and it must not say so here.  With an allocator
# preloaded after libodebug (jemalloc, when installed) it must say so: the
# notice is what the first check looks for.
# usage: check-nopie-malloc.sh LIBODEBUG PROGRAM
set -u
lib=$1 prog=$2
notice='not glibc.s allocator'
out=$(LD_PRELOAD="$lib" ODEBUG=1 ODEBUG_OPTIONS=verbosity=1 "$prog" 2>&1) ||
	{ echo "FAIL: the program failed"; echo "$out"; exit 1; }
if echo "$out" | grep -q "$notice"; then
	echo "FAIL: glibc's malloc behind the executable's PLT entry was not recognised:"
	echo "$out"
	exit 1
fi
echo "ok: glibc's allocator recognised behind the executable's PLT entry"
so=$(ls /usr/lib/*/libjemalloc.so.2 2>/dev/null | head -1)
[ -n "$so" ] || { echo "skip: jemalloc not installed"; exit 0; }
out=$(LD_PRELOAD="$lib $so" ODEBUG=1 ODEBUG_OPTIONS=verbosity=1 "$prog" 2>&1)
if ! echo "$out" | grep -q "$notice"; then
	echo "FAIL: jemalloc preloaded after libodebug, no notice:"
	echo "$out"
	exit 1
fi
echo "ok: jemalloc preloaded after libodebug is noticed"
