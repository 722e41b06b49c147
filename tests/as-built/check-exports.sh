#!/bin/sh
# The library exports exactly the functions declared in odebug.h plus the
# interposed libc functions (each in glibc's version node) and liburing
# functions (in liburing's), nothing else.
# usage: check-exports.sh LIBRARY HEADER INTERPOSED...
set -eu
lib=$1 header=$2
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Declarations of the real API: the part of the header before ODEBUG_DISABLE's stubs.
sed -n '/^#ifndef ODEBUG_DISABLE/,/^#else/p' "$header" |
	grep -oE '\b(debug_[a-z_]+)\(' | tr -d '(' >"$tmp/expected"
# ... and the variables it declares extern (the inline functions' switch).
sed -n '/^#ifndef ODEBUG_DISABLE/,/^#else/p' "$header" |
	sed -n 's/^extern [a-z ]*\b\([_a-z]*debug_[a-z_]*\);$/\1/p' >>"$tmp/expected"
# ... and bionic's fdsan owner-tag API, declared in odebug-fdsan.h beside it (lib/checks/fd/fdsan.c).
fdsan="$(dirname "$header")/odebug-fdsan.h"
if [ -f "$fdsan" ]; then
	grep -oE '\bandroid_fdsan_[a-z_]+\(' "$fdsan" | tr -d '(' >>"$tmp/expected"
fi
for f in "$@"; do echo "$f"; done >>"$tmp/expected"
sort -u -o "$tmp/expected" "$tmp/expected"

nm -D --defined-only "$lib" >"$tmp/nm"
awk '$2 != "A" { print $3 }' "$tmp/nm" | sed 's/@.*//' | sort -u >"$tmp/actual"

if ! diff -u "$tmp/expected" "$tmp/actual"; then
	echo "exports differ from odebug.h plus the interposers (- expected, + exported)"
	exit 1
fi
# Interposers must carry glibc's versions, or nothing reaches them.
for f in "$@"; do
	v=$(awk -v f="$f" '{ split($3, a, "@"); if (a[1] == f) print $3 }' "$tmp/nm")
	case "$v" in
	*@@GLIBC_*|*@@GLIBCXX_*|*@@CXXABI_*) ;;	# libc's, or libstdc++'s for operator delete
	*@@LIBURING_*) ;;	# liburing's submitting functions (preload/uring.c)
	*) echo "$f is exported as '$v', not in glibc's, libstdc++'s or liburing's version node"; exit 1 ;;
	esac
done
# Our own locks must never reach our lock interposers (lib/base/lock.h).
if nm -D --undefined-only "$lib" | grep -E ' (pthread_(mutex|spin|rwlock|cond|barrier)_[a-z]+|sem_[a-z]+|mtx_[a-z]+|cnd_[a-z]+)@'; then
	echo "libodebug imports a lock function: its own locks would bind to its interposers"
	exit 1
fi
# The switch came with LIBODEBUG_1.1 (odebug.h's inline functions).
v=$(nm -D --defined-only "$lib" | awk '{ split($3, a, "@"); if (a[1] == "__debug_objects_on") print $3 }')
if [ "$v" != "__debug_objects_on@@LIBODEBUG_1.1" ]; then
	echo "__debug_objects_on is exported as '$v', not in LIBODEBUG_1.1"
	exit 1
fi
echo "exports: $(wc -l <"$tmp/actual") symbols, as declared"
