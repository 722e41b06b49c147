#!/bin/sh
# Wall time of real multithreaded programs: plain, with libodebug
# preloaded and ODEBUG=1 (check_pthread=1, check_sem=1), and under
# valgrind's helgrind and drd.  Configurations alternate within each
# round; the median of ROUNDS rounds is printed.  Records the load.
# usage: locks-real.sh LIBODEBUG [ROUNDS]
lib=$(readlink -f "$1") rounds=${2:-3}
dir=$(mktemp -d /tmp/odebug-real.XXXXXX)
trap 'rm -rf "$dir"' EXIT
cd "$dir" || exit 1
seq 1 300000 | awk '{ print ($1 * 7919) % 1000003 " line " $1 }' >big.txt
cat >threads.py <<'PY'
import threading, hashlib, queue
q = queue.Queue()
def work():
    while True:
        n = q.get()
        if n is None: return
        h = hashlib.sha256()
        for i in range(2000): h.update(str(i * n).encode())
ts = [threading.Thread(target=work) for _ in range(4)]
[t.start() for t in ts]
for n in range(400): q.put(n)
for _ in ts: q.put(None)
[t.join() for t in ts]
PY

secs() {	# the command's wall time in seconds
	s=$(date +%s.%N)
	"$@" >/dev/null 2>&1
	e=$(date +%s.%N)
	echo "$s $e" | awk '{ printf "%.3f\n", $2 - $1 }'
}
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

vg="valgrind --quiet --soname-synonyms=somalloc=nomatch"
for prog in "sort --parallel=2 -S 64M -n big.txt" "zstd -q -T2 -3 -c big.txt" \
	    "python3 threads.py"; do
	: >plain; : >odebug; : >helgrind; : >drd
	for r in $(seq "$rounds"); do
		secs $prog >>plain
		secs env LD_PRELOAD="$lib" ODEBUG=1 \
			ODEBUG_OPTIONS=check_pthread=1:check_sem=1 $prog >>odebug
		secs $vg --tool=helgrind $prog >>helgrind
		secs $vg --tool=drd $prog >>drd
	done
	p=$(median <plain) o=$(median <odebug) h=$(median <helgrind) d=$(median <drd)
	echo "$prog | $p | $o ($(echo "$o $p" | awk '{ printf "%.2fx", $1 / $2 }')) | $h ($(echo "$h $p" | awk '{ printf "%.0fx", $1 / $2 }')) | $d ($(echo "$d $p" | awk '{ printf "%.0fx", $1 / $2 }'))"
done
echo "load: $(uptime)"
