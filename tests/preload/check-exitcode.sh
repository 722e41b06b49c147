#!/bin/sh
# exitcode=N sets the exit status without losing anyone's data, and counts
# per process.  Usage: check-exitcode.sh LIBODEBUG APP
set -u
lib=$1 app=$2
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
fail=0

run() {	# run SCENARIO: sets rc, out, saved
	rm -f "$dir/saved"
	out=$(EXIT_LIB_FILE="$dir/saved" ODEBUG=1 ODEBUG_OPTIONS=exitcode=7 \
		LD_PRELOAD="$lib" "$app" "$1" 2>"$dir/err")
	rc=$?
	saved=$(grep -c '^saved by pid' "$dir/saved" 2>/dev/null)
}

check() {	# check WHAT CONDITION...
	what=$1; shift
	if "$@"; then echo "ok - $what"; else echo "FAIL - $what"; fail=1; fi
}

run report
check "a report makes the status 7 (got $rc)" test "$rc" = 7
check "the library's destructor ran in parent and child (saved $saved)" test "$saved" = 2
check "stdout was flushed: '$out'" test "$out" = "clean child exited 0; buffered, no newline"
check "the report was printed" grep -q 'deactivate not available' "$dir/err"

run clean
check "no report: status 0 (got $rc)" test "$rc" = 0
check "no report: the destructor ran (saved $saved)" test "$saved" = 1

run child-reports
check "a clean parent of a reporting child exits 0 (got $rc)" test "$rc" = 0
check "the reporting child exits 7: '$out'" test "$out" = "reporting child exited 7; buffered, no newline"
check "child and parent destructors ran (saved $saved)" test "$saved" = 2
exit $fail
