#!/bin/sh
# Seven bugs a newcomer wrote, each read from its report alone, under the
# build tree's launcher: one "free active" report of the right type whose
# first frame is the culprit function, a line naming who holds the object
# (the holder, the thread that holds the mutex, or the annotated type's
# hint), whether the fixup repaired it, and the next step.  The program
# finishes with status 0 either way.
# usage: check-newcomer.sh LAUNCHER BINDIR
set -u
launcher=$1 bin=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
failed=0

# expect PROGRAM TYPE CULPRIT HOLDER-PATTERN FIXED(yes|no)
expect() {
	prog=$1 type=$2 culprit=$3 holder=$4 fixed=$5 bad=
	"$launcher" "$bin/$prog" >/dev/null 2>"$out"
	status=$?
	[ "$status" = 0 ] || bad="$bad; status $status"
	[ "$(grep -c '^ODEBUG: free active' "$out")" = 1 ] || bad="$bad; not one free-active report"
	grep -q "^ODEBUG: free active .* object type: $type\\( \\|\$\\)" "$out" || bad="$bad; type is not $type"
	grep -m1 '^ *#0 ' "$out" | grep -q " in $culprit+" || bad="$bad; frame #0 is not $culprit"
	grep -q "$holder" "$out" || bad="$bad; no line matching '$holder'"
	if [ "$fixed" = yes ]; then
		grep -q '^ODEBUG: fixed up: ' "$out" || bad="$bad; not said fixed up"
	else
		grep -q '^ODEBUG: not fixed up: ' "$out" || bad="$bad; not said not fixed up"
	fi
	grep -q '^ODEBUG: next step: ' "$out" || bad="$bad; no next step"
	if [ -n "$bad" ]; then
		echo "FAIL: $prog${bad}"
		sed 's/^/    /' "$out" | head -30
		failed=1
	else
		echo "ok: $prog: $culprit, $type, holder named, fixed up: $fixed"
	fi
}

expect epoll-data epoll conn_drop '^ODEBUG: holder: registered on epoll fd [0-9]* for fd [0-9]*, data.ptr' yes
expect posix-timer posix_timer session_end '^ODEBUG: holder: timer .* armed, sival_ptr' yes
expect job-mutex pthread_mutex job_cancel '^ODEBUG: held by thread [0-9]* (job-mutex)' no
expect annotated timer conn_free 'object type: timer hint: on_expire' yes
[ -x "$bin/uv-handle" ] && expect uv-handle uv_timer stop_job '^ODEBUG: holder: libuv loop .*uv_close() it' no
[ -x "$bin/ev-event" ] && expect ev-event libevent_event conn_close '^ODEBUG: holder: .*libevent' yes
[ -x "$bin/glib-source" ] && expect glib-source glib_source_data job_forget '^ODEBUG: holder: .*source' yes
# origins=1 on GLib data: the program's lines, not GLib's dispatch.
if [ -x "$bin/glib-origins" ]; then
	"$launcher" -o origins=1 "$bin/glib-origins" >/dev/null 2>"$out"
	init=$(grep -A1 '^ODEBUG: object initialised at:' "$out" | tail -n 1)
	act=$(grep -A1 '^ODEBUG: object activated at:' "$out" | tail -n 1)
	# Two lines of main: the g_timeout_add() call, then the loop's.
	if echo "$init" | grep -q ' in main+' && echo "$act" | grep -q ' in main+' &&
	   [ "${init#* in main+}" != "${act#* in main+}" ] &&
	   ! sed -n '/initialised at:/,/^ODEBUG: fixed up/p' "$out" | grep -q 'libglib'; then
		echo "ok: glib-origins: initialised and activated at the program's lines, no GLib frame"
	else
		echo "FAIL: glib-origins: origins are not the program's lines"
		sed 's/^/    /' "$out" | head -30
		failed=1
	fi
fi
exit $failed
