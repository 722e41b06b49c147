#!/bin/sh
# A dlclose'd module's descriptors are never called through or read,
# and a module loaded where another was, with a
# descriptor at the same address, is not taken for it.
# Usage: check-stale-descr.sh PROGRAM MODULE TWIN-MODULE
set -u
prog=$1 mod=$2 twin=$3
fail=0
for what in exit free reuse; do
	out=$(ODEBUG=1 ODEBUG_OPTIONS=report_active_at_exit=1 "$prog" "$mod" $what 2>&1)
	rc=$?
	if [ $rc = 3 ]; then
		echo "ok - $what: SKIP (the module's pages were not free to map again)"
		continue
	fi
	if [ $rc = 0 ] && echo "$out" | grep -q "survived $what" &&
	   echo "$out" | grep -q 'object type: stale_type$' &&
	   ! echo "$out" | grep -q '(null)'; then
		echo "ok - $what: $(echo "$out" | grep -c 'object type: stale_type') reports, named, no call"
	else
		echo "FAIL - $what: status $rc"
		echo "$out" | sed 's/^/#   /'
		fail=1
	fi
done
out=$(ODEBUG=1 "$prog" "$mod" twin "$twin" 2>&1)
rc=$?
if [ $rc = 3 ]; then
	echo "ok - twin: SKIP (the second module was not loaded where the first was)"
elif [ $rc = 0 ] && echo "$out" | grep -q 'survived twin' &&
     [ "$(echo "$out" | grep -c 'object type: stale_twin$')" = 1 ] &&
     ! echo "$out" | grep -q 'object type: stale_type'; then
	echo "ok - twin: the object is reported under the second module's type"
else
	echo "FAIL - twin: status $rc"
	echo "$out" | sed 's/^/#   /'
	fail=1
fi
exit $fail
