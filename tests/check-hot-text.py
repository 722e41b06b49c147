#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The hot functions (preload/hot-text.list) are all in the library, and
together: one block at the start of its text, so that the pages a started
libodebug runs are one or two 64 KiB windows (lib/trim.c).  A name the
list has and the build has not means the list is stale: run
bench/hot-text.py again.

    check-hot-text.py LIST LIBRARY
"""
import subprocess
import sys


def main():
    listing, lib = sys.argv[1:3]
    with open(listing) as f:
        names = [line.strip() for line in f if line.strip() and not line.startswith('#')]
    funcs = []	# (address, size, name): static names repeat across files
    out = subprocess.run(['nm', '-S', lib], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        p = line.split()
        if len(p) == 4 and p[2] in 'tT':
            funcs.append((int(p[0], 16), int(p[1], 16), p[3].split('@')[0]))
    have = {n for _, _, n in funcs}
    missing = [n for n in names if n not in have]
    if missing:
        print('not in %s (run bench/hot-text.py): %s' % (lib, ' '.join(missing)))
        return 1
    wanted = set(names)
    hot = {a for a, _, n in funcs if n in wanted}
    start = min(hot)
    end = max(a + s for a, s, n in funcs if n in wanted)
    others = sorted({n for a, _, n in funcs if start <= a < end and a not in hot})
    if others:
        print('the hot functions are not together: %s among them' % ' '.join(others[:10]))
        return 1
    size = sum(s for a, s in {(a, s) for a, s, n in funcs if a in hot})
    text = min(a for a, _, _ in funcs)
    print('%d hot functions, %d bytes in %d at .text+%d' % (len(hot), size, end - start, start - text))
    return 0


if __name__ == '__main__':
    sys.exit(main())
