#!/bin/sh
# The libevent module against the system's libevent, loaded by libodebug
# (no LD_PRELOAD of the module): the bug reported at the free() naming
# conn_drop, with origins naming conn_open (not the module's wrappers); the
# fixup takes the event out of the base; legal uses silent.
# usage: check.sh LIBODEBUG STORY MODULE_PATH
set -u
lib=$1 story=$2 modules=$3
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail() { echo "FAIL: $*"; sed 's/^/    /' "$out"; exit 1; }
LD_PRELOAD="$lib" ODEBUG=1 ODEBUG_OPTIONS="origins=1:module_path=$modules" "$story" >"$out" 2>&1
rc=$?
grep -q 'one-shot event fired 1 time' "$out" || fail "the one-shot event did not fire"
[ "$(grep -c '^ODEBUG: .* (active state ' "$out")" = 1 ] || fail "expected exactly one report"
grep -q 'ODEBUG: free active (active state 0) object: 0x[0-9a-f]* object type: libevent_event hint: on_timeout+0x0' "$out" ||
	fail "no report of the pending event"
grep -q '#0 0x[0-9a-f]* in conn_drop+' "$out" || fail "the report does not start at conn_drop"
sed -n '/object initialised at:/,/#0/p' "$out" | grep -q '#0 .* in conn_open+' ||
	fail "the init origin is not conn_open (shim frames not skipped?)"
sed -n '/object activated at:/,/#0/p' "$out" | grep -q '#0 .* in conn_open+' ||
	fail "the activate origin is not conn_open"
grep -q 'libodebug-libevent' "$out" && fail "a module frame in the report"
grep -q '^done' "$out" && [ "$rc" -eq 0 ] || fail "exit status $rc"
echo "libevent module: conn_drop reported with its origins, event removed by the fixup, legal uses silent"
