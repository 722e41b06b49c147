#!/usr/bin/env python3
"""module-graph.py - who calls whom in libodebug.so, from a build's objects

    scripts/module-graph.py [BUILDDIR]

For each object of lib/ and preload/, the files whose functions or data it
uses (nm: its undefined symbols, matched to the object that defines them).
ARCHITECTURE.md's module graph is drawn from this list.  Options: --all
also lists the edges to the files every part uses (prim.c, fmt.c, lock.c,
options.c and init.c's mode and guard).
"""
import glob
import os
import subprocess
import sys

BASE = {'prim.c', 'fmt.c', 'lock.c', 'options.c', 'init.c'}


def objects(build):
    for o in sorted(glob.glob(os.path.join(build, 'lib', 'libodebug-core.a.p', '*.o'))):
        yield os.path.basename(o)[:-2], o
    for o in sorted(glob.glob(os.path.join(build, 'preload', 'libodebug.so.*.p', '*.o'))):
        yield 'preload/' + os.path.basename(o)[:-2], o


def main():
    args = [a for a in sys.argv[1:] if not a.startswith('--')]
    build = args[0] if args else 'build'
    show_all = '--all' in sys.argv
    owner, uses = {}, {}
    for name, path in objects(build):
        out = subprocess.run(['nm', path], capture_output=True, text=True, check=True).stdout
        uses[name] = set()
        for line in out.splitlines():
            f = line.split()
            if len(f) == 3 and f[1] in 'TDBRVW':
                owner.setdefault(f[2], name)
            elif len(f) == 2 and f[0] == 'U':
                uses[name].add(f[1])
    if not uses:
        sys.exit(f'module-graph.py: no objects in {build} (build it first)')
    for name in sorted(uses):
        callees = {owner[s] for s in uses[name] if s in owner} - {name}
        if not show_all:
            callees -= BASE
        print(f'{name} -> {" ".join(sorted(callees)) or "(base only)"}')


if __name__ == '__main__':
    main()
