# Shared by tests/suites/*.sh: a library's own test suite, brought in as
# Debian's source package at test time (nothing of it is kept in the
# tree), run plain and under the build tree's odebug launcher.  Sourced.

# suite_source PACKAGE DIR: unpack Debian's source of PACKAGE into DIR
# (once), writing a deb-src entry beside the system's deb one if there is
# none.  Prints the unpacked folder.
suite_source() {
	pkg=$1 dir=$2
	mkdir -p "$dir"
	found=$(find "$dir" -maxdepth 1 -type d -name "$pkg-[0-9]*" | head -n 1)
	if [ -n "$found" ]; then
		echo "$found"
		return 0
	fi
	if ! grep -rqs '^Types:.*deb-src' /etc/apt/sources.list.d/ &&
	   ! grep -qs '^deb-src' /etc/apt/sources.list; then
		[ -f /etc/apt/sources.list.d/debian.sources ] ||
			{ echo "no /etc/apt/sources.list.d/debian.sources to derive deb-src from" >&2; return 1; }
		sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources \
			> /etc/apt/sources.list.d/odebug-src.sources
		apt-get update -q >/dev/null || return 1
	fi
	(cd "$dir" && apt-get source -q "$pkg" >/dev/null 2>&1) ||
		{ echo "apt-get source $pkg failed" >&2; return 1; }
	find "$dir" -maxdepth 1 -type d -name "$pkg-[0-9]*" | head -n 1
}

# as_nobody CMD...: suites that refuse to run as root run as nobody.
as_nobody() {
	if [ "$(id -u)" = 0 ]; then
		setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"
	else
		"$@"
	fi
}

# suite_reports LOGDIR ALLOWED: every report written under LOGDIR (files
# TEST.<pid>, log_path=LOGDIR/TEST) is "TEST TYPE" in the file ALLOWED
# (lines "TEST TYPE reason...", '#' comments).  Prints each report's
# pair; returns 1 if one is not allowed.
suite_reports() {
	logdir=$1 allowed=$2 bad=0
	for f in "$logdir"/*; do
		[ -f "$f" ] || continue
		t=$(basename "$f"); t=${t%.*}
		grep -q 'object type: ' "$f" || {
			echo "report (NOT allowed, unparsed): $t"; sed 's/^/    /' "$f" | head -30; bad=1; }
		for type in $(sed -n 's/^ODEBUG: .* object type: \([^ ]*\).*/\1/p' "$f" | sort -u); do
			if grep -v '^#' "$allowed" | grep -q "^$t $type "; then
				echo "report (allowed): $t $type"
			else
				echo "report (NOT allowed): $t $type"
				sed 's/^/    /' "$f" | head -30
				bad=1
			fi
		done
	done
	return $bad
}
