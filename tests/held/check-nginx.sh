#!/bin/sh
# nginx serving a static file under the odebug launcher (ODEBUG=1): its
# event loop registers each connection with epoll by data.ptr, the held
# memory family of preload/epoll.c.  A config of its own in a temporary
# directory, 127.0.0.1 on a free port, the file fetched 100 times: every
# body identical to the file, no ODEBUG line in nginx's stderr.  Skipped
# (77) without nginx or curl.
# usage: check-nginx.sh LAUNCHER
set -u
launcher=$(readlink -f "$1")
nginx=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$nginx" ] || { echo "skip: nginx not installed"; exit 77; }
command -v curl >/dev/null 2>&1 || { echo "skip: curl not installed"; exit 77; }
dir=$(mktemp -d /tmp/odebug-nginx.XXXXXX)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
mkdir -p "$dir/www" "$dir/tmp"
head -c 200000 /dev/urandom >"$dir/www/file.bin"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$dir/nginx.conf" <<CONF
daemon off;
master_process off;
worker_processes 1;
error_log $dir/error.log;
pid $dir/nginx.pid;
events { worker_connections 256; }
http {
	access_log off;
	client_body_temp_path $dir/tmp;
	proxy_temp_path $dir/tmp;
	fastcgi_temp_path $dir/tmp;
	uwsgi_temp_path $dir/tmp;
	scgi_temp_path $dir/tmp;
	server {
		listen 127.0.0.1:$port;
		root $dir/www;
	}
}
CONF
ODEBUG=1 "$launcher" -- "$nginx" -p "$dir" -c "$dir/nginx.conf" 2>"$dir/stderr" &
pid=$!
i=0
until curl -s -o /dev/null "http://127.0.0.1:$port/file.bin"; do
	i=$((i + 1))
	[ $i -lt 100 ] || { echo "FAIL: nginx did not start"; cat "$dir/stderr" "$dir/error.log"; exit 1; }
	sleep 0.1
done
bad=0
for i in $(seq 1 100); do
	curl -s -o "$dir/got" "http://127.0.0.1:$port/file.bin" && cmp -s "$dir/got" "$dir/www/file.bin" ||
		bad=$((bad + 1))
done
kill "$pid"; wait "$pid" 2>/dev/null; pid=
if [ "$bad" != 0 ] || grep -q ODEBUG "$dir/stderr" "$dir/error.log"; then
	echo "FAIL: $bad of 100 bodies differ"
	cat "$dir/stderr"
	exit 1
fi
echo "ok: 100 bodies identical, no report"
