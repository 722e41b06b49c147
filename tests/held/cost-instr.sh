#!/bin/sh
# Instructions per call (callgrind) that held memory adds, per loop of
# held-cost: ODEBUG unset against ODEBUG=1, and ODEBUG=1 with check_held=0
# against check_held=1; the difference between N=40000 and N=20000 rounds,
# so that start-up cancels out.  usage: cost-instr.sh HELD_COST
cost=$1
ir() {	# loop, N, env...
	loop=$1 n=$2; shift 2
	out=$(mktemp)
	env "$@" valgrind --tool=callgrind --callgrind-out-file="$out" "$cost" "$loop" "$n" \
		>/dev/null 2>&1
	sed -n 's/^summary: //p' "$out"
	rm -f "$out"
}
for loop in epoll_ptr epoll_fd timer_settime "close(dup())" "free(malloc(64)), nothing" "free(malloc(64)), a hold" setvbuf sigaltstack; do
	line="$loop:"
	for cfg in "ODEBUG=" "ODEBUG=1 ODEBUG_OPTIONS=check_held=0" "ODEBUG=1"; do
		a=$(ir "$loop" 20000 $cfg)
		b=$(ir "$loop" 40000 $cfg)
		line="$line  [$cfg] $(( (b - a) / 20000 ))"
	done
	echo "$line instructions per round"
done
