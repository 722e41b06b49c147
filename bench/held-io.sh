#!/bin/sh
# Held memory's cost: the submitting calls (bench-held-io, ODEBUG unset and
# ODEBUG=1) and nginx serving a 4 KiB static file on 127.0.0.1 (ab, 16
# concurrent: 20,000 requests plain and with ODEBUG=1, 2,000 under valgrind
# memcheck).  Prints requests per second for each.
# usage: held-io.sh BUILDDIR
set -eu
build=$(readlink -f "$1")
lib=$build/preload/libodebug.so
echo "unset:    $(LD_PRELOAD=$lib "$build/bench/bench-held-io")"
echo "ODEBUG=1: $(ODEBUG=1 LD_PRELOAD=$lib "$build/bench/bench-held-io")"
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || { echo "no nginx"; exit 0; }
command -v ab >/dev/null 2>&1 || { echo "no ab (apache2-utils)"; exit 0; }
dir=$(mktemp -d /tmp/odebug-nginx-bench.XXXXXX)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
mkdir -p "$dir/www" "$dir/tmp"
head -c 4096 /dev/urandom >"$dir/www/f"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$dir/nginx.conf" <<CONF
daemon off; master_process off; worker_processes 1;
error_log $dir/error.log; pid $dir/nginx.pid;
events { worker_connections 256; }
http { access_log off; client_body_temp_path $dir/tmp; proxy_temp_path $dir/tmp;
	fastcgi_temp_path $dir/tmp; uwsgi_temp_path $dir/tmp; scgi_temp_path $dir/tmp;
	server { listen 127.0.0.1:$port; root $dir/www; } }
CONF
bench() {	# label, requests, then the command prefix
	label=$1 n=$2; shift 2
	"$@" /usr/sbin/nginx -p "$dir" -c "$dir/nginx.conf" 2>"$dir/stderr" &
	pid=$!
	i=0
	until ab -q -n 1 "http://127.0.0.1:$port/f" >/dev/null 2>&1; do
		i=$((i + 1)); [ $i -lt 300 ] || { echo "$label: nginx did not start"; return; }
		sleep 0.1
	done
	rps=$(ab -q -n "$n" -c 16 "http://127.0.0.1:$port/f" | awk '/^Requests per second/ { print $4 }')
	kill "$pid"; wait "$pid" 2>/dev/null || :; pid=
	echo "nginx $label: $rps requests/s ($n requests, 16 concurrent)$(grep -q ODEBUG "$dir/stderr" && echo ', REPORTED')"
}
bench plain 20000 env
bench "ODEBUG=1" 20000 env ODEBUG=1 LD_PRELOAD="$lib"
bench memcheck 2000 valgrind -q --tool=memcheck
