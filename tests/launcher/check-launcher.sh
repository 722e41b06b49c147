#!/bin/sh
# The odebug launcher: what the program receives, what it refuses, where it
# finds the library.
# usage: check-launcher.sh LAUNCHER LIBRARY SHOW NOTICE_BUG [STATIC]
#   SHOW        prints its arguments and environment (show.c); not linked
#               with libodebug
#   NOTICE_BUG  the refcount example, linked without libodebug
#   STATIC      a statically linked program (or empty: that case is skipped)
set -u
abs() { case $1 in /* | '') echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
launcher=$(abs "$1") lib=$(abs "$2") show=$(abs "$3") notice_bug=$(abs "$4")
static=$(abs "${5:-}")
failed=0
tmp=$(mktemp -d /tmp/odebug-launcher.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
libdir=$(cd "$(dirname "$lib")" && pwd -P)
want_lib=$libdir/libodebug.so.1

ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; failed=1; }

# run ARGS...: run the launcher; sets out, err and rc.
run() {
	"$launcher" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	out=$(cat "$tmp/out")
	err=$(cat "$tmp/err")
}

# expect_refusal RC PATTERN DESCRIPTION ARGS...: the launcher must print
# one line matching PATTERN, exit with RC, and not run the program.
expect_refusal() {
	want_rc=$1 pattern=$2 what=$3
	shift 3
	run "$@"
	if [ "$rc" -eq "$want_rc" ] && [ -z "$out" ] &&
	   [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] &&
	   printf '%s\n' "$err" | grep -q -- "$pattern"; then
		ok "$what: $err (status $rc)"
	else
		bad "$what: status $rc (want $want_rc), stderr '$err', stdout '$out'"
	fi
}

# --- what the program receives ---
run "$show"
if [ "$rc" -eq 0 ] && printf '%s\n' "$out" | grep -qx 'ODEBUG=1' &&
   printf '%s\n' "$out" | grep -qx 'libodebug: enabled' &&
   printf '%s\n' "$out" | grep -qx 'ODEBUG_OPTIONS=(unset)' && [ -z "$err" ]; then
	ok "plain run: ODEBUG=1, libodebug loaded and enabled, no ODEBUG_OPTIONS"
else
	bad "plain run: status $rc, output: $out $err"
fi

preload=$(printf '%s\n' "$out" | sed -n 's/^LD_PRELOAD=//p')
if [ "$preload" = "$want_lib" ]; then
	ok "LD_PRELOAD is the absolute path $preload"
else
	bad "LD_PRELOAD is '$preload', want '$want_lib'"
fi

# ODEBUG=0 in the environment does not turn it off.
ODEBUG=0 run "$show"
printf '%s\n' "$out" | grep -qx 'libodebug: enabled' && ok "ODEBUG=0 in the environment is overridden" ||
	bad "ODEBUG=0 in the environment: $out"

# Arguments intact: spaces, quotes, an empty one, globs, a newline, dashes.
nl='
'
set -- 'a b' '"double"' "it's" '' '*' '  lead' "tab	x" "line1${nl}line2" '-o' '--' '--help' '$HOME' '\\'
run "$show" "$@"
expected="argc=$(($# + 1))"
for a in "$@"; do
	expected="${expected}${nl}[$a]"
done
got=$(printf '%s\n' "$out" | sed -n '1,/^ODEBUG=/p' | sed '$d')
if [ "$got" = "$expected" ]; then
	ok "$# arguments with spaces, quotes, globs, a newline and dashes arrive intact"
else
	bad "arguments: got <<$got>>, want <<$expected>>"
fi

# -- ends the launcher's options; options after PROGRAM are PROGRAM's.
run -o max_reports=2 -- "$show" -o x --version
got=$(printf '%s\n' "$out" | sed -n '2,4p' | tr '\n' ' ')
if [ "$got" = "[-o] [x] [--version] " ] &&
   printf '%s\n' "$out" | grep -qx 'ODEBUG_OPTIONS=max_reports=2'; then
	ok "-- and options after PROGRAM go to PROGRAM"
else
	bad "-- handling: $out"
fi

# LD_PRELOAD: prepended to what is there.
cp "$lib" "$tmp/libother.so"
LD_PRELOAD="$tmp/libother.so" run "$show"
got=$(printf '%s\n' "$out" | sed -n 's/^LD_PRELOAD=//p')
if [ "$got" = "$want_lib $tmp/libother.so" ]; then
	ok "LD_PRELOAD prepended: $got"
else
	bad "LD_PRELOAD with an existing one: '$got'"
fi

# -o joined with ':', after any ODEBUG_OPTIONS already set.
run -o max_reports=3 -o stack_depth=4 -oprint_stats=0 "$show"
printf '%s\n' "$out" | grep -qx 'ODEBUG_OPTIONS=max_reports=3:stack_depth=4:print_stats=0' &&
	ok "-o options joined with ':'" || bad "-o joining: $out"
ODEBUG_OPTIONS=selftest=1 run -o max_reports=3 -o 'log_path="/tmp/a:b"' "$show"
printf '%s\n' "$out" | grep -qx 'ODEBUG_OPTIONS=selftest=1:max_reports=3:log_path="/tmp/a:b"' &&
	ok "-o appended to an existing ODEBUG_OPTIONS" || bad "-o appending: $out"
# A value with ':' arrives whole: quoted for the parser, as libodebug reads it.
run -o 'log_path=/tmp/a:b' -o 'suppressions=/tmp/"c":d' -o help=1 "$show"
printf '%s\n' "$out" | grep -qx "ODEBUG_OPTIONS=log_path=\"/tmp/a:b\":suppressions='/tmp/\"c\":d':help=1" &&
	printf '%s\n' "$err" | grep -q "log_path .* now '/tmp/a:b'" &&
	printf '%s\n' "$err" | grep -q "suppressions .* now '/tmp/\"c\":d'" &&
	! printf '%s\n' "$err" | grep -q 'unknown option' &&
	ok "-o values with ':' quoted: $(printf '%s\n' "$out" | grep ^ODEBUG_OPTIONS=)" ||
	bad "-o with ':' in a value: $out $err"
# And one with ',' (the other separator).
run -o 'log_path=/tmp/a,b' -o help=1 "$show"
printf '%s\n' "$out" | grep -qx 'ODEBUG_OPTIONS=log_path="/tmp/a,b":help=1' &&
	printf '%s\n' "$err" | grep -q "log_path .* now '/tmp/a,b'" &&
	ok "-o values with ',' quoted" || bad "-o with ',' in a value: $out $err"
expect_refusal 125 "holds ':' or ',' and both quote characters" "-o value with ':' and both quotes" \
	-o "log_path=/tmp/'a':\"b\"" "$show"
ODEBUG_OPTIONS=selftest=1 run "$show"
printf '%s\n' "$out" | grep -qx 'ODEBUG_OPTIONS=selftest=1' &&
	ok "ODEBUG_OPTIONS kept as is without -o" || bad "ODEBUG_OPTIONS without -o: $out"

# Exit status: the program's, including death by a signal.
codes_ok=1
for code in 0 1 42 255; do
	SHOW_EXIT=$code run "$show"
	[ "$rc" -eq "$code" ] || { bad "exit status $code came back as $rc"; codes_ok=0; }
done
[ "$codes_ok" -eq 1 ] && ok "exit statuses 0, 1, 42, 255 returned"
SHOW_SIGNAL=15 run "$show"
[ "$rc" -eq 143 ] && ok "killed by SIGTERM: status 143, as without the launcher" ||
	bad "SIGTERM: status $rc"

# Found through PATH, as exec would.
mkdir "$tmp/bin"
cp "$show" "$tmp/bin/show-prog"
PATH="$tmp/bin:$PATH" run show-prog x
[ "$rc" -eq 0 ] && printf '%s\n' "$out" | grep -qx '\[x\]' && ok "PROGRAM found through PATH" ||
	bad "PATH search: status $rc, $err"

# A #! script runs, checked through its interpreter.
printf '#!/bin/sh\necho "script: ODEBUG=$ODEBUG args: $*"\n' >"$tmp/script"
chmod +x "$tmp/script"
run "$tmp/script" 'a b' c
[ "$rc" -eq 0 ] && [ "$out" = "script: ODEBUG=1 args: a b c" ] && ok "a #! script runs" ||
	bad "script: status $rc, $out $err"

# A script with no #! runs under /bin/sh, and LD_PRELOAD names libodebug
# alone: never its own lines, even one naming a shared object that exists
# (it would be preloaded into every process the script starts).
cp "$lib" "$tmp/x.so"
chmod 644 "$tmp/x.so"
printf '%s || :\n"$1"\ngrep -c x.so /proc/self/maps\n' "$tmp/x.so" >"$tmp/noshebang"
chmod +x "$tmp/noshebang"
run "$tmp/noshebang" "$show"
preload=$(printf '%s\n' "$out" | sed -n 's/^LD_PRELOAD=//p')
maps=$(printf '%s\n' "$out" | tail -n 1)
if [ "$preload" = "$want_lib" ] && [ "$maps" = 0 ] &&
   ! printf '%s\n' "$err" | grep -q 'ld\.so'; then
	ok "a script with no #!: its children preload libodebug only, no ld.so error"
else
	bad "a script with no #!: LD_PRELOAD '$preload', x.so mapped $maps times, stderr: $err"
fi

# --- what it refuses: one line, non-zero, the program never runs ---
expect_refusal 127 'odebug: no-such-program-here: command not found' \
	"not found in PATH" no-such-program-here
expect_refusal 127 "odebug: $tmp/nothing: no such file" "no such file" "$tmp/nothing"
# An empty name is no command, as a shell says: not a search of PATH.
expect_refusal 127 "^odebug: '': command not found (an empty program name)\$" \
	"an empty program name" ''
expect_refusal 127 "^odebug: '': command not found" "an empty program name after --" -- ''
cp "$show" "$tmp/noexec"
chmod 644 "$tmp/noexec"
expect_refusal 126 'not executable' "not executable" "$tmp/noexec"
cp "$show" "$tmp/bin/noexec-prog"
chmod 644 "$tmp/bin/noexec-prog"
PATH="$tmp/bin:$PATH" expect_refusal 126 'noexec-prog: not executable' \
	"not executable, in PATH" noexec-prog
expect_refusal 126 'is a directory' "a directory" "$tmp"
cp "$show" "$tmp/setuid"
chmod 4755 "$tmp/setuid"
expect_refusal 126 'setuid: is setuid: LD_PRELOAD and ODEBUG are ignored' "setuid" "$tmp/setuid"
cp "$show" "$tmp/setgid"
chmod 2755 "$tmp/setgid"
expect_refusal 126 'setgid: is setgid' "setgid" "$tmp/setgid"
# File capabilities put the loader in secure mode as setuid does (setting
# them needs CAP_SETFCAP and setcap(8); the launcher asks getcap(8)).
setcap=$(command -v setcap || ls /usr/sbin/setcap /sbin/setcap 2>/dev/null | head -n 1)
cp "$show" "$tmp/filecap"
if [ -n "$setcap" ] && "$setcap" cap_net_raw=ep "$tmp/filecap" 2>/dev/null; then
	expect_refusal 126 'filecap: has file capabilities: LD_PRELOAD and ODEBUG are ignored' \
		"file capabilities" "$tmp/filecap"
	printf '#!%s\n' "$tmp/filecap" >"$tmp/filecap-script"
	chmod +x "$tmp/filecap-script"
	expect_refusal 126 'its interpreter .*filecap: has file capabilities' \
		"a script whose interpreter has file capabilities" "$tmp/filecap-script"
	# As a user's PATH on Debian: no sbin directory.
	if ! PATH=/usr/bin:/bin command -v getcap >/dev/null; then
		PATH=/usr/bin:/bin expect_refusal 126 'has file capabilities' \
			"file capabilities, getcap not in PATH" "$tmp/filecap"
	fi
else
	echo "skip: file capabilities (setcap unavailable or not permitted)"
fi
if [ -n "$static" ]; then
	expect_refusal 126 'is statically linked (no program interpreter): LD_PRELOAD cannot' \
		"statically linked" "$static"
	printf '#!%s\n' "$static" >"$tmp/static-script"
	chmod +x "$tmp/static-script"
	expect_refusal 126 'its interpreter .* is statically linked' \
		"a script whose interpreter is static" "$tmp/static-script"
else
	echo "skip: statically linked (no static program could be built)"
fi
# Another architecture: the show program with e_machine changed.
cp "$show" "$tmp/foreign"
printf '\050' | dd of="$tmp/foreign" bs=1 seek=18 conv=notrunc 2>/dev/null
expect_refusal 126 'built for another architecture' "another architecture" "$tmp/foreign"
expect_refusal 125 'unknown option' "an unknown option" -x "$show"
expect_refusal 125 "expected KEY=VALUE" "-o without =" -o max_reports "$show"
expect_refusal 125 "needs KEY=VALUE" "-o without a value" -o
run
[ "$rc" -eq 125 ] && printf '%s\n' "$err" | grep -q '^usage: odebug' && ok "no PROGRAM: usage, status 125" ||
	bad "no PROGRAM: status $rc"
run --help
[ "$rc" -eq 0 ] && printf '%s\n' "$out" | grep -q '^usage: odebug \[-o KEY=VALUE\]\.\.\. \[--\] PROGRAM \[ARGS\.\.\.\]' &&
	ok "--help" || bad "--help: $rc $out"
run --version
[ "$rc" -eq 0 ] && printf '%s\n' "$out" | grep -qx 'odebug (libodebug) [0-9][0-9.]*' &&
	ok "--version: $out" || bad "--version: $rc $out"

# -o help=1 without PROGRAM: libodebug's table, with the -o values in it.
run -o help=1 -o max_reports=7
if [ "$rc" -eq 0 ] && [ -z "$out" ] && printf '%s\n' "$err" | grep -q '^ODEBUG: options' &&
   printf '%s\n' "$err" | grep -q '^ODEBUG:   max_reports .* now 7: ' &&
   printf '%s\n' "$err" | grep -q '^ODEBUG:   help .* now 1: '; then
	ok "-o help=1 without PROGRAM prints the options, status 0"
else
	bad "-o help=1 without PROGRAM: status $rc, stdout '$out', stderr '$err'"
fi
run -o help=0
[ "$rc" -eq 125 ] && printf '%s\n' "$err" | grep -q '^usage: odebug' &&
	ok "-o help=0 without PROGRAM: usage, status 125" || bad "-o help=0 without PROGRAM: status $rc"

# --- where it finds the library ---
# A relocated tree, laid out as the build tree's launcher expects (the
# library beside it, build/preload/), called through a symlink from
# elsewhere and through PATH.
mkdir -p "$tmp/tree/bin" "$tmp/elsewhere"
cp "$launcher" "$tmp/tree/bin/odebug"
cp "$lib" "$tmp/tree/bin/libodebug.so.1"
ln -s "$tmp/tree/bin/odebug" "$tmp/elsewhere/odebug"
got=$("$tmp/elsewhere/odebug" "$show" | sed -n 's/^LD_PRELOAD=//p')
[ "$got" = "$tmp/tree/bin/libodebug.so.1" ] && ok "relocated, through a symlink: $got" ||
	bad "relocated launcher preloads '$got'"
got=$(cd "$tmp/tree/bin" && PATH="$tmp/tree/bin:$PATH" odebug "$show" | sed -n 's/^LD_PRELOAD=//p')
[ "$got" = "$tmp/tree/bin/libodebug.so.1" ] && ok "relocated, through PATH: $got" ||
	bad "launcher through PATH preloads '$got'"
got=$(ODEBUG_LIBRARY="$tmp/libother.so" "$tmp/tree/bin/odebug" "$show" | sed -n 's/^LD_PRELOAD=//p')
[ "$got" = "$tmp/libother.so" ] && ok "ODEBUG_LIBRARY overrides: $got" ||
	bad "ODEBUG_LIBRARY: '$got'"
launcher_saved=$launcher
launcher=$tmp/tree/bin/odebug
# --audit: libodebug-audit.so relative to the library (beside it in a build
# tree); a missing one is refused (a build tree has no installed path).
if [ -f "$libdir/libodebug-audit.so" ]; then
	expect_refusal 125 'cannot find libodebug-audit.so' "--audit without the module" --audit "$show"
	cp "$libdir/libodebug-audit.so" "$tmp/tree/bin/"
	got=$("$tmp/elsewhere/odebug" --audit "$show" | sed -n 's/^LD_AUDIT=//p')
	[ "$got" = "$tmp/tree/bin/libodebug-audit.so" ] && ok "--audit, relocated: LD_AUDIT=$got" ||
		bad "--audit, relocated: LD_AUDIT='$got'"
	got=$(LD_AUDIT=/x/other.so "$tmp/elsewhere/odebug" --audit "$show" 2>/dev/null |
		sed -n 's/^LD_AUDIT=//p')
	[ "$got" = "$tmp/tree/bin/libodebug-audit.so:/x/other.so" ] && ok "--audit keeps LD_AUDIT: $got" ||
		bad "--audit with LD_AUDIT set: '$got'"
fi
rm "$tmp/tree/bin/libodebug.so.1"
expect_refusal 125 'cannot find libodebug' "library missing" "$show"
mkdir -p "$tmp/with space/bin"
cp "$launcher_saved" "$tmp/with space/bin/odebug"
cp "$lib" "$tmp/with space/bin/libodebug.so.1"
launcher="$tmp/with space/bin/odebug"
expect_refusal 125 'LD_PRELOAD cannot express' "library path with a space" "$show"
launcher=$launcher_saved

# --- a report from an example bug, through the launcher only ---
"$notice_bug" >"$tmp/out" 2>&1
rc=$?
if [ "$rc" -ne 0 ] && grep -Eq 'undefined symbol: (__)?debug_object' "$tmp/out"; then
	ok "the example alone cannot even start: $(head -1 "$tmp/out")"
else
	bad "the example started without the launcher (status $rc)"
fi
run "$notice_bug"
if [ "$rc" -eq 0 ] &&
   printf '%s\n' "$err$nl$out" | grep -q '^ODEBUG: activate destroyed (active state 0) .* object type: session' &&
   printf '%s\n' "$err$nl$out" | grep -q ' in notice_deliver+'; then
	ok "under the launcher the example's bug is reported: $(printf '%s\n' "$err$nl$out" | grep '^ODEBUG: activate')"
else
	bad "example under the launcher: status $rc: $out $err"
fi

exit "$failed"
