#!/bin/sh
# dlclose() of a module holding an active static object, through
# LD_PRELOAD and through -lodebug.
# usage: check-unload.sh LIBODEBUG HOST_PRELOAD HOST_LINKED PLUGIN
set -u
lib=$1 host_pre=$2 host_linked=$3 plugin=$4
out=$(mktemp)
trap 'rm -f "$out"' EXIT
status=0
fail() { echo "FAIL: $*"; sed 's/^/    /' "$out"; status=1; }
na=5	# ODEBUG_STATE_NOTAVAILABLE

for mode in preload linked; do
	if [ $mode = preload ]; then
		run() { ODEBUG=1 LD_PRELOAD=$lib "$host_pre" "$plugin" "$1" >"$out" 2>&1; }
	else
		run() { ODEBUG=1 "$host_linked" "$plugin" "$1" >"$out" 2>&1; }
	fi
	run leak || fail "$mode leak: exit status $?"
	grep -q 'ODEBUG: free active (active state 0) object: 0x[0-9a-f]* object type: plugin_ticker hint: 0x0' "$out" ||
		fail "$mode leak: no report"
	grep -q "ODEBUG: the object was in .*libodebug-plugin.so, unloaded by this dlclose()" "$out" ||
		fail "$mode leak: the module is not named"
	grep -q '#0 0x[0-9a-f]* in unload_plugin+' "$out" || fail "$mode leak: the caller is not named"
	grep -q "after dlclose: state $na" "$out" || fail "$mode leak: tracker not dropped"
	[ "$(grep -c 'ODEBUG: free active' "$out")" = 1 ] || fail "$mode leak: not exactly one report"

	run clean || fail "$mode clean: exit status $?"
	grep -q 'ODEBUG:' "$out" && fail "$mode clean: a report for a module that cleaned up"
	grep -q "after dlclose: state $na" "$out" || fail "$mode clean: tracker left"

	run twice || fail "$mode twice: exit status $?"
	grep -q 'after the first dlclose: state 3' "$out" || fail "$mode twice: first dlclose changed the object"
	[ "$(grep -c 'ODEBUG: free active' "$out")" = 1 ] || fail "$mode twice: not exactly one report"
	sed -n '/after the first/q;/ODEBUG/p' "$out" | grep -q . && fail "$mode twice: report before the unloading dlclose"
done
[ $status = 0 ] && echo "check-unload: leak reported once, clean and non-unloading dlclose silent (LD_PRELOAD and -lodebug)"
exit $status
