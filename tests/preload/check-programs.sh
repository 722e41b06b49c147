#!/bin/sh
# Real programs from Debian packages under the odebug launcher (ODEBUG=1,
# LD_PRELOAD=libodebug.so): the same output and exit status as without, and
# no ODEBUG line at all, with every check on (check_pthread=1 and
# check_sem=1 make each mutex, rwlock, condition variable and semaphore
# operation go through the built-in types; see BENCHMARKS.md for how many).
# usage: check-programs.sh LIBODEBUG [LAUNCHER]
set -u
lib=$(readlink -f "$1")
launcher=${2:+$(readlink -f "$2")}
dir=$(mktemp -d /tmp/odebug-programs.XXXXXX)
trap 'rm -rf "$dir"' EXIT
cd "$dir" || exit 1
ODEBUG_OPTIONS=${ODEBUG_OPTIONS:+$ODEBUG_OPTIONS:}check_pthread=1:check_sem=1
export ODEBUG_OPTIONS
failed=0 ran=0

# Input files: text to sort and compress, a C file to compile, a git repo.
seq 1 300000 | awk '{ print ($1 * 7919) % 1000003 " line " $1 }' >big.txt
printf '#include <stdio.h>\nint main(void) { puts("hi"); return 0; }\n' >hello.c

run() {	# name, then the command
	name=$1; shift
	command -v "$1" >/dev/null 2>&1 || { echo "skip $name: $1 not installed"; return; }
	"$@" >plain.out 2>plain.err; plain=$?
	if [ -n "$launcher" ]; then
		"$launcher" -- "$@" >odebug.out 2>odebug.err; checked=$?
	else
		LD_PRELOAD=$lib ODEBUG=1 "$@" >odebug.out 2>odebug.err; checked=$?
	fi
	ran=$((ran + 1))
	if [ "$plain" != "$checked" ] || ! cmp -s plain.out odebug.out ||
	   grep -q ODEBUG odebug.err || ! cmp -s plain.err odebug.err; then
		echo "FAIL $name: status $plain/$checked"
		diff plain.out odebug.out | head -5
		diff plain.err odebug.err | head -5
		failed=$((failed + 1))
	else
		echo "ok   $name (status $plain, $(wc -c <odebug.out) bytes out)"
	fi
}

run "python3 threads" python3 -c '
import threading, hashlib
def work(n):
    h = hashlib.sha256()
    for i in range(20000): h.update(str(i * n).encode())
    out[n] = h.hexdigest()
out = {}
ts = [threading.Thread(target=work, args=(n,)) for n in range(4)]
[t.start() for t in ts]; [t.join() for t in ts]
print(sorted(out.items()))'
# asyncio's event loop is epoll (check_held: every epoll_ctl and close goes
# through lib/checks/held/held.c): a TCP echo over the loopback and timers.
run "python3 asyncio" python3 -c '
import asyncio
async def echo(r, w):
    w.write(await r.read(100)); await w.drain(); w.close()
async def main():
    srv = await asyncio.start_server(echo, "127.0.0.1", 0)
    port = srv.sockets[0].getsockname()[1]
    got = []
    for i in range(20):
        r, w = await asyncio.open_connection("127.0.0.1", port)
        w.write(b"ping %d" % i); await w.drain()
        got.append(await r.read(100)); w.close(); await w.wait_closed()
        await asyncio.sleep(0.001)
    srv.close(); await srv.wait_closed()
    print(len(got), got[-1])
asyncio.run(main())'
run "xz -T2" sh -c 'xz -T2 -3 -c big.txt | xz -d | md5sum'
run "sort" sort -n -S 8M big.txt
run "sort --parallel" sort --parallel=4 -S 64M -n big.txt
run "zstd -T2" sh -c 'zstd -q -T2 -3 -c big.txt | zstd -q -d | md5sum'
run "gcc" sh -c 'gcc -O2 -o hello hello.c && ./hello'
run "git" sh -c 'rm -rf repo && git init -q repo && cd repo && cp ../hello.c . && git add hello.c &&
	git -c user.name=t -c user.email=t@t commit -qm one && git log --format=%s && git status --short'
run "perl" perl -e 'my %h; $h{$_ % 1000} .= "x" for 1..200000; print scalar(keys %h), "\n"'
run "tar+gzip" sh -c 'tar czf - big.txt hello.c | tar tzf -'
run "bzip2" sh -c 'bzip2 -c big.txt | bzip2 -dc | md5sum'
run "sqlite3" sqlite3 :memory: "create table t(a, b); with recursive n(i) as
	(select 1 union all select i + 1 from n where i < 50000) insert into t
	select i, hex(randomblob(8)) from n; create index ta on t(a);
	select count(*), sum(a) from t where a % 7 = 0;"
run "make" sh -c 'printf "all: hello2\nhello2: hello.c\n\tgcc -o hello2 hello.c\n" >Makefile && make -s -B && ./hello2'
run "awk" awk '{ s[$1 % 97] += length($0) } END { for (k in s) n++; print n }' big.txt
# plocate reads its database through io_uring (liburing): a database of its
# own, and a copy of the binary (the installed one is setgid, and the loader
# ignores LD_PRELOAD for it).
if command -v plocate >/dev/null 2>&1 && command -v updatedb >/dev/null 2>&1; then
	mkdir -p tree
	for i in $(seq 1 400); do mkdir -p tree/d$((i % 17)); : >tree/d$((i % 17))/file$i.txt; done
	updatedb -U "$dir/tree" -o "$dir/plocate.db" -l no && cp "$(command -v plocate)" ./plocate-copy &&
		run "plocate (io_uring)" ./plocate-copy -d "$dir/plocate.db" file1
else
	echo "skip plocate: not installed"
fi

echo "$ran programs, $failed failed"
[ "$failed" = 0 ]
