#!/bin/sh
# odebug(7) documents exactly the options of the options table: the names
# printed by help=1 are compared with the .It Cm entries of the page.
# usage: check-man-options.sh PROGRAM_LINKED_WITH_LIBODEBUG ODEBUG_7
set -eu
prog=$1 page=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ODEBUG=1 ODEBUG_OPTIONS=help=1 "$prog" 2>&1 >/dev/null |
	sed -n 's/^ODEBUG:   \([a-z_]*\) .*default.*/\1/p' | sort >"$tmp/table"
sed -n 's/^\.It Cm \([a-z_]*\) Ns = Ns Ar .*/\1/p' "$page" | sort >"$tmp/man"
[ -s "$tmp/table" ] || { echo "help=1 printed no options"; exit 1; }
if ! diff -u "$tmp/table" "$tmp/man"; then
	echo "odebug.7 and the options table differ (- table, + man page)"
	exit 1
fi
echo "odebug.7 documents all $(wc -l <"$tmp/table") options"
