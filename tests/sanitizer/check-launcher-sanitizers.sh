#!/bin/sh
# Sanitizer builds with threads, three ways: linked with -lodebug under
# ODEBUG=1; run through the odebug launcher (which preloads a runtime named
# in DT_NEEDED before libodebug); and libodebug preloaded without ODEBUG.
# gcc and clang (clang's static runtime, its default, and its shared one,
# -shared-libsan); AddressSanitizer, ThreadSanitizer, UBSan, LeakSanitizer.
# tests/sanitizer/threads.c: 4 threads share a mutex, then a block holding
# a locked mutex is freed, which libodebug reports at the free().
# A variant whose compiler or runtime is missing, or whose program does not
# run even alone, is skipped; nothing at all: status 77.
# usage: check-launcher-sanitizers.sh SRCDIR LIBDIR LAUNCHER
set -u
src=$1 libdir=$2 launcher=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0 ran=0
fail() { echo "FAIL: $*"; sed 's/^/    /' "$tmp/out" | head -20; status=1; }
threads=$src/tests/sanitizer/threads.c
export ASAN_OPTIONS=detect_leaks=0 TSAN_OPTIONS=halt_on_error=1 \
	UBSAN_OPTIONS=halt_on_error=1 LSAN_OPTIONS=exitcode=23
unset ODEBUG ODEBUG_OPTIONS LD_PRELOAD

# build NAME CC FLAGS...: a program, or 1 (skipped) if it cannot build
build() {
	b_name=$1
	shift
	command -v "$2" >/dev/null 2>&1 || command -v "$1" >/dev/null 2>&1 || return 1
	"$@" -g -O1 -fno-omit-frame-pointer -fno-optimize-sibling-calls -fno-inline \
		-pthread -o "$tmp/$b_name" >"$tmp/build.log" 2>&1 || {
		echo "skip $b_name: $* does not build here"
		return 1
	}
}

# clean: the run's output has the 4000, no sanitizer line, status 0
clean() {
	grep -q '^4000$' "$tmp/out" || return 1
	! grep -q '^==[0-9]*==\|Sanitizer\|runtime error' "$tmp/out" || return 1
	[ "$rc" -eq 0 ]
}

# reported: clean, and libodebug's report of the held mutex at the free(),
# its first frame the culprit.  clang's static LeakSanitizer tail-calls from
# its free() interceptor, so the frames of its free path (RunFreeHooks,
# __lsan::Deallocate) come first there: the culprit must then be in the
# first three.
reported() {
	clean && grep -q 'ODEBUG: free active .* object type: pthread_mutex' "$tmp/out" || return 1
	case $name in
	clang-leak-*) grep -q '#[0-2] 0x[0-9a-f]* in conn_drop_locked+' "$tmp/out" ;;
	*) grep -q '#0 0x[0-9a-f]* in conn_drop_locked+' "$tmp/out" ;;
	esac
}

for cc in gcc clang; do
	command -v "$cc" >/dev/null 2>&1 || { echo "skip $cc: not installed"; continue; }
	for san in address thread undefined leak; do
		for link in default shared; do
			name=$cc-$san-$link
			flags="-fsanitize=$san"
			if [ "$link" = shared ]; then
				# gcc's runtimes are shared already; clang's with -shared-libsan,
				# found through the runtime's directory (no default path has it)
				[ "$cc" = clang ] || continue
				rt=$(clang -print-file-name=libclang_rt.asan-x86_64.so 2>/dev/null)
				flags="$flags -shared-libsan -Wl,-rpath,${rt%/*}"
			fi
			# shellcheck disable=SC2086
			build "$name" "$cc" $flags "$threads" || continue
			"$tmp/$name" bug >"$tmp/out" 2>&1
			rc=$?
			if ! clean; then
				echo "skip $name: does not run even without libodebug (status $rc)"
				continue
			fi
			runtime=$(readelf -dW "$tmp/$name" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(lib[^]]*san[^]]*\)\]/\1/p' | head -n 1)
			ran=$((ran + 1))

			# shellcheck disable=SC2086
			build "$name-linked" "$cc" $flags "$threads" -I"$src/include" \
				-L"$libdir" -Wl,--no-as-needed -lodebug -Wl,-rpath,"$libdir" &&
			{
				ODEBUG=1 "$tmp/$name-linked" bug >"$tmp/out" 2>&1
				rc=$?
				reported && echo "ok $name, linked with -lodebug: reported at the free(), sanitizer silent" ||
					fail "$name, linked with -lodebug, ODEBUG=1: status $rc"
			}

			"$launcher" "$tmp/$name" bug >"$tmp/out" 2>&1
			rc=$?
			reported && echo "ok $name through odebug${runtime:+ ($runtime preloaded first)}: reported at the free(), sanitizer silent" ||
				fail "$name through odebug: status $rc"

			LD_PRELOAD=$libdir/libodebug.so.1 "$tmp/$name" bug >"$tmp/out" 2>&1
			rc=$?
			case $runtime in
			libasan.so* | libclang_rt.asan*)
				# AddressSanitizer's own check: it refuses, in its words (not a crash)
				[ "$rc" -lt 128 ] && grep -q 'ASan runtime does not come first' "$tmp/out" &&
					echo "ok $name, LD_PRELOAD without ODEBUG: AddressSanitizer's refusal, status $rc, no crash" ||
					fail "$name, LD_PRELOAD without ODEBUG: status $rc"
				;;
			*)
				clean && ! grep -q ODEBUG "$tmp/out" &&
					echo "ok $name, LD_PRELOAD without ODEBUG: runs, silent" ||
					fail "$name, LD_PRELOAD without ODEBUG: status $rc"
				;;
			esac
		done
	done
done
[ "$ran" -gt 0 ] || { echo "no sanitizer build runs here: skipped"; exit 77; }
exit $status
