#!/bin/sh
# The CI recipes of examples/ci/project, each run as a user would: the
# buggy test (a block freed with its mutex locked) passes without libodebug
# and fails under the recipe (odebug -o exitcode=1); the correct test passes
# both ways.  The build tree's launcher is found through PATH.
# ctest: the README's CMake recipes, the first with the CMake installed.
# ci-files: the job files users copy (examples/ci/*.yml) parse as YAML,
# run the meson recipe tested here and lead with the README's CMake recipe.
# usage: check-recipe.sh meson|ctest|make|ci-files SRCDIR LAUNCHER
# Status 77 when the recipe's tool is not installed.
set -u
recipe=$1 src=$2 launcher=$3
case $launcher in /*) ;; *) launcher=$PWD/$launcher ;; esac
tmp=$(mktemp -d /tmp/odebug-recipe.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cp -r "$src/examples/ci/project" "$tmp/p"
mkdir "$tmp/bin"
ln -s "$launcher" "$tmp/bin/odebug"
cd "$tmp/p" || exit 1
unset ODEBUG ODEBUG_OPTIONS LD_PRELOAD MAKEFLAGS MESON_TESTTHREADS
failed=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; sed 's/^/    /' "$tmp/log" | tail -30; failed=1; }
need() { command -v "$1" >/dev/null 2>&1 || { echo "skip: $1 is not installed"; exit 77; }; }

# plain COMMAND...: both tests pass without libodebug (the bug is silent)
# odebug COMMAND...: under the recipe, it fails naming buggy, and ok passes
# (the caller's grep patterns in $pass_ok, $fail_buggy)
plain() {
	"$@" >"$tmp/log" 2>&1 && ok "$recipe without libodebug: both tests pass" ||
		bad "$recipe without libodebug: status $?"
}
odebug() {
	PATH="$tmp/bin:$PATH" "$@" >"$tmp/log" 2>&1
	rc=$?
	if [ "$rc" -ne 0 ] && grep -Eq "$fail_buggy" "$tmp/log" && grep -Eq "$pass_ok" "$tmp/log"; then
		ok "$recipe under odebug: buggy fails (status $rc), ok passes"
	else
		bad "$recipe under odebug: status $rc"
	fi
}

case $recipe in
meson)
	need meson
	PATH="$tmp/bin:$PATH" meson setup build >"$tmp/log" 2>&1 || { bad "meson setup"; exit 1; }
	grep -q 'Program odebug found: YES' "$tmp/log" || bad "meson setup did not find odebug"
	plain meson test -C build
	pass_ok='^ *[0-9]+/2 +(odebug-ci-example:)?ok +OK' fail_buggy='^ *[0-9]+/2 +(odebug-ci-example:)?buggy +FAIL'
	odebug meson test -C build --setup odebug
	grep -q 'ODEBUG: free active .* object type: pthread_mutex' build/meson-logs/testlog-odebug.txt &&
		ok "the report is in meson's test log" || bad "no report in build/meson-logs/testlog-odebug.txt"
	;;
ctest)
	need cmake
	need ctest
	# The README's recipes, in its order: the first is the one a reader
	# takes, so it must work with the CMake installed here; a later one
	# for CMAKE_TEST_LAUNCHER is run where CMake has it (3.29).
	vars=$(grep -o 'cmake -B build -D[A-Z_]*="odebug;-o;exitcode=1"' "$src/README.md" |
		sed 's/.* -D\([A-Z_]*\)=.*/\1/' | awk '!seen[$0]++')
	[ -n "$vars" ] || { echo "log: README.md" >"$tmp/log"; bad "no cmake -B build -D...=\"odebug;-o;exitcode=1\" in README.md"; exit 1; }
	echo "cmake $(cmake --version | sed -n 's/^cmake version //p'); README's recipes: $(echo $vars)"
	v=$(cmake --version | sed -n 's/^cmake version \([0-9]*\)\.\([0-9]*\).*/\1 \2/p')
	set -- $v
	launcher=no
	[ "$1" -gt 3 ] || { [ "$1" -eq 3 ] && [ "$2" -ge 29 ]; } && launcher=yes
	cmake -S . -B plain >"$tmp/log" 2>&1 && cmake --build plain >>"$tmp/log" 2>&1 ||
		{ bad "cmake build"; exit 1; }
	plain ctest --test-dir plain
	first=yes
	for var in $vars; do
		if [ "$var" = CMAKE_TEST_LAUNCHER ] && [ "$launcher" = no ] && [ "$first" = no ]; then
			echo "skip: $var needs CMake 3.29"
			continue
		fi
		first=no
		# A build directory of its own: the cache would keep the other variable.
		cmake -S . -B "build-$var" "-D$var=odebug;-o;exitcode=1" >"$tmp/log" 2>&1 &&
			cmake --build "build-$var" >>"$tmp/log" 2>&1 || { bad "cmake -D$var"; exit 1; }
		pass_ok='Test +#[0-9]+: ok .* Passed' fail_buggy='Test +#[0-9]+: buggy .*Failed'
		echo "-- $var"
		odebug ctest --test-dir "build-$var" --output-on-failure
		grep -q 'ODEBUG: free active .* object type: pthread_mutex' "$tmp/log" &&
			ok "$var: the report is in ctest's output" || bad "$var: no report in ctest's output"
	done
	;;
make)
	need make
	need autoreconf
	need automake
	{ autoreconf -fi && ./configure && make; } >"$tmp/log" 2>&1 || { bad "autoreconf/configure/make"; exit 1; }
	plain make check
	pass_ok='^PASS: ok' fail_buggy='^FAIL: buggy'
	odebug make check LOG_COMPILER=odebug LOG_FLAGS="-o exitcode=1"
	grep -q 'ODEBUG: free active .* object type: pthread_mutex' buggy.log &&
		ok "the report is in buggy.log" || bad "no report in buggy.log"
	;;
ci-files)
	need python3
	python3 -c 'import yaml' 2>/dev/null || { echo "skip: no python3 yaml module"; exit 77; }
	# The CMake recipe the README leads with (the one recipe-ctest runs
	# first) comes first in each file too.
	lead=$(grep -o 'cmake -B build -D[A-Z_]*="odebug;-o;exitcode=1"' "$src/README.md" | head -1)
	[ -n "$lead" ] || { echo "log: README.md" >"$tmp/log"; bad "no cmake recipe in README.md"; exit 1; }
	for f in "$src"/examples/ci/*.yml; do
		python3 -c 'import sys, yaml; yaml.safe_load(open(sys.argv[1]))' "$f" >"$tmp/log" 2>&1 &&
			grep -q 'meson test -C build --setup odebug' "$f" &&
			[ "$(grep -o 'cmake -B build -D[A-Z_]*="odebug;-o;exitcode=1"' "$f" | head -1)" = "$lead" ] &&
			grep -q 'LOG_COMPILER=odebug LOG_FLAGS="-o exitcode=1"' "$f" &&
			ok "${f##*/}: YAML, and the recipes tested here" || bad "${f##*/}"
	done
	;;
*)
	echo "usage: check-recipe.sh meson|ctest|make|ci-files SRCDIR LAUNCHER"
	exit 2
	;;
esac
exit "$failed"
