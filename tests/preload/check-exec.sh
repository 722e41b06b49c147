#!/bin/sh
# The end-of-run output (the summary, print_stats) is written before an
# exec replaces the image, once, and every exec function still runs its
# program with its arguments and environment.
# Usage: check-exec.sh LIBODEBUG APP
set -u
lib=$1 app=$2
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
fail=0

run() {	# run ODEBUG MODE: the combined output in $dir/out, status in rc
	ODEBUG=$1 ODEBUG_OPTIONS=${OPTS:-print_stats=1} LD_PRELOAD="$lib" "$app" "$2" >"$dir/out" 2>&1
	rc=$?
	summaries=$(grep -c '^ODEBUG: SUMMARY:' "$dir/out")
	stats=$(grep -c 'pool_used' "$dir/out")
}

check() {	# check WHAT CONDITION...
	what=$1; shift
	if "$@"; then echo "ok - $what"; else echo "FAIL - $what"; sed 's/^/# /' "$dir/out"; fail=1; fi
}

# The line number of the first line matching $1 (0: none).
line_of() {
	grep -n -m1 -e "$1" "$dir/out" | cut -d: -f1 | grep . || echo 0
}

for f in execve execv execvp execvpe execl execle execlp fexecve execveat; do
	case $f in execve | execvpe | execle | fexecve | execveat) env=explicit ;; *) env=inherited ;; esac
	run 1 "$f"
	check "$f: the target ran with its arguments (status $rc)" \
		grep -qx "target: a b c env=$env" "$dir/out"
	check "$f: one summary (got $summaries)" test "$summaries" = 1
	# (the new image prints its own statistics when it inherits print_stats=1)
	before=$(sed -n '/^target:/q;p' "$dir/out" | grep -c pool_used)
	check "$f: print_stats once before the exec (got $before)" test "$before" = 1
	check "$f: the summary before the new image's output" \
		test "$(line_of '^ODEBUG: SUMMARY:')" -lt "$(line_of '^target:')"
	run 0 "$f"
	check "$f, ODEBUG=0: the target ran, nothing else" \
		test "$(cat "$dir/out")" = "target: a b c env=$env"
done

run 1 fail
check "a failed exec returns -1 with errno ENOENT" grep -qx 'failed exec: -1 ENOENT' "$dir/out"
check "a failed exec, then exit: one summary (got $summaries)" test "$summaries" = 1
check "a failed exec, then exit: print_stats once (got $stats)" test "$stats" = 1
run 0 fail
check "ODEBUG=0: a failed exec returns -1 with errno ENOENT" \
	grep -qx 'failed exec: -1 ENOENT' "$dir/out"

run 1 fail-report
check "a failed exec, a report, exit: two summaries (got $summaries)" test "$summaries" = 2
check "the one at exit counts the whole run" \
	grep -q '^ODEBUG: SUMMARY: 2 warnings' "$dir/out"

run 1 vfork
check "vfork: the target ran" grep -qx 'target: a b c env=explicit' "$dir/out"
check "vfork: one summary (got $summaries)" test "$summaries" = 1
check "vfork: the parent's, at its exit, not the child's before its exec" \
	test "$(line_of '^ODEBUG: SUMMARY:')" -gt "$(line_of '^child exited 0')"
# fork then exec: the child's objects and statistics are its parent's copies.
OPTS=print_stats=1:report_active_at_exit=1 run 1 fork
before=$(sed -n '/^target:/q;p' "$dir/out" | grep -c -e pool_used -e SUMMARY -e 'exit active')
check "fork: the child prints nothing before its exec (got $before lines)" test "$before" = 0
check "fork: one summary, the parent's (got $summaries)" test "$summaries" = 1
check "fork: the parent reports its active object at exit" grep -q '^ODEBUG: exit active' "$dir/out"
run 1 fork-report
check "fork-report: the child's summary before its exec, the parent's at exit (got $summaries)" \
	test "$summaries" = 2 -a "$(line_of '^ODEBUG: SUMMARY:')" -lt "$(line_of '^target:')"
exit $fail
