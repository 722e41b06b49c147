#!/bin/sh
# The timer story in sanitizer builds of the program, linked with
# -lodebug: libodebug reports at the free() from the runtime's free hook,
# the fixup disarms the timer and the sanitizer stays silent; without the
# fixup, AddressSanitizer's own report still comes; a double free is still
# the sanitizer's report.  gcc ASan and TSan, clang ASan and TSan.
# And dlclose() of a plugin holding an active object, through the
# runtime's dlclose interceptor; and a program with threads.
# usage: check-sanitizers.sh SRCDIR LIBDIR PLUGIN
set -u
src=$1 libdir=$2 plugin=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0 ran=0
fail() { echo "FAIL: $*"; sed 's/^/    /' "$tmp/out"; status=1; bad=1; }
ok() { [ "$bad" = 1 ] || echo "ok $*"; bad=0; }
bad=0

# build NAME CC SANITIZER [CFLAGS...]: the story, or 1 if it cannot build
build() {
	b_name=$1 b_cc=$2 b_san=$3
	shift 3
	command -v "$b_cc" >/dev/null || return 1
	"$b_cc" -fsanitize="$b_san" -g -O1 -fno-omit-frame-pointer -fno-optimize-sibling-calls \
		-fno-inline -rdynamic -I"$src/include" "$@" \
		-L"$libdir" -Wl,--no-as-needed -lodebug -Wl,-rpath,"$libdir" \
		-o "$tmp/$b_name" >"$tmp/build.log" 2>&1 || {
		echo "skip $b_name: $b_cc -fsanitize=$b_san does not build here"
		sed 's/^/    /' "$tmp/build.log" | head -5
		return 1
	}
}

story="$src/examples/timer-wheel/conn-bug.c $src/examples/timer-wheel/timer.c"

