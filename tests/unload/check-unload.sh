#!/bin/sh
# dlclose() of a module holding an active static object, through
# LD_PRELOAD and through -lodebug.
# With the launcher's --audit (LD_AUDIT), the module is checked before its
# unmap: with hint and fixup.
# HOST_BASE calls dlclose at glibc's baseline node BASE_NODE (GLIBC_2.2.5
# on x86-64), as a program linked before glibc 2.34: interposed too.
# usage: check-unload.sh LIBODEBUG HOST_PRELOAD HOST_LINKED PLUGIN LAUNCHER HOST_BASE BASE_NODE
set -u
lib=$1 host_pre=$2 host_linked=$3 plugin=$4 launcher=$5 host_base=$6 base_node=$7
out=$(mktemp)
trap 'rm -f "$out"' EXIT
status=0
fail() { echo "FAIL: $*"; sed 's/^/    /' "$out"; status=1; }
na=5	# ODEBUG_STATE_NOTAVAILABLE

if command -v nm >/dev/null; then
	nm -D "$host_base" | grep -q " U dlclose@$base_node\$" ||
		fail "$host_base is not bound to dlclose@$base_node: $(nm -D "$host_base" | grep dlclose)"
fi
for mode in preload linked base; do
	if [ $mode = preload ]; then
		run() { ODEBUG=1 LD_PRELOAD=$lib "$host_pre" "$plugin" "$1" >"$out" 2>&1; }
	elif [ $mode = base ]; then
		run() { ODEBUG=1 LD_PRELOAD=$lib "$host_base" "$plugin" "$1" >"$out" 2>&1; }
	else
		run() { ODEBUG=1 "$host_linked" "$plugin" "$1" >"$out" 2>&1; }
	fi
	run leak || fail "$mode leak: exit status $?"
	grep -q 'ODEBUG: free active (active state 0) object: 0x[0-9a-f]* object type: plugin_ticker$' "$out" ||
		fail "$mode leak: no report"
	grep -q "ODEBUG: the object was in .*libodebug-plugin.so, unloaded by this dlclose()" "$out" ||
		fail "$mode leak: the module is not named"
	grep -q '#0 0x[0-9a-f]* in unload_plugin+' "$out" || fail "$mode leak: the caller is not named"
	grep -q "after dlclose: state $na" "$out" || fail "$mode leak: tracker not dropped"
	grep -q 'plugin: fixup_free' "$out" && fail "$mode leak: a fixup ran after the unmap"
	[ "$(grep -c 'ODEBUG: free active' "$out")" = 1 ] || fail "$mode leak: not exactly one report"

	run clean || fail "$mode clean: exit status $?"
	grep -q 'ODEBUG:' "$out" && fail "$mode clean: a report for a module that cleaned up"
	grep -q "after dlclose: state $na" "$out" || fail "$mode clean: tracker left"

	run twice || fail "$mode twice: exit status $?"
	grep -q 'after the first dlclose: state 3' "$out" || fail "$mode twice: first dlclose changed the object"
	[ "$(grep -c 'ODEBUG: free active' "$out")" = 1 ] || fail "$mode twice: not exactly one report"
	sed -n '/after the first/q;/ODEBUG/p' "$out" | grep -q . && fail "$mode twice: report before the unloading dlclose"
done
# --audit: before the unmap, with the hint and the fixup; the backtrace
# starts at the caller of dlclose() (not la_objclose, ld.so or libc)
for host in "$host_pre" "$host_linked" "$host_base"; do
	ODEBUG_LIBRARY=$lib "$launcher" --audit "$host" "$plugin" leak >"$out" 2>&1 || fail "audit leak: exit status $?"
	grep -q 'ODEBUG: free active (active state 0) object: 0x[0-9a-f]* object type: plugin_ticker hint: plugin_start+0x0' "$out" ||
		fail "audit leak: no report with the hint"
	grep -q 'plugin: fixup_free stopped the ticker' "$out" || fail "audit leak: the fixup did not run"
	grep -q 'ODEBUG: the object(s) above were in .*libodebug-plugin.so, unloaded by dlclose()' "$out" ||
		fail "audit leak: the module is not named"
	grep -q '^ *#0 0x[0-9a-f]* in unload_plugin+' "$out" ||
		fail "audit leak ($host): the first frame is not the caller of dlclose()"
	grep -q '^ *#1 0x[0-9a-f]* in main+' "$out" || fail "audit leak ($host): frame #1 is not main"
	[ "$(grep -c 'ODEBUG: free active' "$out")" = 1 ] || fail "audit leak: not exactly one report"
	grep -q "after dlclose: state $na" "$out" || fail "audit leak: tracker not dropped"
done
ODEBUG_LIBRARY=$lib "$launcher" --audit "$host_pre" "$plugin" clean >"$out" 2>&1 || fail "audit clean: exit status $?"
grep -q 'ODEBUG:' "$out" && fail "audit clean: a report"
ODEBUG_LIBRARY=$lib "$launcher" --audit "$host_pre" "$plugin" twice >"$out" 2>&1 || fail "audit twice: exit status $?"
[ "$(grep -c 'ODEBUG: free active' "$out")" = 1 ] || fail "audit twice: not exactly one report"
sed -n '/after the first/q;/ODEBUG/p' "$out" | grep -q . && fail "audit twice: report before the unloading dlclose"
# A report that is counted but not printed (a repeat, beyond max_reports)
# gets no "above were in" line: one line per printed report.
for opt in max_reports=1 max_reports=10; do
	ODEBUG_LIBRARY=$lib "$launcher" -o "$opt" --audit "$host_pre" "$plugin" reload >"$out" 2>&1 ||
		fail "audit reload ($opt): exit status $?"
	grep -q 'after reload 2' "$out" || fail "audit reload ($opt): did not run"
	reports=$(grep -c 'ODEBUG: free active' "$out")
	lines=$(grep -c 'ODEBUG: the object(s) above were in' "$out")
	[ "$lines" = "$reports" ] ||
		fail "audit reload ($opt): $lines 'above were in' lines for $reports printed reports"
done
[ "$reports" -ge 1 ] || fail "audit reload: no report printed"

[ $status = 0 ] && echo "check-unload: leak reported once, clean and non-unloading dlclose silent (LD_PRELOAD, -lodebug, dlclose@$base_node, --audit)"
exit $status
