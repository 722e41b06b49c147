#!/bin/sh
# Static data of a page or more lives in .lbss (ODEBUG_LARGE, lib/base/types.h),
# not among the small variables in .bss and .data: there, one big array
# spreads the flags every call reads over many pages, and a program makes
# resident each page it touches.  Fails naming each such object, or when
# .bss grows past its budget.
# usage: check-data-layout.sh LIBRARY
set -eu
lib=$1
budget=32768	# bytes of .bss: the small variables only

sections=$(readelf -SW "$lib" | sed -n 's/^ *\[ *\([0-9]*\)\] \([^ ]*\) .*/\1 \2/p')
idx() { echo "$sections" | awk -v n="$1" '$2 == n { print $1 }'; }
bss=$(idx .bss) data=$(idx .data)
if [ -z "$bss" ]; then
	echo "no .bss section in $lib"
	exit 1
fi

bad=$(readelf -sW "$lib" | awk -v b="$bss" -v d="$data" '
	$4 == "OBJECT" && ($7 == b || $7 == d) {
		s = $3
		if (s ~ /^0x/) s = 4096	# readelf writes sizes over 99999 in hex
		if (s + 0 >= 4096) print $8 " (" $3 " bytes)"
	}' | sort -u)
if [ -n "$bad" ]; then
	echo "objects of a page or more outside .lbss (mark them ODEBUG_LARGE):"
	echo "$bad"
	exit 1
fi

size=$(readelf -SW "$lib" | awk '$2 == ".bss" { print $6 }')
size=$((0x$size))
if [ "$size" -gt "$budget" ]; then
	echo ".bss is $size bytes, over its budget of $budget"
	exit 1
fi
echo "ok: .bss $size bytes, no object of a page or more outside .lbss"
