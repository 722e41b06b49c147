#!/bin/sh
# The CMake recipe against an installed libodebug: examples/ci/package's
# CMakeLists.txt finds it with find_package(libodebug), links
# libodebug::libodebug, and the program reports its bug under ODEBUG=1;
# its tests, registered with odebug_add_test(), run under the launcher
# with exitcode=1, so ctest fails the one whose program reports.
# usage: check-cmake-package.sh SRCDIR [PREFIX]
#   PREFIX  where libodebug is installed (CMAKE_PREFIX_PATH); none: the
#           system's (the Debian packages)
# Status 77 without cmake.
set -u
src=$1 prefix=${2:-}
command -v cmake >/dev/null 2>&1 || { echo "skip: cmake is not installed"; exit 77; }
tmp=$(mktemp -d /tmp/odebug-cmake.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cp -r "$src/examples/ci/package" "$tmp/p"
fail() { echo "FAIL: $*"; sed 's/^/    /' "$tmp/log" | tail -30; exit 1; }
cmake -S "$tmp/p" -B "$tmp/b" ${prefix:+"-DCMAKE_PREFIX_PATH=$prefix"} >"$tmp/log" 2>&1 ||
	fail "cmake: find_package(libodebug)"
launcher=$(sed -n 's/^-- odebug launcher: //p' "$tmp/log")
[ -x "$launcher" ] || fail "libodebug_LAUNCHER is '$launcher', not an executable"
cmake --build "$tmp/b" >"$tmp/log" 2>&1 || fail "cmake --build"
lib=$(ldd "$tmp/b/annotated" | sed -n 's/.*libodebug\.so\.1 => \([^ ]*\) .*/\1/p')
want=$(cd "${prefix:-/usr}" && pwd -P)
case $(readlink -f "$lib") in
"$want"/*) ;;
*) echo "log: annotated links $lib" >"$tmp/log"; fail "not linked to the libodebug under $want" ;;
esac
# gcc may clone conn_close as conn_close.constprop.0 under CFLAGS=-O2.
ODEBUG=1 "$tmp/b/annotated" >"$tmp/log" 2>&1 || fail "annotated: status $?"
grep -q '^ODEBUG: free active (active state 0) object: .* object type: conn_timer' "$tmp/log" &&
	grep -Eq '#0 0x[0-9a-f]* in conn_close(\.[a-z]+\.[0-9]+)?\+' "$tmp/log" && grep -q '^annotated: done$' "$tmp/log" ||
	fail "annotated under ODEBUG=1: no report at conn_close"
# Without the launcher the bug is silent and the test would pass.
(cd "$tmp/b" && ctest --output-on-failure) >"$tmp/log" 2>&1 && fail "ctest passed: odebug_add_test() checked nothing"
grep -Eq 'Test +#[0-9]+: annotated \.+\**Failed' "$tmp/log" &&
	grep -Eq 'Test +#[0-9]+: annotated-unchecked \.+ +Passed' "$tmp/log" &&
	grep -q '^ODEBUG: free active (active state 0) object: .* object type: conn_timer' "$tmp/log" ||
	fail "ctest: expected annotated to fail with the report and annotated-unchecked to pass"
echo "ok: find_package(libodebug) ${prefix:+in $prefix }found $(readlink -f "$lib") and $launcher; the program reports at conn_close; odebug_add_test() fails its test on $(cmake --version | sed -n 's/^cmake version //p')"
