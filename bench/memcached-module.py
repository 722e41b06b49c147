#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""memcached-module.py - what the libevent module costs a real libevent
user: memcached (Debian's; the libevent 1.4 API, event_set, event_base_set,
event_add and event_del at each change of a connection's state) serving
memcslap, its own CPU time per operation, plain and under `odebug`.

    bench/memcached-module.py --build BUILD [--before OLDBUILD] [--rounds 7]
                              [--keys 20000] [--concurrency 16] [--instr]

Configurations, for BUILD and, with --before, for OLDBUILD (another build
tree, e.g. the tree before a change, used read-only):

  plain     memcached alone;
  none      under BUILD/preload/odebug with modules=none (every built-in
            check on, no module);
  module    under BUILD/preload/odebug with its defaults (the libevent
            module loads by itself).

Every round runs each configuration once, in an order rotated from round
to round; the server is started afresh on a private port of 127.0.0.1,
loaded with `memcslap -c C -t set -e K` then `-t get`, and its user and
system time (all threads, /proc/PID/stat) taken around the load is divided
by the operations it counted (stats cmd_get + cmd_set).  Each
configuration's ratio to plain is taken within its round; the median and
range over the rounds are printed, and module/none (what the module adds)
too.  A run under odebug counts only if memcached printed no report and
had libodebug (and, for module, libodebug-libevent.so) mapped.  Exit
status 77 when memcached or memcslap is missing.

--instr counts the server's instructions instead (callgrind, user space,
all threads; no noise from other load): each configuration loaded with K
and 2K keys per client, so that start and exit cancel out, and the
instructions per operation printed with what the module adds over none.
"""
import argparse
import os
import pwd
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time

sys.dont_write_bytecode = True     # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from servers import cpu_seconds, free_port, mapped, wait_port  # noqa: E402


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def stats(port):
    """memcached's own counters."""
    with socket.create_connection(('127.0.0.1', port), timeout=10) as so:
        so.sendall(b'stats\r\n')
        text = b''
        while not text.endswith(b'END\r\n'):
            text += so.recv(65536)
    return dict(re.findall(r'STAT (\w+) (\d+)', text.decode()))


