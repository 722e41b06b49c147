#!/bin/sh
# log_path=syslog: report lines reach a real rsyslogd, at LOG_ERR, under
# the program's name.  The test starts its own rsyslogd (as root, it
# provides /dev/log) and reads the file it writes.
# usage: check-syslog.sh TEST_SINKS_PROGRAM
set -u
prog=$(readlink -f "$1")
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root to provide /dev/log"; exit 77; }
command -v rsyslogd >/dev/null || { echo "SKIP: rsyslogd not installed"; exit 77; }
[ -e /dev/log ] && { echo "SKIP: a system logger already owns /dev/log"; exit 77; }

# No logger on /dev/log: one line says so and the report goes to stderr
# (glibc's syslog() dropped it without a word).
out=$(ODEBUG=1 ODEBUG_OPTIONS=log_path=syslog "$prog" --child one 2>&1)
if ! echo "$out" | grep -q '^ODEBUG: cannot reach syslog at /dev/log (ENOENT); reports go to stderr$' ||
   ! echo "$out" | grep -q '^ODEBUG: free active'; then
	echo "without /dev/log the report was lost:"; echo "$out"; exit 1
fi

dir=$(mktemp -d /tmp/odebug-syslog.XXXXXX)
cleanup() {
	[ -f "$dir/pid" ] && kill "$(cat "$dir/pid")" 2>/dev/null
	sleep 0.2
	rm -f /dev/log
	rm -rf "$dir"
}
trap cleanup EXIT
cat >"$dir/rsyslog.conf" <<CONF
global(workDirectory="$dir")
module(load="imuxsock" SysSock.Name="/dev/log")
*.err action(type="omfile" file="$dir/messages" template="RSYSLOG_SyslogProtocol23Format")
CONF
rsyslogd -n -f "$dir/rsyslog.conf" -i "$dir/pid" >"$dir/rsyslogd.out" 2>&1 &
i=0
while [ ! -S /dev/log ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
[ -S /dev/log ] || { echo "rsyslogd did not start"; cat "$dir/rsyslogd.out"; exit 1; }

# First a run that reports nothing: it must log nothing, not even a summary
# (it is logged before the second run's lines, which are waited for).
ODEBUG=1 ODEBUG_OPTIONS=log_path=syslog "$prog" --child quiet >/dev/null 2>&1 &
quiet_pid=$!
wait $quiet_pid
ODEBUG=1 ODEBUG_OPTIONS=log_path=syslog ODEBUG_TEST_TMPDIR="$dir" \
	"$prog" --child one >"$dir/stderr" 2>&1
i=0
while ! grep -q 'ODEBUG: SUMMARY' "$dir/messages" 2>/dev/null && [ $i -lt 50 ]; do
	sleep 0.1; i=$((i + 1))
done
name=$(basename "$prog")
# RFC 5424: "<PRI>1 TIME HOST APP PROCID ..."; LOG_USER|LOG_ERR is <11>.
ok=1
grep -q "^<11>1 .* $name [0-9]* .*ODEBUG: free active (active state 0)" "$dir/messages" || ok=0
grep -q "^<11>1 .* $name .* in sinks_culprit+" "$dir/messages" || ok=0
# The summary at exit goes to the same sink.
grep -q "^<11>1 .* $name .*ODEBUG: SUMMARY: 1 warning, 1 distinct report" "$dir/messages" || ok=0
grep -q ODEBUG "$dir/stderr" && ok=0
grep -q " $name $quiet_pid " "$dir/messages" && ok=0
if [ $ok = 1 ]; then
	echo "ok: $(grep -c ODEBUG "$dir/messages") report lines in syslog at LOG_ERR under $name"
	exit 0
fi
echo "syslog check failed; messages:"; cat "$dir/messages" 2>/dev/null; echo "stderr:"; cat "$dir/stderr"
exit 1
