#!/bin/sh
# Debian programs on libevent under the build tree's odebug launcher
# (ODEBUG=1; libodebug loads libodebug-libevent.so itself): memcached
# serving a client's sets, gets and deletes, and a detached tmux session
# driven by a few commands then kill-server.  Each gives the same output
# and exit status as without odebug, and no report; the events the module
# tracked are counted (only libevent events are tracked: check_pthread,
# check_sem and check_held off) and printed.  Exit 77 when neither program
# is installed (scripts/deps installs them).
# usage: check-libevent-programs.sh LAUNCHER
set -u
launcher=$(readlink -f "$1")
command -v memcached >/dev/null 2>&1 || command -v tmux >/dev/null 2>&1 ||
	{ echo "skip: neither memcached nor tmux installed"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "skip: python3 not installed"; exit 77; }
dir=$(mktemp -d /tmp/odebug-evprog.XXXXXX)
trap 'rm -rf "$dir"' EXIT
failed=0
opts="check_pthread=0:check_sem=0:check_held=0:print_stats=1"

# events FILE: the server's stderr holds no report; print how many events
# the module tracked there (objs_allocated: only libevent events are
# tracked, check_pthread, check_sem and check_held off).
stats='^[a-z_]* *: [0-9]*$'
# print_stats's table per type: its heading and rows are no report.
types='^ODEBUG: \(type  *tracked  *active  *most  *reports\|[a-z_0-9]*\( *[0-9][0-9]*\)\{4\}\)$'
events() {
	if grep -v "$types" "$1" | grep -q '^ODEBUG' || grep -v "$stats" "$1" | grep -v "$types" | grep -q .; then
		sed 's/^/    /' "$1" | head -20 >&2
		echo 0
	else
		awk '/^objs_allocated/ { print $2 }' "$1"
	fi
}

client() {	# port: 200 sets, gets and deletes; prints every reply
	python3 - "$1" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
f = s.makefile("rwb")
def cmd(line, data=None):
    f.write(line.encode() + b"\r\n")
    if data is not None:
        f.write(data.encode() + b"\r\n")
    f.flush()
    out = []
    while True:
        r = f.readline().decode().rstrip("\r\n")
        out.append(r)
        if r in ("STORED", "END", "DELETED", "NOT_FOUND", "ERROR") or r.startswith("SERVER_ERROR"):
            return " ".join(out)
for i in range(200):
    v = "value-%d" % (i * 7)
    print(cmd("set k%d 0 0 %d" % (i, len(v)), v))
for i in range(200):
    print(cmd("get k%d" % i))
for i in range(0, 200, 2):
    print(cmd("delete k%d" % i))
print(cmd("get k0 k1"))
f.write(b"quit\r\n"); f.flush()
PY
}

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

memcached_run() {	# out: with the launcher or not
	port=$(free_port)
	if [ "$1" = odebug ]; then
		ODEBUG_OPTIONS=$opts timeout 60 "$launcher" memcached -u root -l 127.0.0.1 \
			-p "$port" -U 0 -t 2 2>"$dir/$1.err" &
	else
		timeout 60 memcached -u root -l 127.0.0.1 -p "$port" -U 0 -t 2 2>"$dir/$1.err" &
	fi
	pid=$!
	i=0
	while ! python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 1)" 2>/dev/null; do
		i=$((i + 1)); [ $i -lt 100 ] || break; sleep 0.1
	done
	client "$port" >"$dir/$1.out" 2>&1
	kill -TERM "$pid"
	wait "$pid"
	echo "status $?" >>"$dir/$1.out"
}

if command -v memcached >/dev/null 2>&1; then
	memcached_run plain
	memcached_run odebug
	n=$(events "$dir/odebug.err")
	if cmp -s "$dir/plain.out" "$dir/odebug.out" && [ "$n" -gt 0 ]; then
		echo "ok   memcached: $(wc -l <"$dir/odebug.out") reply lines identical, $n events tracked"
	else
		echo "FAIL memcached ($n events)"; diff "$dir/plain.out" "$dir/odebug.out" | head
		failed=$((failed + 1))
	fi
else
	echo "skip memcached: not installed"
fi

tmux_run() {	# out: with the launcher or not
	run=
	[ "$1" = odebug ] && run=$launcher
	sock=$dir/tmux-$1
	# The server in the foreground (-D), its stderr kept; clients alone.
	ODEBUG_OPTIONS=$opts timeout 60 $run tmux -D -S "$sock" -f /dev/null 2>"$dir/$1.err" &
	server=$!
	i=0
	while [ ! -S "$sock" ] && [ $i -lt 100 ]; do i=$((i + 1)); sleep 0.1; done
	{
		$run tmux -S "$sock" new-session -d -s work -x 80 -y 24 'sleep 60'; echo "new $?"
		$run tmux -S "$sock" new-window -d -t work 'sleep 60'; echo "window $?"
		$run tmux -S "$sock" split-window -d -t work:0 'sleep 60'; echo "split $?"
		$run tmux -S "$sock" set-option -t work status off; echo "set $?"
		$run tmux -S "$sock" list-windows -t work -F '#{window_index} #{window_panes}'
		$run tmux -S "$sock" display-message -p -t work '#{session_name} #{session_windows}'
		$run tmux -S "$sock" kill-server; echo "kill $?"
	} >"$dir/$1.out" 2>&1
	wait "$server"
	echo "server $?" >>"$dir/$1.out"
}

if command -v tmux >/dev/null 2>&1; then
	tmux_run plain
	tmux_run odebug
	n=$(events "$dir/odebug.err")
	if cmp -s "$dir/plain.out" "$dir/odebug.out" && [ "$n" -gt 0 ]; then
		echo "ok   tmux: $(wc -l <"$dir/odebug.out") output lines identical, $n events tracked"
	else
		echo "FAIL tmux ($n events)"; diff "$dir/plain.out" "$dir/odebug.out" | head
		failed=$((failed + 1))
	fi
else
	echo "skip tmux: not installed"
fi
[ "$failed" = 0 ]
