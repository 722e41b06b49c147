#!/bin/sh
# Distinct pages of code and data that one epoll_ctl ADD+DEL pair of
# bench-held-ops touches in user space (valgrind lackey's trace of 3,000
# accesses in the middle of the loop): under the pass-through control,
# libodebug with ODEBUG unset and with ODEBUG=1.  Where each system call
# flushes the TLB, each of these pages costs a page walk
# (bench-syscall-pages).
# usage: held-ops-pages.sh BENCH_HELD_OPS LIBODEBUG PASSTHROUGH
set -eu
ops=$1 lib=$2 pass=$3
pages() {	# label, preload, ODEBUG value, loop count
	log=$(mktemp)
	env ODEBUG="$3" LD_PRELOAD="$2" valgrind --tool=lackey --trace-mem=yes \
		--log-file="$log" "$ops" --only 0 "$4" >/dev/null 2>&1
	n=$(wc -l <"$log")
	sed -n "$((n * 6 / 10)),$((n * 6 / 10 + 3000))p" "$log" |
		awk '/^ ?[ILSM] / { split($2, a, ","); k = ($1 == "I" ? "code" : "data");
			print k, substr(a[1], 1, length(a[1]) - 3) }' | sort -u |
		awk -v l="$1" '{ c[$1]++ } END { printf "%-12s code %d, data %d pages\n", l, c["code"], c["data"] }'
	rm -f "$log"
}
pages pass-through "$pass" "" 60000
pages unset "$lib" "" 60000
pages ODEBUG=1 "$lib" 1 3000
