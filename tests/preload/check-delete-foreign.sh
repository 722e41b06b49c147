#!/bin/sh
# C++ delete with an allocator that brings its own operator delete, preloaded
# after libodebug (the README's order): a correct program is silent, and a
# delete of an object holding a locked std::mutex is reported at the delete.
# usage: check-delete-foreign.sh LIBODEBUG PROGRAM ROUNDS ALLOCATOR...
# (ALLOCATOR: jemalloc or tcmalloc; each one not installed is skipped)
set -eu
lib=$1 prog=$2 rounds=$3
shift 3
ran=0
for name in "$@"; do
	case $name in
	jemalloc) so=$(ls /usr/lib/*/libjemalloc.so.2 2>/dev/null | head -1) ;;
	tcmalloc) so=$(ls /usr/lib/*/libtcmalloc_minimal.so.4 2>/dev/null | head -1) ;;
	*) echo "unknown allocator $name"; exit 2 ;;
	esac
	[ -n "$so" ] || { echo "skip: $name not installed"; continue; }
	ran=$((ran + 1))

	out=$(LD_PRELOAD="$lib $so" ODEBUG=1 ODEBUG_OPTIONS=max_reports=1000 "$prog" silent "$rounds" 2>&1) ||
		{ echo "$name: silent run failed"; echo "$out"; exit 1; }
	if echo "$out" | grep -q 'ODEBUG: [a-z]* [a-z]*'; then
		echo "$name: a correct program was reported:"; echo "$out" | head -40; exit 1
	fi
	echo "ok: $name, $rounds rounds of a correct program: silent"

	out=$(LD_PRELOAD="$lib $so" ODEBUG=1 ODEBUG_OPTIONS=max_reports=1000 "$prog" locked "$rounds" 2>&1) ||
		{ echo "$name: locked run failed"; echo "$out"; exit 1; }
	n=$(echo "$out" | grep -c 'ODEBUG: free active' || true)
	summary=$(echo "$out" | grep 'SUMMARY' || true)
	echo "$summary" | grep -q "SUMMARY: $rounds warnings" ||
		{ echo "$name: $rounds deletes of a locked mutex, reports: $summary"; echo "$out" | head -40; exit 1; }
	echo "$out" | grep -qE ' in (_ZL4)?drop' ||
		{ echo "$name: the culprit (drop) not named"; echo "$out" | head -40; exit 1; }
	echo "ok: $name, $rounds deletes of a held std::mutex: $n printed, $summary"

	out=$(LD_PRELOAD="$lib $so" "$prog" locked "$rounds" 2>&1)
	if echo "$out" | grep -q ODEBUG; then echo "$name: ODEBUG unset printed something"; exit 1; fi
done
[ "$ran" -gt 0 ] || { echo "SKIP: no allocator installed"; exit 77; }
