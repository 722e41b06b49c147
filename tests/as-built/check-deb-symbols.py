#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The Debian symbols file (debian/libodebug1.symbols) lists exactly what
the built library exports on this architecture, so that a new interposer
fails here, in the unit suite, and not only when dpkg-gensymbols runs in
the package build.

usage: check-deb-symbols.py LIBRARY SYMBOLS_FILE
Status 77 (skip) without dpkg or nm."""
import re
import shutil
import subprocess
import sys

if not shutil.which('dpkg') or not shutil.which('nm'):
    print('SKIP: no dpkg or nm')
    sys.exit(77)
lib, symbols = sys.argv[1], sys.argv[2]
arch = subprocess.run(['dpkg', '--print-architecture'], capture_output=True,
                      text=True, check=True).stdout.strip()


def applies(tag):
    """Does a line's (arch=...) tag, or none, include this architecture?"""
    if not tag:
        return True
    arches = tag.split()
    if all(a.startswith('!') for a in arches):
        return arch not in [a[1:] for a in arches]
    return arch in arches


listed = set()
for line in open(symbols, encoding='utf-8'):
    m = re.match(r'^ (?:\(arch=([^)]*)\))?(\S+) ', line)
    if m and applies(m.group(1)):
        listed.add(m.group(2))

nm = subprocess.run(['nm', '-D', '--defined-only', lib], capture_output=True,
                    text=True, check=True).stdout
exported = set()
for f in nm.splitlines():
    name = f.split()[-1]
    # A version node is listed as NODE@NODE; nm shows it bare, of type A.
    exported.add(name.replace('@@', '@') if '@' in name else f'{name}@{name}')

bad = False
for s in sorted(exported - listed):
    print(f'{s}: exported, not in {symbols} for {arch} (debian/README.source says how to regenerate it)')
    bad = True
for s in sorted(listed - exported):
    print(f'{s}: in {symbols} for {arch}, not exported')
    bad = True
if not bad:
    print(f'ok: {len(exported)} exported symbols, as {symbols} lists them for {arch}')
sys.exit(1 if bad else 0)
