#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check-links.sh MANDOC SRCDIR PAGE... - check the one-line link pages.
#
# mandoc -T lint always warns that .so is fragile, so the link pages are
# not linted with the full pages.  Instead, each must be exactly one line
# ".so man3/TARGET.3" naming a full page of SRCDIR, and mandoc must render
# it, resolving the .so as man(1) does from the top of a manual tree, with
# no error.
set -eu

mandoc=$1
srcdir=$2
shift 2

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ln -s "$srcdir" "$tmp/man3"
cd "$tmp"

status=0
for page in "$@"; do
	line=$(cat "man3/$page")
	target=${line#.so man3/}
	if [ "$(wc -l < "man3/$page")" -ne 1 ] || [ "$target" = "$line" ]; then
		echo "$page: not a single '.so man3/PAGE' line" >&2
		status=1
	elif [ ! -f "man3/$target" ] || head -n 1 "man3/$target" | grep -q '^\.so '; then
		echo "$page: $target is not a full page" >&2
		status=1
	elif ! "$mandoc" -T lint -W error "man3/$page"; then
		status=1
	fi
done
exit $status
