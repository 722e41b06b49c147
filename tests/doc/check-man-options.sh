#!/bin/sh
# odebug(7) documents exactly the options of the options table: the names
# printed by help=1 are compared with the .It Cm entries of the page.  The
# README's options table lists the same names, each with the default
# help=1 prints (an empty string is written as a parenthesised word, such
# as "(none)").
# usage: check-man-options.sh PROGRAM_LINKED_WITH_LIBODEBUG ODEBUG_7 [README]
set -eu
prog=$1 page=$2 readme=${3:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ODEBUG=1 ODEBUG_OPTIONS=help=1 "$prog" 2>"$tmp/help" >/dev/null || true
sed -n 's/^ODEBUG:   \([a-z_]*\) .*default.*/\1/p' "$tmp/help" | sort >"$tmp/table"
sed -n 's/^\.It Cm \([a-z_]*\) Ns = Ns Ar .*/\1/p' "$page" | sort >"$tmp/man"
[ -s "$tmp/table" ] || { echo "help=1 printed no options"; exit 1; }
if ! diff -u "$tmp/table" "$tmp/man"; then
	echo "odebug.7 and the options table differ (- table, + man page)"
	exit 1
fi
echo "odebug.7 documents all $(wc -l <"$tmp/table") options"
[ -n "$readme" ] || exit 0

# name default, from help=1 ("default 5," or "default 'text',") and from
# the README's rows ("| `max_reports` | 5 | ..."), quotes and backticks off
sed -n "s/^ODEBUG:   \([a-z_]*\) *default \([^,]*\), now .*/\1 \2/p" "$tmp/help" |
	sed "s/ '\(.*\)'\$/ \1/" | sort >"$tmp/defaults"
sed -n 's/^| `\([a-z_]*\)` | \([^|]*\) |.*/\1 \2/p' "$readme" |
	sed 's/ *$//; s/ `\(.*\)`$/ \1/; s/ (.*)$/ /' | sed 's/ $//' | sort >"$tmp/readme"
sed 's/ $//' "$tmp/defaults" >"$tmp/defaults.t"
if ! diff -u "$tmp/defaults.t" "$tmp/readme"; then
	echo "README.md's options table and the options table differ (- table, + README: name default)"
	exit 1
fi
echo "README.md lists all $(wc -l <"$tmp/readme") options with their defaults"
