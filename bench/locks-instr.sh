#!/bin/sh
# Instructions per uncontended lock+unlock pair (callgrind), plain glibc,
# libodebug preloaded with ODEBUG unset, and with ODEBUG=1: the difference
# between N=400000 and N=200000 pairs (plus their 10 % warm-up), so that
# start-up cancels out.  usage: locks-instr.sh BENCH_LOCKS LIBODEBUG [MODE]
# (MODE: pair, the default, or rdpair: an rwlock's rdlock+unlock)
bench=$1 lib=$(readlink -f "$2") mode=${3:-pair}
ir() {	# env..., then N
	out=$(mktemp)
	env "$@" valgrind --tool=callgrind --trace-children=yes --soname-synonyms=somalloc=nomatch \
		--callgrind-out-file="$out.%p" "$bench" "$mode" "$N" >/dev/null 2>&1
	total=0
	for f in "$out".*; do
		n=$(sed -n 's/^summary: //p' "$f")
		total=$((total + ${n:-0}))
	done
	rm -f "$out" "$out".*
	echo "$total"
}
for cfg in plain unset on; do
	case $cfg in
	plain) set -- ODEBUG= ;;
	unset) set -- ODEBUG= LD_PRELOAD="$lib" ;;
	on) set -- ODEBUG=1 LD_PRELOAD="$lib" ;;
	esac
	N=200000; a=$(ir "$@")
	N=400000; b=$(ir "$@")
	echo "$cfg: $(( (b - a) / 220000 )) instructions per $mode lock+unlock pair"
done
