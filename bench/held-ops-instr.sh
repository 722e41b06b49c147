#!/bin/sh
# Instructions per call (callgrind) that held memory adds to bench-held-ops'
# loops: ODEBUG unset against ODEBUG=1, libodebug preloaded in both; the
# difference between 2N and N rounds, so that start-up cancels out.
# usage: held-ops-instr.sh BENCH_HELD_OPS LIBODEBUG [N]
set -eu
ops=$1 lib=$2 n=${3:-20000}
ir() {	# op, rounds, ODEBUG value
	out=$(mktemp)
	env ODEBUG="$3" LD_PRELOAD="$lib" valgrind --tool=callgrind \
		--callgrind-out-file="$out" "$ops" --only "$1" "$2" >/dev/null 2>&1
	sed -n 's/^summary: //p' "$out"
	rm -f "$out"
}
per() {	# op, ODEBUG value: instructions per round
	a=$(ir "$1" "$n" "$2")
	b=$(ir "$1" $((2 * n)) "$2")
	echo $(( (b - a) / n ))
}
# A round: epoll_ctl ADD + DEL (2 calls), one epoll_wait of 64 events,
# timer_settime arm + disarm (2 calls).
for op in 0 1 2; do
	case $op in
	0) name="epoll_ctl (per call)" div=2 ;;
	1) name="epoll_wait (per event)" div=64 ;;
	2) name="timer_settime (per call)" div=2 ;;
	esac
	u=$(per $op "")
	o=$(per $op 1)
	echo "$name: unset $((u / div)), ODEBUG=1 $((o / div)), added $(( (o - u) / div ))"
done