def load(port, args, keys=None):
    for test in ('set', 'get'):
        p = subprocess.run(['memcslap', '-s', f'127.0.0.1:{port}', '-c', str(args.concurrency),
                            '-t', test, '-e', str(keys or args.keys)],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if p.returncode or 'error' in p.stdout.lower():
            sys.exit(f'memcached-module.py: memcslap -t {test} failed:\n{p.stdout[-2000:]}')


def run(build, config, args, memcached, user, keys=None, cgout=None):
    """CPU microseconds per operation of one memcached run, user + system
    and user; with @cgout, under callgrind, (instructions, operations)."""
    port = free_port()
    cmd = [memcached, '-l', '127.0.0.1', '-p', str(port), '-U', '0', '-u', user]
    if cgout:
        # memcached sets both open-file limits to its connection limit, and
        # valgrind refuses any hard limit but its own
        hard = subprocess.run(['valgrind', '-q', '/bin/sh', '-c', 'ulimit -Hn'],
                              stdout=subprocess.PIPE, text=True, check=True).stdout.strip()
        cmd = ['valgrind', '--tool=callgrind', f'--callgrind-out-file={cgout}',
               '--log-file=/dev/null'] + cmd + ['-c', hard]
    if config != 'plain':
        opts = ['-o', 'print_stats=1'] + (['-o', 'modules=none'] if config == 'none' else [])
        cmd = [os.path.join(build, 'preload', 'odebug')] + opts + cmd
    env = {k: v for k, v in os.environ.items()
           if k not in ('ODEBUG', 'ODEBUG_OPTIONS', 'LD_PRELOAD', 'ODEBUG_MODULE_PATH')}
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    try:
        if not wait_port(port, proc, 60, b'version\r\n'):
            sys.exit(f'memcached-module.py: memcached ({config}) did not start:\n'
                     + proc.communicate()[0][-2000:])
        maps = mapped(proc.pid)
        before = cpu_seconds(proc.pid)
        ops0 = stats(port)
        load(port, args, keys)
        after = cpu_seconds(proc.pid)
        ops1 = stats(port)
    finally:
        proc.send_signal(signal.SIGTERM)
        out = proc.communicate(timeout=60)[0]
    if config != 'plain':
        want = ['libodebug.so.1.0.0'] + (['libodebug-libevent.so'] if config == 'module' else [])
        warn = re.search(r'^warnings\s*: (\d+)$', out, re.M)
        if not warn or int(warn.group(1)) or not set(want) <= maps:
            sys.exit(f'memcached-module.py: {config} under {build}: a report, or not '
                     f'mapped ({sorted(maps)}):\n{out[-3000:]}')
        if config == 'none' and 'libodebug-libevent.so' in maps:
            sys.exit('memcached-module.py: modules=none loaded the module')
    ops = sum(int(ops1[k]) - int(ops0[k]) for k in ('cmd_get', 'cmd_set'))
    if cgout:
        with open(cgout) as f:
            total = re.search(r'^(?:summary|totals): (\d+)', f.read(), re.M)
        return int(total.group(1)), ops
    return ((after[0] - before[0]) * 1e6 / ops, (after[1] - before[1]) * 1e6 / ops)


def instr(configs, args, memcached, user):
    """Instructions per operation of each configuration (callgrind)."""
    cg = os.path.join('/tmp', f'memcached-module.{os.getpid()}.cg')
    k = max(1, args.keys)
    per = {}
    for label, b, c in configs:
        (i1, o1), (i2, o2) = (run(b, c, args, memcached, user, n, cg) for n in (k, 2 * k))
        per[label] = (i2 - i1) / (o2 - o1)
        log(f'{label}: {per[label]:,.0f} instructions per operation')
    os.unlink(cg)
    print(f'memcached {args.concurrency} clients x {k} and {2 * k} keys, set then get; '
          'instructions per operation (callgrind, user space, all threads)')
    for label, _, _ in configs:
        print(f'{label:>14}: {per[label]:,.0f}, / plain {per[label] / per["plain"]:.3f}')
    for name in ('before', 'after'):
        if f'{name} module' in per:
            d = per[f'{name} module'] - per[f'{name} none']
            print(f'{name:>7} module - none: {d:,.0f} instructions per operation')


def summary(values):
    return f'{statistics.median(values):.3f} [{min(values):.3f} - {max(values):.3f}]'


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--build', required=True)
    ap.add_argument('--before')
    ap.add_argument('--rounds', type=int, default=7)
    ap.add_argument('--keys', type=int, default=20000, help='per client thread')
    ap.add_argument('--concurrency', type=int, default=16)
    ap.add_argument('--instr', action='store_true',
                    help='instructions per operation instead (callgrind; --keys is K)')
    args = ap.parse_args()
    memcached = shutil.which('memcached') or '/usr/bin/memcached'
    if not os.access(memcached, os.X_OK) or not shutil.which('memcslap'):
        print('skip: memcached and memcslap needed (apt-get install memcached '
              'libmemcached-tools)')
        sys.exit(77)
    user = pwd.getpwuid(os.getuid()).pw_name
    builds = [('after', os.path.abspath(args.build))]
    if args.before:
        builds.insert(0, ('before', os.path.abspath(args.before)))
    for _, b in builds:
        if not os.access(os.path.join(b, 'preload', 'odebug'), os.X_OK):
            sys.exit(f'memcached-module.py: no {b}/preload/odebug: build first')
    configs = [('plain', None, 'plain')] + [
        (f'{name} {c}', b, c) for name, b in builds for c in ('none', 'module')]
    if args.instr:
        return instr(configs, args, memcached, user)
    cpu = {label: [] for label, _, _ in configs}
    loads = []
    for r in range(args.rounds):
        order = configs[r % len(configs):] + configs[:r % len(configs)]
        for label, b, c in order:
            cpu[label].append(run(b, c, args, memcached, user))
        loads.append(os.getloadavg()[0])
        log(f'round {r + 1}/{args.rounds}: ' + ', '.join(
            f'{label} {cpu[label][-1][0]:.2f}' for label, _, _ in configs) + ' us/op')
    print(f'memcached {args.concurrency} clients x {args.keys} keys, set then get; '
          f'{args.rounds} rounds, load {min(loads):.1f}-{max(loads):.1f}')
    for i, what in enumerate(('user + system', 'user')):
        med = statistics.median(x[i] for x in cpu['plain'])
        print(f'server CPU per operation ({what}), plain: {med:.2f} us')
        for label, _, _ in configs[1:]:
            ratio = [x[i] / p[i] for x, p in zip(cpu[label], cpu['plain'])]
            print(f'{label:>14}: {statistics.median(x[i] for x in cpu[label]):.2f} us, '
                  f'/ plain {summary(ratio)}')
        for name, _ in builds:
            ratio = [m[i] / n[i] for m, n in zip(cpu[f'{name} module'], cpu[f'{name} none'])]
            print(f'{name:>7} module / none: {summary(ratio)}')


if __name__ == '__main__':
    main()
