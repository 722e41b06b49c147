#!/bin/sh
# smoke.sh [BUILD_DIR] [SECONDS]: the CI fuzzing stage.  Configures a clang
# build with the libFuzzer harnesses (once), builds only them, and runs each
# for SECONDS (default 20) from its seed corpus.
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-build-fuzz}
export FUZZ_ARTIFACTS=${FUZZ_ARTIFACTS:-$build}	# crash-* files
secs=${2:-20}
if [ ! -f "$build/build.ninja" ]; then
	CC=clang meson setup "$build" "$src" -Dfuzz=true -Dinterpose=false \
		-Dexamples=false
fi
ninja -C "$build" tests/fuzz/fuzz-options tests/fuzz/fuzz-ops tests/fuzz/fuzz-suppress
"$src/tests/fuzz/run-fuzz.sh" "$build/tests/fuzz/fuzz-options" \
	"$src/tests/fuzz/corpus/options" "$secs" \
	-close_fd_mask=2 -dict="$src/tests/fuzz/options.dict"
"$src/tests/fuzz/run-fuzz.sh" "$build/tests/fuzz/fuzz-ops" \
	"$src/tests/fuzz/corpus/ops" "$secs"
"$src/tests/fuzz/run-fuzz.sh" "$build/tests/fuzz/fuzz-suppress" \
	"$src/tests/fuzz/corpus/suppress" "$secs" -close_fd_mask=2
