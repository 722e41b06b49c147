#!/bin/sh
# The release path with 1 M objects tracked in blocks that share pages:
# callgrind's instructions in bench-churn's churn_loop() with libodebug
# preloaded and ODEBUG=1, over plain glibc's, against BENCHMARKS.md's goal.
# Instruction counts do not depend on the machine's load, so the goal is
# checked, not only printed: the status is 1 above it (77 without valgrind).
# usage: churn-instr.sh BENCH_CHURN LIBODEBUG [GOAL]
set -eu
churn=$1 lib=$(readlink -f "$2") goal=${3:-1.475}
command -v valgrind >/dev/null 2>&1 || { echo "skip: valgrind not installed"; exit 77; }
ir() {	# env assignments for the run
	env "$@" valgrind --tool=callgrind --callgrind-out-file=/dev/null \
		--toggle-collect=churn_loop "$churn" --iters 50k --pairs 1m 2>&1 |
		sed -n 's/.*Collected : //p'
}
plain=$(ir ODEBUG=)
on=$(ir ODEBUG=1 LD_PRELOAD="$lib")
[ -n "$plain" ] && [ -n "$on" ] || { echo "FAIL: no instruction count"; exit 1; }
echo "$on $plain $goal" | awk '{ r = $1 / $2
	printf "churn instructions, 1 M tracked sharing pages / plain: %.3f (%d / %d), goal <= %s\n", r, $1, $2, $3
	exit !(r <= $3) }'
