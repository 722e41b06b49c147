#!/bin/sh
# The timer story, twice: the same program without and with libodebug.
# Exits 0 when both runs behave as doc/examples.md says.
# usage: demo.sh [CONN_BUG_PROGRAM]
prog=${1:-$(dirname "$0")/conn-bug}
out=$(mktemp)
trap 'rm -f "$out"' EXIT

echo "=== 1. without libodebug: ./conn-bug"
ODEBUG=0 "$prog" >"$out" 2>&1
plain=$?
sed 's/^/    /' "$out"
echo "    (exit status $plain)"
grep -q 'timer wheel: corrupted timer' "$out" && [ "$plain" -ne 0 ] || {
	echo "demo: expected the timer wheel to abort"; exit 1; }

echo
echo "=== 2. with libodebug: ODEBUG=1 ./conn-bug"
ODEBUG=1 "$prog" >"$out" 2>&1
checked=$?
sed 's/^/    /' "$out"
echo "    (exit status $checked)"
grep -q 'ODEBUG: free active (active state 0) .* object type: timer hint: keepalive_expired' "$out" &&
	grep -q ' in conn_disconnect+' "$out" && [ "$checked" -eq 0 ] || {
	echo "demo: expected a report naming conn_disconnect and a clean exit"; exit 1; }

echo
echo "Without libodebug the wheel crashed in timer_tick(), ten ticks after the bug."
echo "With ODEBUG=1 the report named conn_disconnect(), the free() that left the"
echo "timer armed; the fixup disarmed it and the program ran to its end."
