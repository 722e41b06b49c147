#!/bin/sh
# Instructions of real multithreaded programs (callgrind, the whole run,
# every thread): plain against libodebug preloaded with ODEBUG=1.  A count
# that load does not move, beside locks-real.sh's wall times.  The programs
# and inputs are locks-real.sh's (it writes them; this reuses its setup).
# node runs twice: without NODE_EXTRA_CA_CERTS (worker_threads alone), and
# with it set to the system's bundle ("certs node"), which node parses at
# its start with OpenSSL: about 800,000 rwlock read pairs, a reader-heavy
# start whatever the environment running the benchmark has set.
# node's count moves from run to run (its threads' timing decides how much
# work its JIT and collector do): ROUNDS=N runs each program N times, plain
# and ODEBUG=1 side by side, and prints the medians; ONLY=WORD keeps the
# programs whose command line has WORD.
# usage: [ROUNDS=N] [ONLY=WORD] real-instr.sh LIBODEBUG
lib=$(readlink -f "$1")
here=$(dirname "$(readlink -f "$0")")
dir=$(mktemp -d /tmp/odebug-instr.XXXXXX)
trap 'rm -rf "$dir"' EXIT
cd "$dir" || exit 1
# big.txt, threads.py and workers.js, as locks-real.sh makes them
sed -n '/^seq 1 300000/p; /^cat >threads.py/,/^PY$/p; /^cat >workers.js/,/^JS$/p' \
	"$here/locks-real.sh" >setup.sh
. ./setup.sh
python=$(python3 -c 'import sys; print(sys.executable)')
rounds=${ROUNDS:-1}
count() {	# OUT, then the command: the total of instructions callgrind collected
	out=$1
	shift
	"$@" >/dev/null 2>"$out.err"
	grep -o 'Collected : [0-9]*' "$out.err" | awk '{ print $3 }' >>"$out"
}
median() {
	sort -n "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}
vg="valgrind --tool=callgrind --soname-synonyms=somalloc=nomatch --callgrind-out-file=$dir/cg.%p"
set -- "sort --parallel=2 -S 64M -n big.txt" "zstd -q -T2 -3 -c big.txt" \
	"xz -q -T2 -1 -c big.txt" "$python threads.py"
certs=/etc/ssl/certs/ca-certificates.crt
command -v node >/dev/null && set -- "$@" "node workers.js"
command -v node >/dev/null && [ -r "$certs" ] && set -- "$@" "certs node workers.js"
echo "program | plain | ODEBUG=1 | ratio${ROUNDS:+ (medians of $rounds rounds)}"
for prog; do
	case $prog in *"${ONLY:-}"*) ;; *) continue ;; esac
	extra=
	case $prog in
	"certs "*) extra=NODE_EXTRA_CA_CERTS=$certs; prog=${prog#certs } ;;
	esac
	rm -f plain.n odebug.n
	r=0
	while [ $r -lt "$rounds" ]; do
		count plain.n env -u NODE_EXTRA_CA_CERTS $extra $vg $prog &
		count odebug.n env -u NODE_EXTRA_CA_CERTS $extra LD_PRELOAD="$lib" ODEBUG=1 $vg $prog
		wait
		rm -f cg.[0-9]*
		r=$((r + 1))
	done
	p=$(median plain.n) o=$(median odebug.n)
	echo "${extra:+$extra }$prog | $p | $o | $(echo "$o $p" | awk '{ printf "%.4f", $1 / $2 }')"
done