for variant in gcc:address gcc:thread clang:address clang:thread; do
	cc=${variant%%:*} san=${variant#*:}
	name=conn-$cc-$san
	build "$name" "$cc" "$san" $story || continue
	ran=$((ran + 1))
	# 1. with the fixup: reported at the free(), repaired, sanitizer silent
	ODEBUG=1 ODEBUG_OPTIONS=verbosity=1 ASAN_OPTIONS=detect_leaks=0 \
		TSAN_OPTIONS=halt_on_error=1 "$tmp/$name" >"$tmp/out" 2>&1
	rc=$?
	grep -q "ODEBUG: free() is the sanitizer runtime's" "$tmp/out" ||
		fail "$name: no verbosity=1 notice"
	grep -q 'ODEBUG: free active (active state 0) object: .* object type: timer hint: keepalive_expired' "$tmp/out" ||
		fail "$name: no libodebug report"
	grep -q '#0 0x[0-9a-f]* in conn_disconnect+' "$tmp/out" ||
		fail "$name: the report's first frame is not conn_disconnect"
	grep -q 'Sanitizer' "$tmp/out" && fail "$name: the sanitizer reported"
	# Its warnings too (a start on a makecontext stack made ASan warn).
	grep -q '^==[0-9]*==' "$tmp/out" && fail "$name: the sanitizer warned"
	grep -q 'free() is bound to' "$tmp/out" && fail "$name: link-order warning"
	[ "$rc" -eq 0 ] || fail "$name: exit status $rc"
	ok "$name: reported at conn_disconnect, fixed up, sanitizer silent, exit 0"

	[ "$san" = address ] || continue
	# 2. without the fixup: the sanitizer's own report still comes
	build "$name-nofix" "$cc" "$san" -DTIMER_NO_FIXUP_FREE $story || continue
	ODEBUG=1 ASAN_OPTIONS=detect_leaks=0 "$tmp/$name-nofix" >"$tmp/out" 2>&1
	rc=$?
	grep -q 'ODEBUG: free active' "$tmp/out" || fail "$name-nofix: no libodebug report"
	grep -q 'ERROR: AddressSanitizer: heap-use-after-free' "$tmp/out" ||
		fail "$name-nofix: no AddressSanitizer report"
	[ "$rc" -ne 0 ] || fail "$name-nofix: exit status 0"
	ok "$name-nofix: libodebug's report, then AddressSanitizer's"

	# 3. a double free is still the sanitizer's report
	build "$name-df" "$cc" "$san" "$src/tests/sanitizer/double-free.c" || continue
	ODEBUG=1 ASAN_OPTIONS=detect_leaks=0 "$tmp/$name-df" >"$tmp/out" 2>&1
	rc=$?
	grep -q 'ERROR: AddressSanitizer: attempting double-free' "$tmp/out" ||
		fail "$name-df: no AddressSanitizer double-free report"
	grep -q 'ODEBUG:' "$tmp/out" && fail "$name-df: libodebug said something"
	[ "$rc" -ne 0 ] || fail "$name-df: exit status 0"
	ok "$name-df: AddressSanitizer's double-free report, unchanged"
	ODEBUG=1 ASAN_OPTIONS=detect_leaks=0 "$tmp/$name-df" invalid >"$tmp/out" 2>&1
	rc=$?
	grep -q 'ERROR: AddressSanitizer: attempting free on address which was not malloc()-ed' "$tmp/out" ||
		fail "$name-invalid: no AddressSanitizer invalid-free report"
	grep -q 'ODEBUG:' "$tmp/out" && fail "$name-invalid: libodebug said something"
	[ "$rc" -ne 0 ] || fail "$name-invalid: exit status 0"
	ok "$name-invalid: AddressSanitizer's invalid-free report, unchanged"

	# 4. dlclose() through the runtime's interceptor
	build "$name-dl" "$cc" "$san" "$src/tests/unload/host.c" -ldl || continue
	ODEBUG=1 ASAN_OPTIONS=detect_leaks=0 "$tmp/$name-dl" "$plugin" leak >"$tmp/out" 2>&1
	rc=$?
	grep -q 'object type: plugin_ticker' "$tmp/out" ||
		fail "$name-dl: no report of the unloaded module's object"
	grep -q 'unloaded by this dlclose()' "$tmp/out" || fail "$name-dl: the module is not named"
	grep -q 'Sanitizer' "$tmp/out" && fail "$name-dl: the sanitizer reported"
	[ "$rc" -eq 0 ] || fail "$name-dl: exit status $rc"
	ok "$name-dl: the unloaded module's active object reported"
done
# Threads: linked with -lodebug under ODEBUG=1 (a ThreadSanitizer thread
# must be started by its runtime before libodebug's thread set-up runs), and
# ThreadSanitizer programs with libodebug preloaded, unset and enabled (the
# runtime's interceptors come after libodebug's and must still see every call).
threads="$src/tests/sanitizer/threads.c"
for variant in gcc:address gcc:thread clang:address clang:thread; do
	cc=${variant%%:*} san=${variant#*:}
	name=threads-$cc-$san
	build "$name" "$cc" "$san" "$threads" || continue
	ran=$((ran + 1))
	ODEBUG=1 ASAN_OPTIONS=detect_leaks=0 TSAN_OPTIONS=halt_on_error=1 \
		"$tmp/$name" bug >"$tmp/out" 2>&1
	rc=$?
	grep -q '^4000$' "$tmp/out" || fail "$name: the threads did not all run"
	grep -q 'ODEBUG: free active .* object type: pthread_mutex' "$tmp/out" ||
		fail "$name: the held mutex's free was not reported"
	grep -q '#0 0x[0-9a-f]* in conn_drop_locked+' "$tmp/out" ||
		fail "$name: the report's first frame is not conn_drop_locked"
	grep -q '^==[0-9]*==\|Sanitizer' "$tmp/out" && fail "$name: the sanitizer said something"
	[ "$rc" -eq 0 ] || fail "$name: exit status $rc"
	ok "$name: 4 threads, the held mutex's free reported, sanitizer silent"

	[ "$san" = thread ] || continue
	"$cc" -fsanitize=thread -g -O1 -fno-omit-frame-pointer -fno-inline "$threads" \
		-o "$tmp/$name-plain" >"$tmp/build.log" 2>&1 || continue
	for on in 0 1; do
		ODEBUG=$on TSAN_OPTIONS=halt_on_error=1 LD_PRELOAD="$libdir/libodebug.so.1" \
			"$tmp/$name-plain" >"$tmp/out" 2>&1
		rc=$?
		grep -q '^4000$' "$tmp/out" || fail "$name preloaded, ODEBUG=$on: the threads did not all run"
		grep -q 'Sanitizer' "$tmp/out" && fail "$name preloaded, ODEBUG=$on: the sanitizer said something"
		[ "$rc" -eq 0 ] || fail "$name preloaded, ODEBUG=$on: exit status $rc"
		ok "$name preloaded, ODEBUG=$on: runs, sanitizer silent"
	done
done
[ "$ran" -gt 0 ] || { echo "no sanitizer could build here: skipped"; exit 77; }
exit $status
