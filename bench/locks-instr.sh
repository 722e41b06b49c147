#!/bin/sh
# Instructions per uncontended lock+unlock pair (callgrind), plain glibc,
# libodebug preloaded with ODEBUG unset, and with ODEBUG=1: the difference
# between N=400000 and N=200000 pairs (plus their 10 % warm-up), so that
# start-up cancels out.  usage: locks-instr.sh BENCH_LOCKS LIBODEBUG [MODE]
# (MODE: pair, the default, or rdpair: an rwlock's rdlock+unlock; wrpair;
# rdlife or mlife: a lock's whole life in a heap block, per life, from
# N=40000 and N=20000 lives)
bench=$1 lib=$(readlink -f "$2") mode=${3:-pair}
case $mode in *life) lo=20000 ;; *) lo=200000 ;; esac
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
	N=$lo; a=$(ir "$@")
	N=$((2 * lo)); b=$(ir "$@")
	echo "$cfg: $(( (b - a) * 10 / (11 * lo) )) instructions per $mode"
done
