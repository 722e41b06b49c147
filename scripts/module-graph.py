#!/usr/bin/env python3
"""module-graph.py - who calls whom in libodebug's core, from a build's objects

    scripts/module-graph.py [--files] BUILDDIR
    scripts/module-graph.py --check SOURCE_ROOT BUILDDIR
    scripts/module-graph.py --doc FILE SOURCE_ROOT BUILDDIR

An edge A -> B: an object of A uses a function or variable that an object
of B defines (nm: A's undefined symbols, matched to B's definitions), so
it is the link-level graph, not the includes.  By default the folders of
lib/ (the layers, lib/meson.build's lib_layers, and the checker families
inside lib/checks); --files lists the files.

--check holds lib/ to its layering, and fails with one line per breach:
  - a loop of calls that crosses a folder;
  - a loop of more than 6 files;
  - a call from a layer to one above it (lib_layers' order).
--doc checks that FILE's graph block (between the lines
"<!-- module-graph -->" and "<!-- /module-graph -->") is the one the
build gives, so ARCHITECTURE.md's drawing cannot drift.
"""
import glob
import os
import re
import subprocess
import sys

MAX_LOOP = 6


def sources(root):
    """lib/'s C files by the object name meson gives them (folders joined by _)."""
    names = {}
    for path in glob.glob(os.path.join(root, 'lib', '**', '*.c'), recursive=True):
        rel = os.path.relpath(path, os.path.join(root, 'lib'))
        names[rel.replace('/', '_') + '.o'] = rel
    return names


def graph(root, build):
    names = sources(root)
    owner, uses = {}, {}
    for o in sorted(glob.glob(os.path.join(build, 'lib', 'libodebug-core.a.p', '*.o'))):
        rel = names.get(os.path.basename(o))
        if rel is None:
            continue
        out = subprocess.run(['nm', o], capture_output=True, text=True, check=True).stdout
        uses[rel] = set()
        for line in out.splitlines():
            f = line.split()
            if len(f) == 3 and f[1] in 'TDBRVW':
                owner.setdefault(f[2], rel)
            elif len(f) == 2 and f[0] == 'U':
                uses[rel].add(f[1])
    if not uses:
        sys.exit(f'module-graph.py: no objects of lib/ in {build} (build it first)')
    return {a: {owner[s] for s in syms if s in owner} - {a} for a, syms in uses.items()}


def folder(rel):
    return os.path.dirname(rel) or '.'


def layers(root):
    text = open(os.path.join(root, 'lib', 'meson.build')).read()
    block = re.search(r'lib_layers = \[(.*?)\]', text, re.S)
    return re.findall(r"'([a-z/]+)'", block.group(1)) if block else []


def loops(g):
    """The strongly connected components of more than one file (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(g.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


def breaches(root, g):
    order = {name: i for i, name in enumerate(layers(root))}
    bad = []
    for comp in loops(g):
        folders = sorted({folder(f) for f in comp})
        if len(folders) > 1:
            bad.append(f'a loop crosses folders {", ".join(folders)}: {" ".join(comp)}')
        if len(comp) > MAX_LOOP:
            bad.append(f'a loop of {len(comp)} files (at most {MAX_LOOP}): {" ".join(comp)}')
    for a in sorted(g):
        for b in sorted(g[a]):
            la, lb = folder(a).split('/')[0], folder(b).split('/')[0]
            if la in order and lb in order and order[lb] > order[la]:
                bad.append(f'{a} calls up, into {b} ({la} is below {lb})')
    return bad


def folder_lines(g):
    edges = {}
    for a, callees in g.items():
        edges.setdefault(folder(a), set()).update(folder(b) for b in callees)
    return [f'{f} -> {" ".join(sorted(edges[f] - {f})) or "(nothing)"}' for f in sorted(edges)]


def main():
    args = sys.argv[1:]
    if args[:1] == ['--check'] and len(args) == 3:
        bad = breaches(args[1], graph(args[1], args[2]))
        for line in bad:
            print(f'module-graph.py: {line}', file=sys.stderr)
        sys.exit(1 if bad else 0)
    if args[:1] == ['--doc'] and len(args) == 4:
        text = open(args[1]).read()
        block = re.search(r'<!-- module-graph -->\n```\n(.*?)```\n<!-- /module-graph -->', text, re.S)
        want = folder_lines(graph(args[2], args[3]))
        if not block or block.group(1).splitlines() != want:
            print(f'module-graph.py: {args[1]}\'s graph differs from the build\'s; it is:',
                  file=sys.stderr)
            print('\n'.join(want), file=sys.stderr)
            sys.exit(1)
        return
    files = '--files' in args
    args = [a for a in args if not a.startswith('--')]
    build = args[0] if args else 'build'
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    g = graph(root, build)
    if files:
        for a in sorted(g):
            print(f'{a} -> {" ".join(sorted(g[a])) or "(nothing)"}')
    else:
        print('\n'.join(folder_lines(g)))


if __name__ == '__main__':
    main()
