#!/bin/sh
# The timer story in userspace, twice: the same unannotated program
# without libodebug and under the odebug launcher.  Exits 0 when both runs
# behave as doc/examples.md says.
# usage: demo.sh [CONN_TIMER_PROGRAM [ODEBUG_LAUNCHER]]
prog=${1:-$(dirname "$0")/conn-timer}
launcher=${2:-odebug}
out=$(mktemp)
trap 'rm -f "$out"' EXIT

echo "=== 1. without libodebug: ./conn-timer"
"$prog" >"$out" 2>&1
plain=$?
sed 's/^/    /' "$out"
echo "    (exit status $plain)"
grep -q 'keepalive: connection .* is corrupted' "$out" && [ "$plain" -ne 0 ] || {
	echo "demo: expected the keepalive to find a corrupted connection and abort"; exit 1; }

echo
echo "=== 2. with libodebug: odebug -- ./conn-timer"
"$launcher" -- "$prog" >"$out" 2>&1
checked=$?
sed 's/^/    /' "$out"
echo "    (exit status $checked)"
grep -q 'ODEBUG: free active (active state 0) .* object type: posix_timer hint: keepalive_expired' "$out" &&
	grep -q '^ODEBUG: holder: timer 0x[0-9a-f]* armed, sival_ptr 0x' "$out" &&
	grep -q ' in conn_disconnect+' "$out" &&
	grep -q '^message AAAAAAAA..., done' "$out" &&
	! grep -q 'corrupted\|keepalive sent' "$out" && [ "$checked" -eq 0 ] || {
	echo "demo: expected a report naming conn_disconnect and a clean exit"; exit 1; }

echo
echo "Without libodebug the keepalive timer's thread aborted, a second after the bug,"
echo "in keepalive_expired().  With libodebug the report named conn_disconnect(), the"
echo "free() that left the timer armed, and the timer that held the connection; the"
echo "fixup disarmed it and the program ran to its end.  No line of the program"
echo "mentions libodebug."
