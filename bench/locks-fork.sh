#!/bin/sh
# What fork() costs a process under libodebug: page faults per fork in the
# parent and the child and ms per fork+wait (bench-locks fork), in a
# process that made no pthread call ("quiet", libodebug idle) and in one
# that started libodebug; then a shell making 200 $(...) substitutions
# (a fork each), wall seconds.  Configurations alternate within each round:
# plain, LIBODEBUG with ODEBUG unset, [BASELINE with ODEBUG=1,] LIBODEBUG
# with ODEBUG=1; medians of ROUNDS rounds.  Records the load.
# usage: locks-fork.sh BENCH_LOCKS LIBODEBUG [ROUNDS] [BASELINE_LIBODEBUG]
bench=$(readlink -f "$1") lib=$(readlink -f "$2") rounds=${3:-5}
base=${4:+$(readlink -f "$4")}
dir=$(mktemp -d /tmp/odebug-fork.XXXXXX)
trap 'rm -rf "$dir"' EXIT
cfgs="plain unset${base:+ base} on"
run() {	# config, command...
	cfg=$1; shift
	case $cfg in
	plain) env -u ODEBUG "$@" ;;
	unset) env -u ODEBUG LD_PRELOAD="$lib" "$@" ;;
	base) env ODEBUG=1 LD_PRELOAD="$base" "$@" ;;
	on) env ODEBUG=1 LD_PRELOAD="$lib" "$@" ;;
	esac
}
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
echo "load before: $(uptime)"
for r in $(seq "$rounds"); do
	for cfg in $cfgs; do
		for mode in quiet started; do
			run "$cfg" "$bench" fork "$mode" 100 >>"$dir/$cfg.$mode"
		done
		s=$(date +%s.%N)
		run "$cfg" sh -c 'for i in $(seq 200); do x=$(echo); done'
		e=$(date +%s.%N)
		echo "$s $e" | awk '{ printf "%.3f\n", $2 - $1 }' >>"$dir/$cfg.shell"
	done
done
for cfg in $cfgs; do
	for mode in quiet started; do
		f=$dir/$cfg.$mode
		echo "$cfg fork $mode: $(awk '{ print $3 }' "$f" | median) parent + $(awk '{ print $6 }' "$f" | median) child page faults, $(awk '{ print $10 }' "$f" | median) ms per fork+wait"
	done
	echo "$cfg sh, 200 \$(...): $(median <"$dir/$cfg.shell") s"
done
echo "load after: $(uptime)"
