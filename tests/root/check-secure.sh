#!/bin/sh
# A setgid program ignores ODEBUG (secure_getenv): nobody can switch
# libodebug on in a privileged process.  Root's own setuid runs are not in
# secure mode, so the program is made setgid and run as another user.
# usage: check-secure.sh LIBRARY HEADER_DIR
set -eu
lib=$1 inc=$2
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
command -v setpriv >/dev/null || { echo "SKIP: no setpriv"; exit 77; }
command -v cc >/dev/null || { echo "SKIP: no cc"; exit 77; }

dir=$(mktemp -d /tmp/odebug-secure.XXXXXX)
trap 'rm -rf "$dir"' EXIT
chmod 755 "$dir"
cp "$lib" "$dir/libodebug.so.1"
ln -s libodebug.so.1 "$dir/libodebug.so"
cat >"$dir/probe.c" <<'C'
#include <stdio.h>
#include "odebug.h"
int main(void) { printf("enabled=%d\n", debug_objects_enabled()); return 0; }
C
cc -I"$inc" "$dir/probe.c" -o "$dir/probe" -L"$dir" -lodebug -Wl,-rpath,"$dir"
chmod 755 "$dir/probe" "$dir/libodebug.so.1"

plain=$(ODEBUG=1 setpriv --reuid=nobody --regid=nogroup --clear-groups "$dir/probe")
chgrp root "$dir/probe"
chmod 2755 "$dir/probe"
secure=$(ODEBUG=1 setpriv --reuid=nobody --regid=nogroup --clear-groups "$dir/probe")
echo "as nobody: plain $plain, setgid $secure"
[ "$plain" = "enabled=1" ] || { echo "control run not enabled"; exit 1; }
[ "$secure" = "enabled=0" ] || { echo "setgid run honoured ODEBUG"; exit 1; }
