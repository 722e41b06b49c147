#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check-render.sh MANDOC PAGE... - what mandoc -T lint cannot see, in the
# rendered text:
# - quotes: a .Dq nested in another on one macro line (".Pq Dq a , Dq b")
#   renders as "a, "b"" with the first quote never closed; each page must
#   open and close its double quotes in turn;
# - prose taken for arguments: ".Fn f a b for every x" renders as
#   f(a, b, for, every, x) unless "No" ends the call; no function's
#   arguments may hold a bare English word such as "for" or "the".
set -eu

mandoc=$1
shift

status=0
for page in "$@"; do
	# The page's double quotes alone, in order, as < and > (HTML output
	# spells them as entities, the same in every locale).
	bad=$("$mandoc" -T html "$page" | grep -o '&#x201[CD];' |
		sed 's/&#x201C;/</; s/&#x201D;/>/' | tr -d '\n' | awk '
		{
			open = 0
			for (i = 1; i <= length($0); i++) {
				q = substr($0, i, 1)
				if (q == "<") { if (open) { print "nested"; exit } open = 1 }
				else { if (!open) { print "unopened"; exit } open = 0 }
			}
			if (open) print "unclosed"
		}')
	if [ -n "$bad" ]; then
		echo "${page##*/}: $bad double quote as rendered:" >&2
		LC_ALL=C.UTF-8 "$mandoc" -T utf8 "$page" | col -b | grep -n '“[^”]*“' >&2 || true
		status=1
	fi
	words=$("$mandoc" -T ascii "$page" | col -b | tr '\t\n' '  ' | tr -s ' ' |
		grep -Eo '[A-Za-z_]+\(([^()]*, )?(for|the|every|with|when|and|of|a|an|to|is), [^()]*\)') || true
	if [ -n "$words" ]; then
		echo "${page##*/}: words rendered as a function's arguments: $words" >&2
		status=1
	fi
done
exit $status
