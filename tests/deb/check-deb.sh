#!/bin/sh
# The Debian packages, end to end (CI stage; as root on Debian 12):
#   1. build-dependencies from debian/control (apt-get build-dep);
#   2. dpkg-buildpackage -us -uc -b in a clean copy of the tree (the
#      build runs the suites that need no root, daemon, debugger or timing);
#      its log must hold no stray TAP line and no undefined substvar;
#   3. lintian: no error and no warning (informational tags are listed);
#   4. the stale-symbols check: dpkg-gensymbols must report no change;
#   5. apt-get install of the three packages, with all three annotation
#      modules in libodebug1;
#   6. an annotated example built with pkg-config only and run, then the
#      CMake package recipe (tests/ci/check-cmake-package.sh: find_package,
#      libodebug::libodebug), then odebug from PATH; odebug --audit on
#      tests/unload's plugin (libodebug-audit.so from the odebug package's
#      private directory).
# Packages this script installed are purged again at the end.
# usage: tests/deb/check-deb.sh [WORKDIR]
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
keep=${1:+yes}
work=${1:-$(mktemp -d /tmp/odebug-deb.XXXXXX)}
sudo=
[ "$(id -u)" = 0 ] || sudo=sudo
pkgs="libodebug1 libodebug-dev odebug"
installed_before=
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' &&
		installed_before="$installed_before $p"
done
cleanup() {
	[ -n "$installed_before" ] ||
		$sudo apt-get purge -y -q $pkgs >/dev/null 2>&1 || true
	[ -n "$keep" ] || rm -rf "$work"
}
trap 'cleanup' EXIT
step() { echo "== deb: $*"; }
die() { echo "FAIL: $*"; exit 1; }

step "build-dependencies (debian/control), lintian"
export DEBIAN_FRONTEND=noninteractive
# apt-get ARGS, again after an update if the package lists are stale
apt_get() { $sudo apt-get -y -q "$@" >/dev/null || { $sudo apt-get update -q >/dev/null &&
	$sudo apt-get -y -q "$@" >/dev/null; }; }
apt_get install --no-install-recommends dpkg-dev fakeroot lintian || die "apt-get install lintian"
apt_get build-dep "$src" || die "apt-get build-dep"

step "dpkg-buildpackage -us -uc -b in $work"
version=$(dpkg-parsechangelog -l "$src/debian/changelog" -SVersion)
tree=$work/libodebug-$version
mkdir -p "$tree"
# The tracked and new files of the work tree, not its build directories.
(cd "$src" && git ls-files -z -c -o --exclude-standard | xargs -0 sh -c \
	'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh |
	tar --null -T - -cf -) | tar -C "$tree" -xf -
(cd "$tree" && dpkg-buildpackage -us -uc -b) >"$work/build.log" 2>&1 || {
	tail -60 "$work/build.log"; die "dpkg-buildpackage"; }
grep -E '^ *[0-9]+/[0-9]+ |^(Ok|Fail|Skipped):' "$work/build.log" | sed 's/^/    /' || true
# A TAP test's stray line passes unseen in meson test's summary.
if grep -q 'Unknown TAP output lines' "$work/build.log"; then
	grep -B4 'Unknown TAP output lines' "$work/build.log"
	die "a TAP test printed lines that are not TAP"
fi
if grep -q 'substitution variable .* used, but is not defined' "$work/build.log"; then
	grep 'substitution variable' "$work/build.log" | sort -u
	die "debian/control uses a substitution variable no step defines"
fi
# New or lost symbols: debian/libodebug1.symbols must be regenerated
# (the command is in debian/README.source).
if grep -q 'dpkg-gensymbols: warning' "$work/build.log"; then
	sed -n '/dpkg-gensymbols: warning/,/^dh_/p' "$work/build.log"
	die "debian/libodebug1.symbols is stale: regenerate it (debian/README.source)"
fi
changes=$(ls "$work"/libodebug_*.changes)

step "lintian (errors and warnings fail; informational tags listed)"
lintian --fail-on error,warning --info --display-info "$changes" || die "lintian"

