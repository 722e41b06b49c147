#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""count-atomics.py - instructions and atomic read-modify-writes per operation.

    ODEBUG=1 valgrind --tool=callgrind --dump-instr=yes --toggle-collect=cycle_thread \\
        --callgrind-out-file=cg.out build/bench/bench-objops cycle --live 1000 --ops 400000
    bench/count-atomics.py cg.out 400000

Reads callgrind's per-instruction counts, disassembles each object with
objdump (not libc or the loader) and counts the executed instructions that
are lock-prefixed or an xchg with memory: what a lock, a compare-and-swap
or an atomic add costs, counted rather than remembered.
"""
import collections
import re
import subprocess
import sys


def parse(path):
    counts = collections.Counter()   # (object, address) -> executed
    objs, obj, last, npos, in_call = {}, None, 0, 1, False
    with open(path) as f:
        for line in f:
            line = line.rstrip('\n')
            if line.startswith('positions:'):
                npos = len(line.split()) - 1
                continue
            m = re.match(r'c?ob=\((\d+)\)(?: (.*))?', line)
            if m:
                if m.group(2):
                    objs[m.group(1)] = m.group(2)
                if line.startswith('ob='):
                    obj = objs[m.group(1)]
                continue
            if line.startswith('calls='):
                in_call = True
                continue
            if not line or line[0] not in '0123456789+-*':
                continue
            parts = line.split()
            a = parts[0]
            if a.startswith('0x'):
                addr = int(a, 16)
            elif a[0] == '+':
                addr = last + int(a[1:])
            elif a[0] == '-':
                addr = last - int(a[1:])
            elif a == '*':
                addr = last
            else:
                addr = int(a)
            last = addr
            if in_call:             # a call's inclusive cost, counted in the callee
                in_call = False
                continue
            if len(parts) > npos:
                counts[(obj, addr)] += int(parts[npos])
    return counts


def main():
    counts, ops = parse(sys.argv[1]), float(sys.argv[2])
    per_obj = collections.defaultdict(dict)
    for (o, a), c in counts.items():
        per_obj[o][a] = c
    atomics = collections.Counter()
    for o, m in per_obj.items():
        if not o or not o.startswith('/') or 'libc.so' in o or 'ld-linux' in o:
            continue
        dis = subprocess.run(['objdump', '-d', '--no-show-raw-insn', o],
                             capture_output=True, text=True).stdout
        insns = {int(x.group(1), 16): x.group(2)
                 for x in re.finditer(r'^\s*([0-9a-f]+):\s+(.*)$', dis, re.M)}
        # Load base: the offset that puts most executed addresses on instructions.
        bases = collections.Counter(a - i for a in list(m)[:200] for i in insns
                                    if (a - i) & 0xfff == 0)
        base = bases.most_common(1)[0][0] if bases else 0
        for a, c in m.items():
            ins = insns.get(a - base, '')
            if ins.startswith('lock') or re.match(r'xchg\s+%\w+,.*\(', ins):
                atomics[(o.split('/')[-1], hex(a - base), ins)] += c
    print(f'instructions per operation: {sum(counts.values()) / ops:.1f}')
    print(f'atomic read-modify-writes per operation: {sum(atomics.values()) / ops:.2f}')
    for (o, a, ins), c in sorted(atomics.items(), key=lambda x: -x[1]):
        if c / ops >= 0.01:
            print(f'  {c / ops:6.3f}  {o} {a} {ins}')


if __name__ == '__main__':
    main()
