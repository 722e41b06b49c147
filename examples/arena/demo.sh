#!/bin/sh
# The arena story, twice: the same server without and with libodebug.
# Exits 0 when both runs behave as doc/examples.md says.
# usage: demo.sh [REQUEST_BUG_PROGRAM]
prog=${1:-$(dirname "$0")/request-bug}
out=$(mktemp)
trap 'rm -f "$out"' EXIT

echo "=== 1. without libodebug: ./request-bug"
ODEBUG=0 "$prog" >"$out" 2>&1
plain=$?
sed 's/^/    /' "$out"
echo "    (exit status $plain)"
grep -q 'event loop: corrupted watch' "$out" && [ "$plain" -ne 0 ] &&
	! grep -q ODEBUG "$out" || {
	echo "demo: expected the event loop to abort"; exit 1; }

echo
echo "=== 2. with libodebug: ODEBUG=1 ./request-bug"
ODEBUG=1 "$prog" >"$out" 2>&1
checked=$?
sed 's/^/    /' "$out"
echo "    (exit status $checked)"
grep -q 'ODEBUG: free active (active state 0) .* object type: watch hint: on_body_data+' "$out" &&
	grep -q ' in arena_reset+' "$out" && grep -q ' in request_done+' "$out" &&
	[ "$(grep -c '^ODEBUG: free active' "$out")" -eq 1 ] &&
	grep -q '^done: 5 requests, 1 body reads, 0 watches still started' "$out" &&
	[ "$checked" -eq 0 ] || {
	echo "demo: expected one report naming request_done and a clean exit"; exit 1; }

echo
echo "Without libodebug the event loop crashed one request after the bug: the"
echo "upload's watch was still linked when the arena gave its memory away."
echo "With ODEBUG=1 arena_reset() reported it (hint: its callback, on_body_data;"
echo "backtrace: request_done), the fixup unlinked it, and the server went on."
