# SPDX-License-Identifier: MIT
"""hot-archive.py - a static library's objects with the hot functions' sections
renamed .text.hot.NAME, which the linker's default script places together
at the start of .text (lib/base/trim.c says why).  What that script places
before the hot block, the cold parts GCC splits off (.text.unlikely.*) and
the constructors and destructors (.text.startup.*, .text.exit.*), run once
or never after the start: they are renamed .text.cold.* and go with the
other functions after it, so the hot block starts right after the PLT, in
the same 64 KiB window.

    python3 hot-archive.py LIST IN.a OUT.a

LIST has a line "SOURCE NAME" a function (bench/hot-text.py writes it):
the object built from SOURCE, with -ffunction-sections, has function NAME
in section .text.NAME; static functions of the same name in other objects
stay where they are.  A line no object matches renames nothing.
"""
import os
import shutil
import subprocess
import sys
import tempfile


def members(archive, into):
    """The archive's objects, in order, as paths (a thin archive's are its own)."""
    with open(archive, 'rb') as f:
        thin = f.read(8) == b'!<thin>\n'
    names = subprocess.run(['ar', 't', archive], capture_output=True, text=True,
                           check=True).stdout.split()
    if thin:
        # ar prints a thin archive's member paths from here (binutils 2.40),
        # or as stored, from the archive's directory.
        base = os.path.dirname(archive)
        return [m if os.path.exists(m) else os.path.join(base, m) for m in names]
    subprocess.run(['ar', 'x', os.path.abspath(archive)], cwd=into, check=True)
    return [os.path.join(into, m) for m in names]


def sections(obj):
    """The names of the object's sections."""
    out = subprocess.run(['objdump', '-h', obj], capture_output=True, text=True,
                         check=True).stdout
    rows = [line.split() for line in out.splitlines() if line[:1] == ' ']
    return [r[1] for r in rows if len(r) > 1 and r[0].isdigit()]


def main():
    listing, archive, out = sys.argv[1:4]
    hot = {}
    with open(listing) as f:
        for line in f:
            if line.strip() and not line.startswith('#'):
                src, name = line.split()
                hot.setdefault(src, []).append(name)
    tmp = tempfile.mkdtemp(dir=os.path.dirname(os.path.abspath(out)))
    try:
        objects = []
        for i, m in enumerate(members(archive, tmp)):
            dst = os.path.join(tmp, '%03d-%s' % (i, os.path.basename(m)))
            renames = []
            for sec in sections(m):
                for before in ('.text.unlikely', '.text.startup', '.text.exit'):
                    if sec == before or sec.startswith(before + '.'):
                        renames += ['--rename-section',
                                    '%s=.text.cold%s' % (sec, sec[len(before):])]
            for name in hot.get(os.path.basename(m)[:-len('.o')], []):
                renames += ['--rename-section', '.text.%s=.text.hot.%s' % (name, name)]
            subprocess.run(['objcopy'] + renames + [m, dst], check=True)
            objects.append(dst)
        if os.path.exists(out):
            os.unlink(out)
        subprocess.run(['ar', 'rcs', out] + objects, check=True)
    finally:
        shutil.rmtree(tmp)


if __name__ == '__main__':
    main()
