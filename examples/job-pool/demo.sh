#!/bin/sh
# The job-pool story, twice: the same unannotated program without and with
# libodebug (preloaded; its built-in pthread_mutex type needs no
# annotation).  Exits 0 when both runs behave as doc/examples.md says.
# usage: demo.sh [JOB_POOL_PROGRAM [LIBODEBUG]]
prog=${1:-$(dirname "$0")/job-pool}
lib=$(readlink -f "${2:-$(dirname "$0")/../../preload/libodebug.so}")
out=$(mktemp)
trap 'rm -f "$out"' EXIT

echo "=== 1. without libodebug: ./job-pool"
"$prog" >"$out" 2>&1
plain=$?
sed 's/^/    /' "$out"
echo "    (exit status $plain)"
grep -q "job 2's lock was released under its worker" "$out" && [ "$plain" -ne 0 ] &&
	! grep -q ODEBUG "$out" || {
	echo "demo: expected job 2's worker to abort"; exit 1; }

echo
echo "=== 2. with libodebug: LD_PRELOAD=libodebug.so ODEBUG=1 ODEBUG_OPTIONS=halt_on_error=1 ./job-pool"
LD_PRELOAD=$lib ODEBUG=1 ODEBUG_OPTIONS=halt_on_error=1 "$prog" >"$out" 2>&1
checked=$?
sed 's/^/    /' "$out"
echo "    (exit status $checked)"
grep -q 'ODEBUG: free active (held) .* object type: pthread_mutex' "$out" &&
	grep -q '^ODEBUG: held by thread [0-9]' "$out" &&
	grep -q '#0 .* in job_free+' "$out" && grep -q '#1 .* in worker+' "$out" &&
	! grep -q "released under its worker" "$out" && [ "$checked" -eq 1 ] || {
	echo "demo: expected one report naming job_free in worker, and exit status 1"; exit 1; }

echo
echo "Without libodebug, job 2's worker aborted: its mutex had been released under"
echo "it by the reporter's late unlock of job 1, whose memory job 2 now occupies."
echo "With ODEBUG=1 the free of job 1 was reported as it happened, in job_free()"
echo "called by worker(), with the thread still holding the mutex; halt_on_error=1"
echo "ended the program there."
