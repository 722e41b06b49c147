#!/bin/sh
# SPDX-License-Identifier: MIT
# libevent's own test suite, from Debian's source package, plain and under
# the build tree's libodebug with its libevent module: the module must not
# change what libevent's tests see.
#
# As root on Debian 12: writes a deb-src entry if there is none, fetches
# the source (apt-get source libevent) into SCRATCH, builds with its own
# build system only what the tests need, and runs on the epoll backend:
#   normal  test/regress, every default sub-test, and the test-* programs;
#   debug   test/regress again with EVENT_DEBUG_MODE=1 (libevent's debug
#           mode, as its test.sh runs it);
#   ndebug  test/regress's main/ and finalize/ groups and test-eof and
#           test-weof (the 1.4 API's users) on a libevent_core built with
#           -DNDEBUG, whose event_set() tail-calls event_assign();
# each plain and under ODEBUG=1 with LD_PRELOAD of BUILD's libodebug.so
# (module_path=BUILD/modules; that the module attached is checked first).
# Each sub-test's result must be the same in both; a sub-test that differs
# is run again alone (timing-sensitive ones flake under load) and fails if
# it differs three times.  Any ODEBUG output fails its sub-test unless the
# allowlist below names it, with its reason.  Network: loopback only (the
# sub-tests that need more are off by default in libevent's suite).
# Prints each sub-test that fails, then "N passed, N failed"; exit status
# 1 if any failed.
#
# usage: tests/suites/libevent.sh [SCRATCH [BUILD]]   (build/suites, build)
set -eu

scratch=$(realpath -m "${1:-build/suites}")
build=$(realpath -m "${2:-build}")
odebug_lib=$build/preload/libodebug.so
module_dir=$build/modules
started=$(date +%s)

# Sub-tests whose ODEBUG output is a real bug of the suite, one a line:
# NAME<tab>OBJECT TYPE<tab>why.  NAME is MODE:GROUP/TEST or MODE:test-*.
allowlist=$(cat <<'EOF'
EOF
)

say() { printf '%s\n' "$*"; }
die() { say "libevent suite: $*" >&2; exit 2; }

[ "$(id -u)" = 0 ] || die "run as root (apt-get source, build dependencies)"
{ [ -f "$odebug_lib" ] && [ -f "$module_dir/libevent/libodebug-libevent.so" ]; } ||
	die "no $odebug_lib or libevent module under $module_dir: build first"

# --- the source ----------------------------------------------------------

