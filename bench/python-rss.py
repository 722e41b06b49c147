# SPDX-License-Identifier: MIT
"""python-rss.py - where a small program's memory goes with ODEBUG=1.

    /usr/bin/python3 bench/python-rss.py LIBODEBUG [ROUNDS]

The workload is locks-real.sh's threads.py: 4 threads hash 400 jobs
handed out through a queue.  Runs it ROUNDS times plain and ROUNDS times
with LIBODEBUG preloaded and ODEBUG=1, alternated, and prints the medians
of the maximum RSS; then, from one run of each, the RSS at the end of the
run by mapping (each library's file pages, the anonymous memory), the
mappings that differ.
"""
import os
import re
import resource
import statistics
import subprocess
import sys
from collections import Counter


def work():
    import hashlib
    import queue
    import threading
    q = queue.Queue()

    def worker():
        while True:
            n = q.get()
            if n is None:
                return
            h = hashlib.sha256()
            for i in range(2000):
                h.update(str(i * n).encode())
    ts = [threading.Thread(target=worker) for _ in range(4)]
    for t in ts:
        t.start()
    for n in range(400):
        q.put(n)
    for _ in ts:
        q.put(None)
    for t in ts:
        t.join()


def peak_rss():
    """This process's maximum RSS so far, KB: VmHWM, which the kernel takes
    as the larger of its high-water mark and the RSS now.  getrusage()'s
    ru_maxrss is only the mark, which the kernel updates when the RSS is
    about to drop (an unmap, a MADV_DONTNEED): read in a running process,
    it lags by whatever was mapped since, and moved by 128 KB with the
    size of the environment."""
    try:
        with open('/proc/self/status') as f:
            for line in f:
                if line.startswith('VmHWM:'):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def rss_by_mapping():
    rss, name = Counter(), None
    with open('/proc/self/smaps') as f:
        for line in f:
            if re.match(r'^[0-9a-f]+-[0-9a-f]+ ', line):
                parts = line.split()
                name = parts[5] if len(parts) > 5 else '[anon]'
            elif line.startswith('Rss:'):
                rss[name] += int(line.split()[1])
    return rss


def run(lib, mode):
    env = dict(os.environ)
    env.pop('ODEBUG', None)
    env.pop('LD_PRELOAD', None)
    if lib:
        env.update(LD_PRELOAD=lib, ODEBUG='1')
    # Fixed addresses: the kernel maps a file's pages 64 KiB around each
    # fault, so where ASLR puts each library moves its RSS by +-100 KB.
    cmd = [sys.executable, __file__, mode]
    if os.environ.get('ASLR') != '1':
        cmd = ['setarch', '-R'] + cmd
    p = subprocess.run(cmd, env=env, capture_output=True,
                       text=True, check=True)
    return p.stdout


def main():
    if sys.argv[1:] == ['--maxrss']:
        work()
        print(peak_rss())
        return
    if sys.argv[1:] == ['--map']:
        work()
        for k, v in rss_by_mapping().items():
            print(v, k)
        return
    if len(sys.argv) < 2:
        sys.exit('usage: python-rss.py LIBODEBUG [ROUNDS]')
    lib, rounds = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 5
    plain, on = [], []
    for r in range(rounds):
        for which in ((0, 1) if r % 2 == 0 else (1, 0)):
            (on if which else plain).append(int(run(lib if which else None, '--maxrss')))
    p, o = statistics.median(plain), statistics.median(on)
    print(f'maximum RSS, median of {rounds}: plain {p:.0f} KB, ODEBUG=1 {o:.0f} KB, '
          f'added {o - p:+.0f} KB (plain {min(plain)}-{max(plain)}, '
          f'ODEBUG=1 {min(on)}-{max(on)})')
    maps = []
    for which in (None, lib):
        m = Counter()
        for line in run(which, '--map').splitlines():
            kb, name = line.split(' ', 1)
            m[name] += int(kb)
        maps.append(m)
    print('RSS at the end of one run, KB: plain, ODEBUG=1, added')
    for name in sorted(set(maps[0]) | set(maps[1]),
                       key=lambda n: -abs(maps[1][n] - maps[0][n])):
        if maps[1][name] != maps[0][name]:
            print(f'{maps[0][name]:8d} {maps[1][name]:8d} {maps[1][name] - maps[0][name]:+7d}  '
                  f'{name}')
    print(f'{sum(maps[0].values()):8d} {sum(maps[1].values()):8d} '
          f'{sum(maps[1].values()) - sum(maps[0].values()):+7d}  total')


if __name__ == '__main__':
    main()
