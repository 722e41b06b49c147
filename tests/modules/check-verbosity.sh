#!/bin/sh
# verbosity=1 says which annotation modules attached, and to which
# library: a program on libevent under the build tree's launcher names
# the libevent module; with modules=none, or verbosity=0, nothing is said.
# usage: check-verbosity.sh LAUNCHER EVPROG
set -u
launcher=$1 evprog=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
failed=0

"$launcher" -o verbosity=1 "$evprog" del_then_free >/dev/null 2>"$out"
if grep -q '^ODEBUG: module libevent attached: .*libodebug-libevent\.so for .*libevent' "$out"; then
	echo "ok: verbosity=1 names the libevent module and its library"
else
	echo "FAIL: verbosity=1 did not name the libevent module:"; cat "$out"; failed=1
fi
for o in "verbosity=1:modules=none" "verbosity=0"; do
	"$launcher" -o "$o" "$evprog" del_then_free >/dev/null 2>"$out"
	if grep -q 'module libevent attached' "$out"; then
		echo "FAIL: $o still says the module attached"; failed=1
	else
		echo "ok: $o says nothing of modules"
	fi
done
exit $failed
