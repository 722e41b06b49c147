#!/bin/sh
# bench-locks alternated in one run: plain glibc, then libodebug preloaded
# with ODEBUG=1 (and, given, a BASELINE libodebug.so with ODEBUG=1), RUNS
# times; prints per configuration the median ns and the median ratio to
# plain with its min-max over the runs (each ratio against the plain run
# just before it).
# usage: locks-spread.sh BENCH_LOCKS LIBODEBUG RUNS [BASELINE] -- ARGS...
#   e.g. locks-spread.sh build/bench/bench-locks build/preload/libodebug.so 5 -- spread array 1000000
#   ARGS "pair": the uncontended pair; then ns added per pair is printed too,
#   and libodebug with ODEBUG unset is measured as well.
set -eu
bench=$1 lib=$(readlink -f "$2") runs=$3; shift 3
base=
if [ "$1" != "--" ]; then base=$(readlink -f "$1"); shift; fi
shift
ns() { "$@" | awk '{ print $(NF - 1) }'; }
out=$(mktemp)
i=0
while [ "$i" -lt "$runs" ]; do
	p=$(ns env ODEBUG= "$bench" "$@")
	echo "plain $p $p" >>"$out"
	if [ "$1" = pair ] || [ "$1" = rdpair ]; then
		echo "unset $(ns env ODEBUG= LD_PRELOAD="$lib" "$bench" "$@") $p" >>"$out"
	fi
	echo "odebug $(ns env ODEBUG=1 LD_PRELOAD="$lib" "$bench" "$@") $p" >>"$out"
	[ -z "$base" ] || echo "baseline $(ns env ODEBUG=1 LD_PRELOAD="$base" "$bench" "$@") $p" >>"$out"
	i=$((i + 1))
done
echo "uptime: $(uptime)"
for cfg in plain unset odebug baseline; do
	grep "^$cfg " "$out" | python3 -c '
import sys, statistics as st
rows = [tuple(map(float, l.split()[1:])) for l in sys.stdin]
if rows:
    ns = [a for a, b in rows]; r = [a / b for a, b in rows]; d = [a - b for a, b in rows]
    print("%-8s %8.2f ns  ratio %.3f [%.3f - %.3f]  added %+.2f ns [%+.2f - %+.2f]" % (
        sys.argv[1], st.median(ns), st.median(r), min(r), max(r), st.median(d), min(d), max(d)))
' "$cfg"
done
rm -f "$out"
