#!/bin/sh
# libunwind must not take over the host's C++ exception unwinding: it is
# not a NEEDED entry of libodebug.so, it is loaded (dlopen RTLD_LOCAL) only
# when ODEBUG=1 and a capture needs it (on x86-64 only with origins=1:
# reports unwind without it), and _Unwind_RaiseException still binds to
# libgcc_s.
# usage: check-unwind.sh LIBRARY THROW_PROGRAM
set -eu
lib=$1 prog=$2

if readelf -d "$lib" | grep NEEDED | grep -q libunwind; then
	echo "libodebug.so has a NEEDED entry for libunwind"; exit 1
fi
out=$(LD_PRELOAD=$lib ODEBUG=0 LD_DEBUG=files "$prog" 2>&1)
if echo "$out" | grep -q 'file=libunwind'; then
	echo "libunwind was loaded with ODEBUG=0"; exit 1
fi
if [ "$(uname -m)" = x86_64 ]; then
	out=$(LD_PRELOAD=$lib ODEBUG=1 LD_DEBUG=files "$prog" 2>&1)
	if echo "$out" | grep -q 'file=libunwind'; then
		echo "libunwind was loaded with ODEBUG=1 by a process that made no report"; exit 1
	fi
	export ODEBUG_OPTIONS=origins=1
fi
out=$(LD_PRELOAD=$lib ODEBUG=1 LD_DEBUG=files,bindings "$prog" 2>&1)
echo "$out" | grep -q 'caught thrown' || { echo "exception not caught"; exit 1; }
echo "$out" | grep -q 'file=libunwind' || { echo "libunwind not loaded with ODEBUG=1"; exit 1; }
binding=$(echo "$out" | grep "symbol \`_Unwind_RaiseException'" | head -1)
case "$binding" in
*libgcc_s*) echo "ok: $binding" | sed 's/^ *[0-9]*: *//' ;;
*) echo "_Unwind_RaiseException bound elsewhere: '$binding'"; exit 1 ;;
esac
