#!/bin/sh
# run-fuzz.sh HARNESS CORPUS_DIR SECONDS [libFuzzer options...]
#
# Runs a libFuzzer harness for SECONDS from the seed corpus in CORPUS_DIR
# (read only: new inputs go to a scratch directory, removed afterwards).
# A crashing input is kept as $FUZZ_ARTIFACTS/crash-* (default: the current
# directory); replay it with "HARNESS FILE".  Exit status: the harness's.
set -eu
[ $# -ge 3 ] || { echo "usage: $0 HARNESS CORPUS_DIR SECONDS [libFuzzer options...]" >&2; exit 2; }
exe=$1 corpus=$2 secs=$3
shift 3
artifacts=${FUZZ_ARTIFACTS:-$PWD}
scratch=$(mktemp -d "${TMPDIR:-/tmp}/odebug-fuzz.XXXXXX")
trap 'rm -rf "$scratch"' EXIT INT TERM
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
echo "+ $exe -max_total_time=$secs -timeout=10 -print_final_stats=1 -artifact_prefix=$artifacts/ $* $scratch $corpus"
"$exe" -max_total_time="$secs" -timeout=10 -print_final_stats=1 \
	-artifact_prefix="$artifacts/" "$@" "$scratch" "$corpus"
