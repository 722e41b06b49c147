#!/bin/sh
# No source file of the library over 800 lines: one job per file.
# usage: check-file-size.sh SOURCE_ROOT
set -eu
cd "$1"
bad=0
for f in $(find lib preload launcher modules -name '*.[ch]' | sort); do
	n=$(wc -l < "$f")
	if [ "$n" -gt 800 ]; then
		echo "$f: $n lines (at most 800)" >&2
		bad=1
	fi
done
exit $bad
