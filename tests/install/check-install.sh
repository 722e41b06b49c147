#!/bin/sh
# meson install into a temporary DESTDIR, then use only the installed tree:
# check what is there, build an annotated example with pkg-config
# (PKG_CONFIG_SYSROOT_DIR), run it under the installed launcher, check the
# report; the same for odebug --audit with tests/unload's host and plugin,
# and for the libevent module with its story (examples/libevent-shim);
# the CMake package recipe (tests/ci/check-cmake-package.sh).
# usage: check-install.sh MESON BUILD_ROOT SOURCE_ROOT VERSION PREFIX BINDIR
#                         LIBDIR INCLUDEDIR MANDIR
set -u
meson=$1 build=$2 src=$3 version=$4 prefix=$5
bindir=$6 libdir=$7 includedir=$8 mandir=$9
command -v cc >/dev/null || { echo "SKIP: no cc"; exit 77; }
command -v pkg-config >/dev/null || { echo "SKIP: no pkg-config"; exit 77; }

failed=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; failed=1; }

tmp=$(mktemp -d /tmp/odebug-install.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
dest=$tmp/dest
# in_dest DIR: where the install puts DIR (relative to the prefix or not)
in_dest() { case $1 in /*) echo "$dest$1" ;; *) echo "$dest$prefix/$1" ;; esac; }
bin=$(in_dest "$bindir") lib=$(in_dest "$libdir") inc=$(in_dest "$includedir")
man=$(in_dest "$mandir")

if "$meson" install -C "$build" --destdir "$dest" --no-rebuild >"$tmp/install.log" 2>&1; then
	ok "meson install --destdir $dest"
else
	cat "$tmp/install.log"
	echo "FAIL: meson install"
	exit 1
fi

# --- what is installed ---
[ -f "$lib/libodebug.so.1.0.0" ] && [ ! -L "$lib/libodebug.so.1.0.0" ] &&
	[ "$(readlink "$lib/libodebug.so.1")" = libodebug.so.1.0.0 ] &&
	[ "$(readlink "$lib/libodebug.so")" = libodebug.so.1 ] &&
	ok "library with its soname links: libodebug.so -> libodebug.so.1 -> libodebug.so.1.0.0" ||
	bad "library or soname links: $(ls -l "$lib" 2>&1 | tr '\n' ' ')"
if command -v readelf >/dev/null; then
	dyn=$(readelf -dW "$lib/libodebug.so.1.0.0")
	printf '%s\n' "$dyn" | grep -q 'SONAME.*\[libodebug\.so\.1\]' && ok "SONAME libodebug.so.1" ||
		bad "SONAME: $(printf '%s\n' "$dyn" | grep SONAME)"
	printf '%s\n' "$dyn" | grep -q 'RPATH\|RUNPATH' && bad "installed library has an RPATH/RUNPATH" ||
		ok "no RPATH/RUNPATH in the installed library"
fi
cmp -s "$inc/odebug.h" "$src/include/odebug.h" && ok "odebug.h" || bad "odebug.h missing or different"
[ -f "$lib/pkgconfig/libodebug.pc" ] && ok "libodebug.pc" || bad "no $lib/pkgconfig/libodebug.pc"
[ -f "$bin/odebug" ] && [ -x "$bin/odebug" ] && ok "launcher $bindir/odebug" || bad "no launcher in $bin"
grep -q "$build" "$bin/odebug" && bad "the installed launcher names the build directory"
for page in man1/odebug.1 man7/odebug.7 man3/debug_object_init.3 man3/debug_obj_descr.3 \
	    man3/debug_object_activate.3 man3/debug_check_no_obj_freed.3; do
	[ -f "$man/$page" ] || bad "man page $page not installed"
done
ok "man pages: $(cd "$man" && find . -type f | wc -l) files"
# Everything meson plans to install is there.
missing=$(python3 - "$build/meson-info/intro-installed.json" "$dest" <<'PY'
import json, os, sys
for f in json.load(open(sys.argv[1])).values():
    if not os.path.lexists(sys.argv[2] + f):
        print(f)
PY
)
[ -z "$missing" ] && ok "every file of meson's install plan" || bad "not installed: $missing"

# --- build an annotated example with pkg-config only ---
PKG_CONFIG_LIBDIR=$lib/pkgconfig PKG_CONFIG_PATH='' PKG_CONFIG_SYSROOT_DIR=$dest
export PKG_CONFIG_LIBDIR PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR
got=$(pkg-config --modversion libodebug)
[ "$got" = "$version" ] && ok "pkg-config --modversion: $got" || bad "pkg-config --modversion: '$got'"
cflags=$(pkg-config --cflags libodebug) libs=$(pkg-config --libs libodebug)
echo "   cflags: $cflags"
echo "   libs:   $libs"
case " $cflags $libs " in
*" -I$inc "*" -L$lib "*) ok "pkg-config points into the DESTDIR" ;;
*) bad "pkg-config flags do not point into $dest" ;;
esac
ex=$src/examples/arena
# shellcheck disable=SC2086
if cc -rdynamic -fno-optimize-sibling-calls -fno-inline $cflags \
	"$ex/arena.c" "$ex/watch.c" "$ex/request-bug.c" -o "$tmp/request-bug" $libs \
	2>"$tmp/cc.log"; then
	ok "built examples/arena against the installed tree"
else
	cat "$tmp/cc.log"
	bad "building examples/arena with pkg-config flags"
fi

# --- run it under the installed launcher ---
unset LD_LIBRARY_PATH LD_PRELOAD ODEBUG ODEBUG_OPTIONS
if ldconfig -p 2>/dev/null | grep -q 'libodebug\.so\.1 '; then
	echo "   (a libodebug.so.1 is installed system-wide: not checking that the example needs the launcher)"
elif "$tmp/request-bug" >"$tmp/out" 2>&1; then
	bad "the example ran without the launcher: where did it find libodebug.so.1?"
else
	ok "alone, the example does not find libodebug.so.1: $(head -1 "$tmp/out")"
fi
"$bin/odebug" -o max_reports=3 "$tmp/request-bug" >"$tmp/out" 2>&1
rc=$?
sed 's/^/   | /' "$tmp/out"
if [ "$rc" -eq 0 ] &&
   grep -q '^ODEBUG: free active (active state 0) .* object type: watch hint: on_body_data+' "$tmp/out" &&
   grep -q ' in request_done+' "$tmp/out" &&
   grep -q '^done: 5 requests, 1 body reads, 0 watches still started' "$tmp/out"; then
	ok "under the installed launcher the example's bug is reported and fixed up"
else
	bad "the example under the installed launcher: status $rc"
fi
# --audit: libodebug-audit.so from its private directory, $libdir/odebug-audit
if [ -f "$lib/odebug-audit/libodebug-audit.so" ]; then
	ok "libodebug-audit.so in $libdir/odebug-audit"
	if cc -I"$inc" -rdynamic -fno-optimize-sibling-calls -fno-inline "$src/tests/unload/host.c" \
		-o "$tmp/host" -ldl 2>"$tmp/cc.log" &&
	   cc -shared -fPIC -I"$inc" "$src/tests/unload/plugin.c" -o "$tmp/plugin.so" 2>>"$tmp/cc.log"; then
		"$bin/odebug" --audit "$tmp/host" "$tmp/plugin.so" leak >"$tmp/out" 2>&1
		rc=$?
		sed 's/^/   | /' "$tmp/out"
		[ "$rc" -eq 0 ] && grep -q 'plugin: fixup_free stopped the ticker' "$tmp/out" &&
			grep -q 'unloaded by dlclose() (checked by libodebug-audit.so before the unmap)' "$tmp/out" &&
			grep -q '^ *#0 0x[0-9a-f]* in unload_plugin+' "$tmp/out" &&
			ok "the installed odebug --audit checks the unloaded plugin, with its fixup" ||
			bad "the installed odebug --audit: status $rc"
	else
		cat "$tmp/cc.log"
		bad "building the dlclose host and plugin"
	fi
else
	[ -f "$build/preload/libodebug-audit.so" ] &&
		bad "libodebug-audit.so is built but not in $lib/odebug-audit"
fi
# The libevent module from $libdir/odebug-modules, found beside the
# installed libodebug (no module_path): the story's bug reported.
if [ -f "$build/modules/libevent/libodebug-libevent.so" ]; then
	if [ -f "$lib/odebug-modules/libodebug-libevent.so" ] &&
	   cc -rdynamic -fno-optimize-sibling-calls -fno-inline "$src/examples/libevent-shim/story.c" \
		-o "$tmp/event-story" -levent 2>"$tmp/cc.log"; then
		"$bin/odebug" "$tmp/event-story" >"$tmp/out" 2>&1
		rc=$?
		[ "$rc" -eq 0 ] && grep -q 'object type: libevent_event' "$tmp/out" &&
			grep -q ' in conn_drop+' "$tmp/out" &&
			ok "the installed libodebug loads libodebug-libevent.so from $libdir/odebug-modules" ||
			{ sed 's/^/   | /' "$tmp/out"; bad "the libevent module under the installed launcher: status $rc"; }
	else
		bad "libodebug-libevent.so is built but not installed in $lib/odebug-modules (or the story did not build)"
	fi
fi
"$bin/odebug" --version | grep -qx "odebug (libodebug) $version" && ok "odebug --version" ||
	bad "odebug --version"
# The CMake package: find_package(libodebug) in the installed tree.
[ -f "$lib/cmake/libodebug/libodebugConfig.cmake" ] &&
	[ -f "$lib/cmake/libodebug/libodebugConfigVersion.cmake" ] &&
	ok "libodebugConfig.cmake and its version file in $libdir/cmake/libodebug" ||
	bad "no CMake package in $lib/cmake/libodebug"
"$src/tests/ci/check-cmake-package.sh" "$src" "$dest$prefix"
case $? in
0) ;;
77) echo "   (no cmake: the CMake package recipe is not run)" ;;
*) bad "the CMake package recipe against the installed tree" ;;
esac

exit "$failed"
