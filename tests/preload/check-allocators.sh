#!/bin/sh
# libodebug stacks over another allocator preloaded after it, and warns when
# one preloaded before it takes free() away.
# usage: check-allocators.sh LIBODEBUG ARMED_FREE_PROGRAM
set -eu
lib=$1 prog=$2
je=$(ls /usr/lib/*/libjemalloc.so.2 2>/dev/null | head -1)
[ -n "$je" ] || { echo "SKIP: libjemalloc2 not installed"; exit 77; }

out=$(LD_PRELOAD="$lib $je" ODEBUG=1 "$prog" 2>&1)
echo "$out" | grep -q 'ODEBUG: free active' || { echo "jemalloc after us: no report"; echo "$out"; exit 1; }
echo "$out" | grep -q ' in release_it+' || { echo "jemalloc after us: culprit not named"; echo "$out"; exit 1; }
echo "$out" | grep -q 'fixup_free calls: 1, canary ok: 1' || { echo "jemalloc after us: fixup"; echo "$out"; exit 1; }
echo "ok: LD_PRELOAD=\"libodebug.so libjemalloc.so.2\" reports at the free"

out=$(LD_PRELOAD="$je $lib" ODEBUG=1 "$prog" 2>&1)
echo "$out" | grep -q "ODEBUG: free() is bound to $je, not libodebug" ||
	{ echo "jemalloc first: no link-order warning"; echo "$out"; exit 1; }
[ "$(echo "$out" | grep -c 'free() is bound')" = 1 ] || { echo "warning not once"; exit 1; }
echo "ok: LD_PRELOAD=\"libjemalloc.so.2 libodebug.so\" warns: $(echo "$out" | grep 'is bound')"

out=$(LD_PRELOAD="$je $lib" ODEBUG=0 "$prog" 2>&1)
if echo "$out" | grep -q ODEBUG; then echo "ODEBUG=0 printed something"; exit 1; fi
echo "ok: ODEBUG=0 says nothing"