step "apt-get install the packages"
apt_get install --no-install-recommends "$work"/*.deb || die "apt-get install of the packages"
dpkg -L libodebug1 | grep -q '/libodebug\.so\.1$' || die "libodebug.so.1 not in libodebug1"

step "an annotated example against the installed library, pkg-config only"
cc -g -rdynamic -fno-optimize-sibling-calls -o "$work/example" "$src/tests/deb/example.c" \
	$(pkg-config --cflags --libs libodebug) || die "example did not build"
# (/lib is /usr/lib on a merged-/usr system; the loader may name either.)
ldd "$work/example" | grep -Eq "libodebug\.so\.1 => (/usr)?/lib/" ||
	die "example not linked to the installed library: $(ldd "$work/example")"
ODEBUG=1 "$work/example" >"$work/out" 2>&1
cat "$work/out"
grep -q '^ODEBUG: free active (active state 0) object: .* object type: conn_timer' "$work/out" &&
	grep -q ' in conn_close+' "$work/out" &&
	grep -q '^ODEBUG: SUMMARY: 3 warnings, 1 distinct report (1 printed, 0 suppressed), 3 fixed up$' "$work/out" &&
	grep -q '^example: done$' "$work/out" || die "example: expected one report, a summary, a clean end"
ODEBUG=0 "$work/example" >"$work/out" 2>&1
[ "$(cat "$work/out")" = "example: done" ] || die "example: not silent without ODEBUG"

step "the CMake package: find_package(libodebug) against the installed packages"
apt_get install --no-install-recommends cmake || die "apt-get install cmake"
dpkg -L libodebug-dev | grep -q '/cmake/libodebug/libodebugConfig\.cmake$' ||
	die "libodebugConfig.cmake not in libodebug-dev"
"$src/tests/ci/check-cmake-package.sh" "$src" || die "the CMake package recipe"

step "odebug from PATH"
[ "$(command -v odebug)" = /usr/bin/odebug ] || die "odebug is not /usr/bin/odebug"
odebug --version
cc -o "$work/plain" -x c - <<'C'
#include <stdio.h>
#include <stdlib.h>
int main(void) { free(malloc(16)); puts("plain: done"); return 0; }
C
odebug -o print_stats=1 "$work/plain" >"$work/out" 2>&1
grep -q '^plain: done$' "$work/out" && grep -q '^warnings *: 0$' "$work/out" &&
	! grep -q SUMMARY "$work/out" || { cat "$work/out"; die "odebug ./plain"; }
odebug -o max_reports=1 "$work/example" >"$work/out" 2>&1
grep -q ' in conn_close+' "$work/out" || { cat "$work/out"; die "odebug ./example"; }
dpkg -L libodebug1 | grep -q '/odebug-audit/libodebug-audit\.so$' || die "libodebug-audit.so not in libodebug1"
cc -rdynamic -fno-optimize-sibling-calls -fno-inline -o "$work/host" "$src/tests/unload/host.c" \
	$(pkg-config --cflags libodebug) -ldl || die "the dlclose host did not build"
cc -shared -fPIC -o "$work/plugin.so" "$src/tests/unload/plugin.c" $(pkg-config --cflags libodebug) ||
	die "the plugin did not build"
odebug --audit "$work/host" "$work/plugin.so" leak >"$work/out" 2>&1 || { cat "$work/out"; die "odebug --audit: status $?"; }
cat "$work/out"
grep -q 'plugin: fixup_free stopped the ticker' "$work/out" &&
	grep -q 'checked by libodebug-audit.so before the unmap' "$work/out" &&
	grep -q '^ *#0 0x[0-9a-f]* in unload_plugin+' "$work/out" || die "odebug --audit: expected the audit report and fixup"
# The annotation modules: all three packaged (debian/rules builds with
# -Dmodules=enabled); the libevent one loaded by libodebug for a program
# on libevent (its story: the pending event freed in conn_drop reported).
for m in libevent libuv glib; do
	dpkg -L libodebug1 | grep -q "/odebug-modules/libodebug-$m\.so\$" ||
		die "libodebug-$m.so not in libodebug1"
done
if pkg-config --exists libevent; then
	cc -rdynamic -fno-optimize-sibling-calls -fno-inline -o "$work/event-story" \
		"$src/examples/libevent-shim/story.c" $(pkg-config --cflags --libs libevent) ||
		die "the libevent story did not build"
	odebug "$work/event-story" >"$work/out" 2>&1 || { cat "$work/out"; die "odebug ./event-story: status $?"; }
	grep -q 'object type: libevent_event' "$work/out" && grep -q ' in conn_drop+' "$work/out" &&
		grep -q '^done$' "$work/out" || { cat "$work/out"; die "odebug ./event-story: no module report"; }
fi
for m in man1/odebug.1 man7/odebug.7 man3/debug_object_init.3 man3/debug_object_free.3; do
	[ -f "/usr/share/man/$m.gz" ] || die "/usr/share/man/$m.gz missing"
done
echo "ok: packages built, lintian clean, installed, example and odebug work"
