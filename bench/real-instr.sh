#!/bin/sh
# Instructions of real multithreaded programs (callgrind, the whole run,
# every thread): plain against libodebug preloaded with ODEBUG=1.  A count
# that load does not move, beside locks-real.sh's wall times.  The programs
# and inputs are locks-real.sh's (it writes them; this reuses its setup).
# node runs twice: without NODE_EXTRA_CA_CERTS (worker_threads alone), and
# with it set to the system's bundle ("certs node"), which node parses at
# its start with OpenSSL: about 800,000 rwlock read pairs, a reader-heavy
# start whatever the environment running the benchmark has set.
# usage: real-instr.sh LIBODEBUG
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
count() {	# the total of instructions callgrind collected
	"$@" >/dev/null 2>cg.err
	grep -o 'Collected : [0-9]*' cg.err | awk '{ print $3 }'
}
vg="valgrind --tool=callgrind --soname-synonyms=somalloc=nomatch --callgrind-out-file=$dir/cg.%p"
set -- "sort --parallel=2 -S 64M -n big.txt" "zstd -q -T2 -3 -c big.txt" \
	"xz -q -T2 -1 -c big.txt" "$python threads.py"
certs=/etc/ssl/certs/ca-certificates.crt
command -v node >/dev/null && set -- "$@" "node workers.js"
command -v node >/dev/null && [ -r "$certs" ] && set -- "$@" "certs node workers.js"
echo "program | plain | ODEBUG=1 | ratio"
for prog; do
	extra=
	case $prog in
	"certs "*) extra=NODE_EXTRA_CA_CERTS=$certs; prog=${prog#certs } ;;
	esac
	p=$(count env -u NODE_EXTRA_CA_CERTS $extra $vg $prog)
	o=$(count env -u NODE_EXTRA_CA_CERTS $extra LD_PRELOAD="$lib" ODEBUG=1 $vg $prog)
	rm -f cg.[0-9]*
	echo "${extra:+$extra }$prog | $p | $o | $(echo "$o $p" | awk '{ printf "%.4f", $1 / $2 }')"
done
