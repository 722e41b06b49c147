#!/bin/sh
# Wall time of real multithreaded programs: plain, with libodebug
# preloaded and ODEBUG=1 (check_pthread=1, check_sem=1), [a baseline build
# of libodebug the same way,] and under valgrind's helgrind and drd.
# Configurations alternate within each round; the median of ROUNDS rounds
# is printed.  Records the load.  A valgrind run longer than VG_TIMEOUT
# seconds (default 300) is killed and shown as ">VG_TIMEOUT".
# python3 is run as the interpreter itself (sys.executable): a pyenv
# "python3" is a bash script that runs about 25 processes before exec'ing
# it, and valgrind without --trace-children would time bash alone.  Those
# shims, if any, get a row of their own (plain and libodebug only).
# VG=0 skips helgrind and drd (their columns then read "-").  node runs
# without NODE_EXTRA_CA_CERTS, and again with it set to the system's bundle
# (real-instr.sh says why), whatever the caller's environment has.
# usage: locks-real.sh LIBODEBUG [ROUNDS] [BASELINE_LIBODEBUG]
lib=$(readlink -f "$1") rounds=${2:-3} base=${3:+$(readlink -f "$3")}
vg_timeout=${VG_TIMEOUT:-300}
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
cat >workers.js <<'JS'
// 4 worker threads hash 400 jobs handed out by the main thread.
const { Worker, isMainThread, parentPort } = require('worker_threads');
const crypto = require('crypto');
if (isMainThread) {
  let next = 0;
  for (let w = 0; w < 4; w++) {
    const wk = new Worker(__filename);
    const feed = () => wk.postMessage(next < 400 ? next++ : -1);
    wk.on('message', feed);
    feed();
  }
} else {
  parentPort.on('message', (j) => {
    if (j < 0) { parentPort.close(); return; }
    const h = crypto.createHash('sha256');
    for (let i = 0; i < 2000; i++) h.update(String(i * j));
    parentPort.postMessage(h.digest('hex'));
  });
}
JS
python=$(python3 -c 'import sys; print(sys.executable)')

secs() {	# the command's wall time in seconds
	s=$(date +%s.%N)
	"$@" >/dev/null 2>&1
	rc=$?
	e=$(date +%s.%N)
	case " $* " in
	*" timeout "*) timed=1 ;;
	*) timed=0 ;;
	esac
	if [ $timed = 1 ] && [ $rc = 124 ]; then
		echo 999999
	else
		echo "$s $e" | awk '{ printf "%.3f\n", $2 - $1 }'
	fi
}
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
ratio() {	# value plain format
	if [ "$1" = 999999 ]; then
		echo ">$vg_timeout (>$(echo "$vg_timeout $2" | awk '{ printf "%.0fx", $1 / $2 }'))"
	else
		echo "$1 ($(echo "$1 $2" | awk -v f="$3" '{ printf f "x", $1 / $2 }'))"
	fi
}

echo "load before: $(uptime)"
vg="timeout $vg_timeout valgrind --quiet --soname-synonyms=somalloc=nomatch"
set -- "sort --parallel=2 -S 64M -n big.txt" "zstd -q -T2 -3 -c big.txt" \
	"xz -q -T2 -1 -c big.txt" "$python threads.py"
certs=/etc/ssl/certs/ca-certificates.crt
command -v node >/dev/null && set -- "$@" "node workers.js"
command -v node >/dev/null && [ -r "$certs" ] && set -- "$@" "certs node workers.js"
for prog; do
	: >plain; : >odebug; : >base; : >helgrind; : >drd
	extra=
	case $prog in
	"certs "*) extra=NODE_EXTRA_CA_CERTS=$certs; prog=${prog#certs } ;;
	esac
	for r in $(seq "$rounds"); do
		secs env -u NODE_EXTRA_CA_CERTS $extra $prog >>plain
		secs env -u NODE_EXTRA_CA_CERTS $extra LD_PRELOAD="$lib" ODEBUG=1 \
			ODEBUG_OPTIONS=check_pthread=1:check_sem=1 $prog >>odebug
		[ -n "$base" ] && secs env -u NODE_EXTRA_CA_CERTS $extra LD_PRELOAD="$base" ODEBUG=1 \
			ODEBUG_OPTIONS=check_pthread=1:check_sem=1 $prog >>base
		[ "${VG:-1}" = 0 ] && continue
		secs env -u NODE_EXTRA_CA_CERTS $extra $vg --tool=helgrind $prog >>helgrind
		secs env -u NODE_EXTRA_CA_CERTS $extra $vg --tool=drd $prog >>drd
	done
	prog="${extra:+$extra }$prog"
	p=$(median <plain) o=$(median <odebug)
	line="$prog | $p | $(ratio "$o" "$p" %.2f)"
	[ -n "$base" ] && line="$line | $(ratio "$(median <base)" "$p" %.2f)"
	if [ "${VG:-1}" = 0 ]; then
		echo "$line | - | -"
	else
		h=$(median <helgrind) d=$(median <drd)
		echo "$line | $(ratio "$h" "$p" %.0f) | $(ratio "$d" "$p" %.0f)"
	fi
done
if [ "$(command -v python3)" != "$python" ] && [ -n "$(command -v pyenv)" ]; then
	: >plain; : >odebug; : >base
	for r in $(seq "$rounds"); do
		secs python3 threads.py >>plain
		secs env LD_PRELOAD="$lib" ODEBUG=1 python3 threads.py >>odebug
		[ -n "$base" ] && secs env LD_PRELOAD="$base" ODEBUG=1 python3 threads.py >>base
	done
	p=$(median <plain) o=$(median <odebug)
	line="python3 threads.py through the pyenv shim | $p | $(ratio "$o" "$p" %.2f)"
	[ -n "$base" ] && line="$line | $(ratio "$(median <base)" "$p" %.2f)"
	echo "$line | | "
fi
echo "load after: $(uptime)"