# A deb-src twin of the system's deb entries, if apt has no deb-src yet.
deb_src() {
	if grep -qsE '^Types:.*deb-src' /etc/apt/sources.list.d/*.sources ||
	   grep -qsE '^deb-src ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list; then
		return 0
	fi
	[ -f /etc/apt/sources.list.d/debian.sources ] ||
		die "no deb-src entry and no /etc/apt/sources.list.d/debian.sources to copy"
	sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources \
		>/etc/apt/sources.list.d/odebug-src.sources
	apt-get update -q >/dev/null
}

# What fetching and building need (scripts/deps has the compiler and autotools).
build_deps() {
	missing=
	for p in dpkg-dev gcc make autoconf automake python3 zlib1g-dev; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
			missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	# shellcheck disable=SC2086
	DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -q \
		--no-install-recommends $missing >/dev/null
}

find_src() {
	src=$(find "$scratch" -maxdepth 1 -type d -name 'libevent-*' 2>/dev/null | head -1)
}

fetch() {
	find_src
	[ -n "$src" ] && return 0
	deb_src
	build_deps
	mkdir -p "$scratch"
	( cd "$scratch" && { apt-get source -q libevent >fetch.log 2>&1 ||
		{ apt-get update -q >/dev/null && apt-get source -q libevent >fetch.log 2>&1; }; } ) ||
		die "apt-get source libevent failed: $(tail -3 "$scratch/fetch.log")"
	find_src
	[ -n "$src" ] || die "apt-get source left no libevent-* folder in $scratch"
}

# configure DIR [VAR=VALUE...]: an out-of-tree build of what the tests need.
configure() {
	dir=$1
	shift
	rm -rf "$dir" && mkdir -p "$dir"
	( cd "$dir" && "$src/configure" -q --disable-openssl --disable-samples \
		--disable-static --disable-dependency-tracking "$@" >configure.log 2>&1 &&
	  make include/event2/event-config.h >make.log 2>&1 ) ||
		die "configure failed: see $dir/configure.log"
}

# Debian's patches touch Makefile.am: regenerate with this system's
# autotools (the package does too), then build the libraries and tests
# only, and libevent_core again with -DNDEBUG.
tests="test-init test-eof test-weof test-time test-changelist test-closed test-fdleak
	test-dumpevents test-ratelim"
build_libevent() {
	obj=$scratch/obj
	nd=$scratch/obj-ndebug
	[ -f "$obj/.built" ] && [ -f "$nd/.built" ] && return 0
	( cd "$src" && autoreconf -f -I m4 >"$scratch/autoreconf.log" 2>&1 ) ||
		die "autoreconf failed: $(tail -3 "$scratch/autoreconf.log")"
	configure "$obj" &
	pid=$!
	configure "$nd" CFLAGS="-g -O2 -DNDEBUG"
	wait "$pid" || exit 2
	# shellcheck disable=SC2046
	make -C "$obj" -j2 test/regress $(for t in $tests; do printf 'test/%s ' "$t"; done) \
		>>"$obj/make.log" 2>&1 || die "build failed: see $obj/make.log"
	make -C "$nd" -j2 libevent_core.la >>"$nd/make.log" 2>&1 ||
		die "build failed: see $nd/make.log"
	touch "$obj/.built" "$nd/.built"
}

# --- running -------------------------------------------------------------

# The epoll backend only, as libevent's test.sh runs one backend.
backend_env() {
	export EVENT_NOEVPORT=yes EVENT_NOKQUEUE=yes EVENT_NODEVPOLL=yes \
		EVENT_NOPOLL=yes EVENT_NOSELECT=yes EVENT_NOWIN32=yes
	unset EVENT_EPOLL_USE_CHANGELIST EVENT_PRECISE_TIMER EVENT_DEBUG_MODE
	export LD_LIBRARY_PATH="$obj/.libs"
}

# under CONFIG MODE PROGRAM ARGS...: run in MODE's environment, with
# nothing more (plain) or with libodebug (odebug).
under() {
	config=$1 mode=$2
	shift 2
	case $mode in
	debug)	set -- env EVENT_DEBUG_MODE=1 "$@" ;;
	ndebug)	set -- env LD_LIBRARY_PATH="$nd/.libs:$obj/.libs" "$@" ;;
	esac
	if [ "$config" = odebug ]; then
		ODEBUG=1 LD_PRELOAD=$odebug_lib ODEBUG_OPTIONS=module_path=$module_dir "$@"
	else
		env -u ODEBUG -u LD_PRELOAD "$@"
	fi
}

# regress MODE CONFIG OUT TESTS...: one run of regress, its output in OUT.
regress() {
	mode=$1 config=$2 out=$3
	shift 3
	under "$config" "$mode" timeout 150 "$obj/test/.libs/regress" "$@" >"$out" 2>&1 || true
}

# results OUT MODE: "MODE:NAME RESULT REPORTLINES" per sub-test of a
# regress output.  A sub-test's line starts "group/name: "; its result
# follows, maybe after lines the forked child wrote (libevent's warnings,
# ODEBUG reports), which belong to it.  A sub-test libevent retries
# itself (TT_RETRIABLE) appears again: its last result counts.
results() {
	awk -v mode="$2" '
	/^[a-z0-9_]+\/[^ :]+: / {
		cur = $1; sub(/:$/, "", cur); res[cur] = "NONE"; rep[cur] += 0
		short = cur; sub(/^[^\/]*\//, "", short)
	}
	cur == "" { next }
	/ODEBUG:/ { rep[cur]++ }
	/(^|[] ])OK$/ { res[cur] = "OK" }
	/SKIPPED$/ { res[cur] = "SKIPPED" }
	/DISABLED$/ { res[cur] = "DISABLED" }
	index($0, "[" short " FAILED]") { res[cur] = "FAILED" }
	END { for (t in res) print mode ":" t, res[t], rep[t] }' "$1"
}

# The default sub-tests in shards: http's spread over three (its slow
# ones sleep through their timeouts); ndebug's groups in one.
shards() {
	"$obj/test/.libs/regress" --list-tests | awk '/^    [a-z0-9_]+\// && !/\(/ { print $1 }' \
		>"$work/list"
	grep -v '^http/' "$work/list" >"$work/normal0"
	grep '^http/' "$work/list" | awk -v w="$work" '{ print > (w "/normal" (NR % 3 + 1)) }'
	for i in 0 1 2 3; do cp "$work/normal$i" "$work/debug$i"; done
	grep -E '^(main|finalize)/' "$work/list" >"$work/ndebug0"
}

# Every shard of every mode in both configurations at once (they mostly sleep).
run_regress() {
	for shard in "$work"/normal? "$work"/debug? "$work"/ndebug?; do
		mode=$(basename "$shard" | tr -d 0-9)
		for config in plain odebug; do
			# shellcheck disable=SC2046
			regress "$mode" "$config" "$shard-$config.out" $(cat "$shard") &
		done
	done
}

# The test-* programs: exit status (test-dumpevents: its output checked
# by libevent's own script), in both configurations.
programs=$(for t in $tests; do printf 'normal:%s ' "$t"; done; echo ndebug:test-eof ndebug:test-weof)
run_programs() {
	for config in plain odebug; do
		for p in $programs; do
			run_program "${p%%:*}" "${p#*:}" "$config" "$work/$p-$config" &
		done
	done
}

run_program() {	# MODE TEST CONFIG OUTBASE: OUTBASE.out, and OUTBASE.res "rc reportlines"
	rc=0
	if [ "$2" = test-dumpevents ]; then
		under "$3" "$1" timeout 60 "$obj/test/.libs/$2" >"$4.raw" 2>"$4.out" || rc=$?
		python3 "$src/test/check-dumpevents.py" <"$4.raw" >>"$4.out" 2>&1 || rc=$((rc + 100))
	else
		under "$3" "$1" timeout 60 "$obj/test/.libs/$2" >"$4.out" 2>&1 || rc=$?
	fi
	echo "$rc $(grep -c 'ODEBUG:' "$4.out")" >"$4.res"
}

# The module attached: it tracked events in a sub-test (libevent's events
# are then the only objects tracked: the built-in checks off).
attached() {
	ODEBUG=1 LD_PRELOAD=$odebug_lib \
	ODEBUG_OPTIONS=module_path=$module_dir:check_pthread=0:check_sem=0:check_held=0:print_stats=1 \
		"$obj/test/.libs/regress" --no-fork main/simpleread 2>&1 |
		awk '/^objs_allocated/ { n = $2 } END { exit !(n > 0) }'
}

allowed() {	# NAME REPORTS: every ODEBUG report of NAME is on the allowlist
	printf '%s\n' "$allowlist" | awk -F '\t' -v n="$1" '$1 == n { print $2 }' >"$work/allow"
	[ -s "$work/allow" ] || return 1
	grep -o 'object type: [A-Za-z0-9_]*' "$2" | sed 's/object type: //' | sort -u |
		while read -r type; do grep -qx "$type" "$work/allow" || exit 1; done
}

passed=0
failed=0
fail() {	# NAME WHY [FILE]: one failure, FILE's first lines shown
	say "FAIL $1: $2"
	[ $# -lt 3 ] || sed 's/^/    /' "$3" | head -20
	failed=$((failed + 1))
}

# Each sub-test plain against odebug, from the shards' outputs.
compare_regress() {
	for config in plain odebug; do
		for mode in normal debug ndebug; do
			cat "$work/$mode"?-"$config.out" >"$work/$mode-$config.out"
			results "$work/$mode-$config.out" "$mode"
		done | LC_ALL=C sort >"$work/$config.res"
	done
	LC_ALL=C join "$work/plain.res" "$work/odebug.res" >"$work/joined" || true
	if [ "$(wc -l <"$work/joined")" != "$(wc -l <"$work/plain.res")" ] ||
	   [ "$(wc -l <"$work/joined")" != "$(wc -l <"$work/odebug.res")" ]; then
		fail regress "sub-tests missing from a run: $(wc -l <"$work/plain.res") plain, $(wc -l \
			<"$work/odebug.res") under libodebug"
	fi
	while read -r name pres _ ores orep; do
		if [ "$pres" = "$ores" ] && [ "$ores" != NONE ] && [ "$orep" = 0 ]; then
			passed=$((passed + 1))
		else
			judge "$name" "$pres" "$ores" "$orep"
		fi
	done <"$work/joined"
}

# judge NAME PLAIN ODEBUG REPORTLINES: a sub-test that differed, run alone again.
judge() {
	mode=${1%%:*} test=${1#*:}
	tries=1
	while [ "$2" != "$3" ] && [ $tries -lt 3 ]; do
		tries=$((tries + 1))
		regress "$mode" plain "$work/again-plain.out" "$test"
		regress "$mode" odebug "$work/again-odebug.out" "$test"
		set -- "$1" "$(results "$work/again-plain.out" x | awk '{ print $2 }')" \
			"$(results "$work/again-odebug.out" x | awk '{ print $2 }')" "$4"
	done
	# The first run's lines of the sub-test: its ODEBUG reports.
	awk -v t="$test: " '/^[a-z0-9_]+\/[^ :]+: / { on = (index($0, t) == 1) } on' \
		"$work/$mode-odebug.out" | grep 'ODEBUG:' >"$work/reports" || true
	if [ "$2" != "$3" ] || [ "$3" = NONE ]; then
		fail "$1" "plain $2, under libodebug $3 (run $tries times)"
	elif [ "$4" != 0 ] && ! allowed "$1" "$work/reports"; then
		fail "$1" "$4 ODEBUG lines under libodebug:" "$work/reports"
	else
		passed=$((passed + 1))
	fi
}

compare_programs() {
	for p in $programs; do
		read -r prc _ <"$work/$p-plain.res"
		read -r orc orep <"$work/$p-odebug.res"
		grep 'ODEBUG:' "$work/$p-odebug.out" >"$work/reports" || true
		if [ "$prc" != "$orc" ]; then
			fail "$p" "exit $prc plain, $orc under libodebug" "$work/$p-odebug.out"
		elif [ "$orep" != 0 ] && ! allowed "$p" "$work/reports"; then
			fail "$p" "$orep ODEBUG lines under libodebug:" "$work/reports"
		else
			passed=$((passed + 1))
		fi
	done
}

fetch
build_libevent
built=$(date +%s)
backend_env
work=$scratch/run
rm -rf "$work" && mkdir -p "$work"
attached || die "the libevent module did not attach to regress (module_path=$module_dir)"
shards
run_regress
run_programs
wait
compare_regress
compare_programs
say "$(basename "$src"): regress (normal, debug, ndebug) and test programs, plain and" \
	"under libodebug; fetch and build $((built - started)) s, runs $(($(date +%s) - built)) s"
say "$passed passed, $failed failed"
[ "$failed" = 0 ]
