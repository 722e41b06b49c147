#!/bin/sh
# -Dmodules=enabled makes each annotation module's library a required
# dependency: with one library's pkg-config file hidden, meson setup fails
# naming it (a package built so cannot ship without that module); with
# -Dmodules=auto, the default, the same setup succeeds without them.
# usage: check-modules-option.sh MESON SRCDIR
set -u
meson=$1 src=$2
tmp=$(mktemp -d /tmp/odebug-modules-option.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
failed=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; sed 's/^/    /' "$tmp/log" | tail -20; failed=1; }

# pcdir NAME...: a pkg-config directory with the system's files but NAME.pc
pcdir() {
	rm -rf "$tmp/pc" && mkdir "$tmp/pc" || exit 1
	for d in $(pkg-config --variable pc_path pkg-config | tr : ' '); do
		for f in "$d"/*.pc; do
			[ -e "$f" ] && ln -sf "$f" "$tmp/pc/"
		done
	done
	for n; do rm -f "$tmp/pc/$n.pc"; done
}
# setup MODULES: meson setup of SRCDIR with PKG_CONFIG_LIBDIR=$tmp/pc
setup() {
	rm -rf "$tmp/b"
	PKG_CONFIG_LIBDIR=$tmp/pc "$meson" setup "$tmp/b" "$src" -Dmodules="$1" \
		-Dtests=false -Dexamples=false >"$tmp/log" 2>&1
}

for lib in libevent libuv glib-2.0; do
	pcdir "$lib"
	if setup enabled; then
		bad "-Dmodules=enabled without $lib.pc: meson setup succeeded"
	elif grep -q "Dependency \"$lib\" not found" "$tmp/log"; then
		ok "-Dmodules=enabled without $lib.pc: meson setup fails naming $lib"
	else
		bad "-Dmodules=enabled without $lib.pc: failed, but not for $lib"
	fi
done
pcdir libevent libuv glib-2.0
setup auto && ok "-Dmodules=auto without the three: meson setup succeeds" ||
	bad "-Dmodules=auto without the three: meson setup failed"
exit "$failed"
