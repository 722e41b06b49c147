#!/bin/sh
# libuv's own test suite (Debian's source of the system's libuv1, built
# with its tests) under the build tree's odebug launcher, with the libuv
# module attached, against the same suite plain, one test at a time: every
# test must end the same way (a difference is run again, twice at most),
# every report must be one libuv.allowed names (a real bug of the suite,
# with its reason), and the module must have tracked handles (a run where
# it never attached would check nothing).  The two tests that need a
# route outside this machine are left out.
# usage: tests/suites/libuv.sh BUILD [SCRATCH]
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
build=$(cd "$1" && pwd)
scratch=${2:-$build/suites}
mkdir -p "$scratch" && scratch=$(cd "$scratch" && pwd)	# the runs cd elsewhere
launcher=$build/preload/odebug
[ -x "$launcher" ] || { echo "no launcher at $launcher"; exit 1; }
[ -f "$build/modules/libuv/libodebug-libuv.so" ] || { echo "the build has no libuv module"; exit 1; }
command -v cmake >/dev/null || apt-get install -y -q cmake >/dev/null

src=$(suite_source libuv1 "$scratch") || exit 1
bin=$src/b
if [ ! -x "$bin/uv_run_tests" ]; then
	cmake -S "$src" -B "$bin" -DLIBUV_BUILD_TESTS=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		>"$scratch/libuv-cmake.log" 2>&1 &&
	cmake --build "$bin" -j2 --target uv_run_tests >>"$scratch/libuv-cmake.log" 2>&1 ||
		{ tail -20 "$scratch/libuv-cmake.log"; exit 1; }
fi
# The suite refuses root and writes beside itself.
[ "$(id -u)" = 0 ] && chown -R nobody:nogroup "$src"

out=$scratch/libuv-out
rm -rf "$out"; mkdir -p "$out/log"; chmod -R 777 "$out"
cd "$bin" || exit 1
as_nobody ./uv_run_tests >"$out/plain.tap" 2>&1
tests=$(sed -n 's/^\(not \)\{0,1\}ok [0-9]* - \([^ ]*\).*/\2/p' "$out/plain.tap")
[ -n "$tests" ] || { echo "the plain run listed no test"; tail "$out/plain.tap"; exit 1; }

# Tests whose result depends on a route outside this machine (they
# connect to 1.2.3.4 and expect a time-out): left out.
outside='tcp_close_while_connecting tcp_connect_timeout'

# result TEST [LAUNCHER]: the test's TAP verdict, run alone.
result() {
	as_nobody env ODEBUG_MODULE_COUNTS="$out/counts" \
		ODEBUG_OPTIONS="log_path=$out/log/$1" ${2:-} ./uv_run_tests "$1" \
		>"$out/one.tap" 2>&1
	grep -E "^(not )?ok [0-9]+ - $1( |\$)" "$out/one.tap" | sed 's/ [0-9]* - .*//'
}

# One process a test, plain then under odebug, so that a report names its
# test (log_path); a test that ends otherwise under odebug is run again,
# twice at most (some depend on timing).  No parallel runs: the suite's
# tests bind fixed ports.
pass=0 fail=0
for t in $tests; do
	case " $outside " in *" $t "*) continue ;; esac
	for try in 1 2 3; do
		want=$(result "$t")
		got=$(result "$t" "$launcher")
		[ "$got" = "$want" ] && break
	done
	if [ "$got" = "$want" ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "differs: $t: plain '$want', under odebug '${got:-no result}'"
		sed 's/^/    /' "$out/one.tap" | tail -15
	fi
done
suite_reports "$out/log" "$here/libuv.allowed" || fail=$((fail + 1))
handles=$(awk '/^libuv:/ { n += $2 } END { print n + 0 }' "$out/counts" 2>/dev/null)
echo "the libuv module tracked $handles handles"
[ "${handles:-0}" -gt 0 ] || { echo "the module never attached"; fail=$((fail + 1)); }
echo "libuv suite: $pass passed, $fail failed"
[ "$fail" = 0 ]
