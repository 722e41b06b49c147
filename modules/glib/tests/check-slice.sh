#!/bin/sh
# g_slice memory under the odebug launcher: a source's data freed with
# g_slice_free1() while attached is reported at the culprit (GLib before
# 2.76 releases g_slice memory with free() only under G_SLICE=always-malloc,
# which the launcher sets), and after the fixup the program's callback
# never runs.  A G_SLICE the user set is left as given.
# usage: check-slice.sh LAUNCHER SLICE
set -u
launcher=$1 prog=$2
failed=0
err=$(env -u G_SLICE "$launcher" "$prog" 2>&1 >/dev/null)
out=$(env -u G_SLICE "$launcher" "$prog" 2>/dev/null)
for want in 'ODEBUG: free active' 'object type: glib_source_data hint: on_timeout' \
	    '#0 0x[0-9a-f]* in slice_drop'; do
	if printf '%s\n' "$err" | grep -q -- "$want"; then
		echo "ok: the report has '$want'"
	else
		echo "FAIL: no '$want' in:"; printf '%s\n' "$err"; failed=1
	fi
done
if [ "$(printf '%s\n' "$err" | grep -c 'ODEBUG: free active')" = 1 ] &&
   [ "$out" = "timeouts after the free: 0" ]; then
	echo "ok: one report, no callback after it: $out"
else
	echo "FAIL: want one report and no timeout after the free; stdout: $out"; failed=1
fi
# The user's G_SLICE is kept.
if env G_SLICE=debug-blocks "$launcher" sh -c 'test "$G_SLICE" = debug-blocks'; then
	echo "ok: G_SLICE=debug-blocks left as given"
else
	echo "FAIL: the launcher replaced the user's G_SLICE"; failed=1
fi
exit $failed
