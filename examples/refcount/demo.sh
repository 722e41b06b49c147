#!/bin/sh
# The refcount story, twice: the same program without and with libodebug.
# Exits 0 when both runs behave as doc/examples.md says.
# usage: demo.sh [NOTICE_BUG_PROGRAM]
prog=${1:-$(dirname "$0")/notice-bug}
out=$(mktemp)
trap 'rm -f "$out"' EXIT

echo "=== 1. without libodebug: ./notice-bug"
ODEBUG=0 "$prog" >"$out" 2>&1
plain=$?
sed 's/^/    /' "$out"
echo "    (exit status $plain)"
grep -q 'session pool: corrupted free list' "$out" && [ "$plain" -ne 0 ] &&
	! grep -q ODEBUG "$out" || {
	echo "demo: expected the session pool to abort"; exit 1; }

echo
echo "=== 2. with libodebug: ODEBUG=1 ./notice-bug"
ODEBUG=1 "$prog" >"$out" 2>&1
checked=$?
sed 's/^/    /' "$out"
echo "    (exit status $checked)"
grep -q 'ODEBUG: activate destroyed (active state 0) .* object type: session hint: print_notice+' "$out" &&
	grep -q '#0 .* in session_send+' "$out" && grep -q '#1 .* in notice_deliver+' "$out" &&
	grep -q '^ODEBUG: next step: ' "$out" && [ "$(grep -c '^ODEBUG: ' "$out")" -eq 4 ] &&
	grep -q '^ODEBUG: SUMMARY: 1 warning, 1 distinct report (1 printed' "$out" &&
	! grep -q 'your export is ready' "$out" &&
	grep -q '^\[carol, session 3\] welcome' "$out" && grep -q '^done$' "$out" &&
	[ "$checked" -eq 0 ] || {
	echo "demo: expected one report naming notice_deliver and a clean exit"; exit 1; }

echo
echo "Without libodebug the notice seemed delivered, and the session pool aborted"
echo "two logins later: the notice was written into alice's freed slot, over the"
echo "pool's free-list link.  With ODEBUG=1 the send was reported the moment"
echo "notice_deliver() used the session after its last put, and refused."
