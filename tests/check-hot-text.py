#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The hot functions (preload/hot-text.list) are all in the library, and
together: one block at the start of its text, within one 64 KiB window,
so that the pages a started libodebug runs are one window (lib/base/trim.c).  A line whose
function the hot archives do not have renamed means the list is stale:
run bench/hot-text.py again.

    check-hot-text.py LIST LIBRARY HOT_ARCHIVE...
"""
import re
import subprocess
import sys


def main():
    listing, lib, archives = sys.argv[1], sys.argv[2], sys.argv[3:]
    with open(listing) as f:
        want = {tuple(line.split()) for line in f if line.strip() and not line.startswith('#')}
    renamed = set()	# (source, name, size) of each .text.hot.NAME section
    for a in archives:
        out = subprocess.run(['objdump', '-h', a], capture_output=True, text=True,
                             check=True).stdout
        src = None
        for line in out.splitlines():
            # A member: NNN-SOURCE.o (preload/hot-archive.py numbers them).
            m = re.match(r'^(?:\d{3}-)?(\S+)\.o:\s+file format', line)
            if m:
                src = m.group(1)
            m = re.match(r'^\s*\d+ \.text\.hot\.(\S+)\s+([0-9a-f]+)', line)
            if m:
                renamed.add((src, m.group(1), int(m.group(2), 16)))
    missing = sorted(want - {(s, n) for s, n, _ in renamed})
    if missing:
        print('not renamed (run bench/hot-text.py): %s' %
              ' '.join('%s:%s' % m for m in missing[:20]))
        return 1
    funcs = []
    out = subprocess.run(['nm', '-S', lib], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        p = line.split()
        if len(p) == 4 and p[2] in 'tT':
            funcs.append((int(p[0], 16), int(p[1], 16), p[3].split('@')[0]))
    # A function is known by its name and size; a static one of another
    # file may share both (threads.c's and pthread-cond.c's waits): the
    # block's ends are the functions no other shares them with.
    sized = {(n, z) for _, n, z in renamed}
    count = {}
    for _, z, n in funcs:
        count[(n, z)] = count.get((n, z), 0) + 1
    sure = [(a, z) for a, z, n in funcs if (n, z) in sized and count[(n, z)] == 1]
    start, end = min(a for a, _ in sure), max(a + z for a, z in sure)
    hot = {a for a, z, n in funcs if (n, z) in sized}	# with their aliases' names
    others = sorted({n for a, z, n in funcs if start <= a < end and a not in hot})
    if others:
        print('the hot functions are not together: %s among them' % ' '.join(others[:10]))
        return 1
    # The library is loaded on a 64 KiB boundary (max-page-size): one
    # window of fault-around in the file's addresses is one in memory.
    if (end - 1) >> 16 != start >> 16:
        print('the hot functions, %#x-%#x, cross a 64 KiB boundary: one window no more'
              % (start, end))
        return 1
    size = sum(z for _, _, z in renamed)
    text = min(a for a, _, _ in funcs)
    print('%d hot functions, %d bytes in %d at .text+%d' % (len(renamed), size, end - start,
                                                            start - text))
    return 0


if __name__ == '__main__':
    sys.exit(main())
