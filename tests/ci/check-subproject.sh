#!/bin/sh
# The meson subproject recipe: examples/ci/package's meson.build takes
# dependency('libodebug') from libodebug as a subproject (its wrap file's
# [provide] section and libodebug's meson.override_dependency()), here the
# source tree itself in subprojects/libodebug; the program reports its bug
# under ODEBUG=1.  Builds libodebug.so again (without tests): minutes.
# usage: check-subproject.sh SRCDIR
set -u
src=$1
command -v meson >/dev/null 2>&1 || { echo "skip: meson is not installed"; exit 77; }
tmp=$(mktemp -d /tmp/odebug-subproject.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cp -r "$src/examples/ci/package" "$tmp/p"
ln -s "$(cd "$src" && pwd -P)" "$tmp/p/subprojects/libodebug"
fail() { echo "FAIL: $*"; sed 's/^/    /' "$tmp/log" | tail -30; exit 1; }
cd "$tmp/p" || exit 1
meson setup build --force-fallback-for=libodebug >"$tmp/log" 2>&1 || fail "meson setup"
grep -q 'Dependency libodebug found: YES .* (overridden)' "$tmp/log" ||
	fail "dependency('libodebug') not taken from the subproject"
nice ninja -C build -j2 annotated >"$tmp/log" 2>&1 || fail "ninja annotated"
ODEBUG=1 build/annotated >"$tmp/log" 2>&1 || fail "annotated: status $?"
grep -q '^ODEBUG: free active (active state 0) object: .* object type: conn_timer' "$tmp/log" &&
	grep -q '#0 0x[0-9a-f]* in conn_close+' "$tmp/log" && grep -q '^annotated: done$' "$tmp/log" ||
	fail "annotated under ODEBUG=1: no report at conn_close"
echo "ok: dependency('libodebug') from the subproject; the program reports at conn_close"
