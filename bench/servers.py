#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""servers.py - real servers' throughput with libodebug, against plain and
the valgrind tools (BENCHMARKS.md, "Servers").

    bench/servers.py --build BUILDDIR [--rounds 5] [--svg doc/bench-servers.svg]
                     [--rebuilt memcached:asan=PATH --rebuilt memcached:tsan=PATH]
    bench/servers.py --build BUILDDIR --instr

Two servers, each started afresh for every measurement, as the current
user, on a private port of 127.0.0.1, with a private configuration in a
temporary folder (no system service is touched):

  nginx      one process (master_process off), serving a 4 KiB static file;
             `ab -n N -c 16` (a new connection per request, so every
             request also adds and removes an epoll registration).
  memcached  its default 4 worker threads (libevent); `memcslap -c 16`
             (16 client threads), `-t set` then `-t get`, N keys per
             thread.

Configurations: plain; `odebug` (the build tree's launcher: ODEBUG=1, every
built-in check at its default, i.e. on; the libevent module loads by
itself); valgrind memcheck, helgrind and drd (fewer requests: their rate is
requests per second all the same); and asan and tsan, the server rebuilt
with AddressSanitizer or ThreadSanitizer, where --rebuilt gives its binary
(the same version built from source; a configuration a server has no
binary for is left out of its row).  Every round runs every configuration
once (plain and odebug adjacent, their order swapped each round); the
odebug/plain ratio is taken within each round, then the median and the
range over the rounds are printed, with the load average.  Besides the
load generator's rate, each run gives the server's own CPU time (all its
threads, /proc/PID/stat) per request.

--instr counts instructions instead (callgrind, plain and under odebug,
a tenth of the requests and twice that, so that start and exit cancel
out): per request, per object, libodebug's functions by self cost and
the calls into libodebug.  User space only: the kernel's share of a
request is not in these counts.

A libodebug run counts only if the server printed no report (its
print_stats table says warnings 0) and libodebug.so (and, for memcached,
libodebug-libevent.so) was mapped in the running server.  A load generator
that saw a failed request fails the run.  Exit status 77 when a server or a
load generator is missing.
"""
import argparse
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

CONFIGS = ['plain', 'odebug', 'memcheck', 'helgrind', 'drd', 'asan', 'tsan']
REBUILT = ('asan', 'tsan')     # a binary of the server's own, from --rebuilt
VALGRIND = {'memcheck': [], 'helgrind': [], 'drd': []}
COLOURS = {'plain': '#555555', 'odebug': '#1f77b4', 'memcheck': '#ff7f0e',
           'helgrind': '#2ca02c', 'drd': '#9467bd', 'asan': '#d62728', 'tsan': '#8c564b'}
LABELS = {'plain': 'plain', 'odebug': 'libodebug (odebug)', 'memcheck': 'memcheck',
          'helgrind': 'Helgrind', 'drd': 'DRD', 'asan': 'ASan rebuild',
          'tsan': 'TSan rebuild'}


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def loadavg():
    with open('/proc/loadavg') as f:
        return float(f.read().split()[0])


def free_port():
    s = socket.socket()
    s.bind(('127.0.0.1', 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_port(port, proc, timeout, probe):
    """Until @probe answers on @port (the server started), or @proc ends."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            with socket.create_connection(('127.0.0.1', port), timeout=2) as s:
                s.sendall(probe)
                if s.recv(64):
                    return True
        except OSError:
            pass
        time.sleep(0.1)
    return False


def mapped(pid):
    """The libodebug objects mapped in process @pid (file names)."""
    try:
        with open(f'/proc/{pid}/maps') as f:
            return {os.path.basename(line.split()[-1]) for line in f
                    if 'odebug' in line and '/' in line}
    except OSError:
        return set()


def cpu_seconds(pid):
    """User + system and user seconds process @pid used so far, all its threads."""
    with open(f'/proc/{pid}/stat') as f:
        v = f.read().rsplit(')', 1)[1].split()
    tick = os.sysconf('SC_CLK_TCK')
    return (int(v[11]) + int(v[12])) / tick, int(v[11]) / tick


class LoadFailed(Exception):
    pass


class Server:
    """One server program: its command line, readiness probe and load."""

    def __init__(self, drv, name):
        self.drv = drv
        self.name = name
        self.dir = os.path.join(drv.tmp, name)
        os.makedirs(self.dir, exist_ok=True)

    def run(self, config, n):
        """run_once(), again (twice at most) when a valgrind tool's server was
        too slow for the load generator's timeouts (libmemcached's 5 s)."""
        for attempt in range(3):
            try:
                return self.run_once(config, n)
            except LoadFailed as e:
                if config not in VALGRIND or attempt == 2:
                    sys.exit(f'servers.py: {self.name} ({config}): {e}')
                self.drv.retried.append(f'{self.name} {config}')
                log(f'{self.name} ({config}): {str(e).splitlines()[0]}; again')

    def run_once(self, config, n):
        """Start the server under @config, load it with @n, stop it.
        Returns {metric: requests per second}, or exits on a failure."""
        port = free_port()
        cmd = self.command(port, self.drv.rebuilt.get((self.name, config)))
        env = {k: v for k, v in os.environ.items()
               if k not in ('ODEBUG', 'ODEBUG_OPTIONS', 'LD_PRELOAD', 'ODEBUG_MODULE_PATH')}
        vglog = os.path.join(self.dir, f'vg-{config}.log')
        self.cgout = os.path.join(self.dir, f'callgrind-{config}.out')
        if config in ('cg-plain', 'cg-odebug'):
            # instruction counts: callgrind, launched by odebug for cg-odebug
            cmd = ['valgrind', '--tool=callgrind', f'--log-file={vglog}',
                   f'--callgrind-out-file={self.cgout}'] + cmd
        if config in ('odebug', 'cg-odebug'):
            cmd = [self.drv.launcher, '-o', 'print_stats=1'] + cmd
        elif config in VALGRIND:
            cmd = ['valgrind', f'--tool={config}', f'--log-file={vglog}'] + cmd
        errf = os.path.join(self.dir, f'stderr-{config}')
        for f in self.logs:
            if os.path.exists(os.path.join(self.dir, f)):
                os.unlink(os.path.join(self.dir, f))
        with open(errf, 'w') as err:
            proc = subprocess.Popen(cmd, env=env, stdout=err, stderr=err, cwd=self.dir)
        try:
            if not wait_port(port, proc, 120, self.probe):
                sys.exit(f'servers.py: {self.name} ({config}) did not start:\n'
                         + open(errf).read()[-2000:])
            maps = mapped(proc.pid)
            cpu0 = cpu_seconds(proc.pid)
            rates = self.load(port, n)
            cpu1 = cpu_seconds(proc.pid)
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(60)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        out = ''.join(open(os.path.join(self.dir, f)).read()
                      for f in [errf] + self.logs if os.path.exists(os.path.join(self.dir, f)))
        if config in ('odebug', 'cg-odebug'):
            self.drv.verify(self.name, out, maps, self.modules)
        elif config in VALGRIND:
            m = re.findall(r'ERROR SUMMARY: (\d+) errors', open(vglog).read())
            self.drv.vg_errors.setdefault((self.name, config), []).append(
                int(m[-1]) if m else None)
        # the server's CPU time (all its threads, user + system) per request
        rates['ops'] = ops = rates['ops']
        rates[self.name + '-cpu'] = (cpu1[0] - cpu0[0]) * 1e6 / ops
        rates[self.name + '-user'] = (cpu1[1] - cpu0[1]) * 1e6 / ops
        return rates


class Nginx(Server):
    probe = b'GET /f HTTP/1.0\r\n\r\n'
    modules = []
    logs = ['error.log']     # nginx points its stderr there once started

    def __init__(self, drv):
        super().__init__(drv, 'nginx')
        os.makedirs(os.path.join(self.dir, 'www'), exist_ok=True)
        os.makedirs(os.path.join(self.dir, 'tmp'), exist_ok=True)
        with open(os.path.join(self.dir, 'www', 'f'), 'wb') as f:
            f.write(os.urandom(4096))

    def command(self, port, binary=None):
        d = self.dir
        conf = os.path.join(d, 'nginx.conf')
        with open(conf, 'w') as f:
            f.write(f'''daemon off; master_process off; worker_processes 1;
error_log {d}/error.log; pid {d}/nginx.pid;
events {{ worker_connections 256; }}
http {{ access_log off; client_body_temp_path {d}/tmp; proxy_temp_path {d}/tmp;
	fastcgi_temp_path {d}/tmp; uwsgi_temp_path {d}/tmp; scgi_temp_path {d}/tmp;
	server {{ listen 127.0.0.1:{port}; root {d}/www; }} }}
''')
        return [binary or self.drv.nginx, '-p', d, '-c', conf]

    def load(self, port, n):
        p = subprocess.run(['ab', '-q', '-n', str(n), '-c', str(self.drv.args.concurrency),
                            f'http://127.0.0.1:{port}/f'],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        done = re.search(r'^Complete requests:\s+(\d+)', p.stdout, re.M)
        failed = re.search(r'^Failed requests:\s+(\d+)', p.stdout, re.M)
        rps = re.search(r'^Requests per second:\s+([\d.]+)', p.stdout, re.M)
        if (p.returncode or not done or int(done.group(1)) != n or not failed
                or int(failed.group(1)) or 'Non-2xx' in p.stdout or not rps):
            raise LoadFailed(f'ab failed:\n{p.stdout[-2000:]}')
        return {'nginx': float(rps.group(1)), 'ops': n}


class Memcached(Server):
    probe = b'version\r\n'
    modules = ['libodebug-libevent.so']
    logs = []

    def __init__(self, drv):
        super().__init__(drv, 'memcached')
        self.maxconns = 1024
        if shutil.which('valgrind'):
            self.maxconns = int(subprocess.run(
                ['valgrind', '-q', '/bin/sh', '-c', 'ulimit -Hn'],
                stdout=subprocess.PIPE, text=True, check=True).stdout)

    def command(self, port, binary=None):
        # -U 0: no UDP port; -u: memcached refuses to run as root without
        # it; -c: memcached sets both open-file limits to its connection
        # limit, and valgrind refuses any hard limit but its own
        return [binary or self.drv.memcached, '-l', '127.0.0.1', '-p', str(port), '-U', '0',
                '-u', self.drv.user, '-c', str(self.maxconns)]

    def load(self, port, n):
        rates = {}
        for test in ('set', 'get'):
            p = subprocess.run(['memcslap', '-s', f'127.0.0.1:{port}',
                                '-c', str(self.drv.args.concurrency), '-t', test,
                                '-e', str(n)],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            m = re.search(rf'Time to {test}\s+(\d+) keys by\s+\d+ threads:\s+([\d.]+) seconds',
                          p.stdout)
            want = n * self.drv.args.concurrency
            if p.returncode or 'error' in p.stdout.lower() or not m or int(m.group(1)) != want:
                raise LoadFailed(f'memcslap -t {test} failed:\n{p.stdout[-2000:]}')
            rates[f'memcached-{test}'] = int(m.group(1)) / float(m.group(2))
        # every get and set the server served (memcslap -t get sets its
        # keys first), from the server's own counters
        with socket.create_connection(('127.0.0.1', port), timeout=10) as so:
            so.sendall(b'stats\r\n')
            text = b''
            while not text.endswith(b'END\r\n'):
                text += so.recv(65536)
        st = dict(re.findall(r'STAT (\w+) (\d+)', text.decode()))
        rates['ops'] = int(st['cmd_get']) + int(st['cmd_set'])
        # one figure for both: the operations over their time
        rates['memcached'] = 2 / (1 / rates['memcached-set'] + 1 / rates['memcached-get'])
        return rates


def callgrind_costs(path):
    """Self instructions (Ir) per (object, function) of a callgrind file,
    and calls into each ('calls', object, function)."""
    space = {'ob': 'ob', 'cob': 'ob', 'fn': 'fn', 'cfn': 'fn',
             'fl': 'fl', 'fi': 'fl', 'fe': 'fl', 'cfi': 'fl', 'cfl': 'fl'}
    names = {}      # (name space, compressed id) -> name
    costs = {}
    ob = fn = cob = cfn = None
    skip = False

    def name(k, v):
        m = re.match(r'\((\d+)\)(?: (.*))?$', v)
        if not m:
            return v
        key = (space[k], m.group(1))
        if m.group(2) is not None:
            names[key] = m.group(2)
        return names.get(key, v)
    with open(path) as f:
        for line in f:
            line = line.rstrip('\n')
            if not line:
                continue
            c = line[0]
            if c.isdigit() or c in '+-*':
                if skip:
                    skip = False
                    continue
                parts = line.split()
                if len(parts) > 1 and fn is not None:
                    key = (ob, fn)
                    costs[key] = costs.get(key, 0) + int(parts[1])
                continue
            k, _, v = line.partition('=')
            if k == 'ob':
                ob = cob = os.path.basename(name(k, v))
            elif k == 'fn':
                fn = name(k, v)
            elif k == 'cob':
                cob = os.path.basename(name(k, v))
            elif k == 'cfn':
                cfn = name(k, v)
            elif k in space:
                name(k, v)      # defines a compressed name
            elif k == 'calls':
                skip = True     # the next cost line is the call's, inclusive
                key = ('calls', cob, cfn)
                costs[key] = costs.get(key, 0) + int(v.split()[0])
                cob = ob        # a call's object is given only when not the caller's
    return costs


class Driver:
    def __init__(self, args):
        self.args = args
        build = os.path.abspath(args.build)
        self.launcher = os.path.join(build, 'preload', 'odebug')
        if not os.access(self.launcher, os.X_OK):
            sys.exit(f'servers.py: {self.launcher} missing: build first')
        self.nginx = shutil.which('nginx') or '/usr/sbin/nginx'
        self.memcached = shutil.which('memcached') or '/usr/bin/memcached'
        import pwd
        self.user = pwd.getpwuid(os.getuid()).pw_name
        self.tmp = tempfile.mkdtemp(prefix='odebug-servers.')
        self.results = {}       # (metric, config) -> [per-round requests/s]
        self.ratios = {}        # metric -> [per-round odebug / plain]
        self.vg_errors = {}
        self.retried = []       # valgrind runs the load generator gave up on
        self.objects = {}       # server -> objs_allocated of the odebug runs
        self.load = []
        self.rebuilt = {}       # (server, asan|tsan) -> its binary
        for r in args.rebuilt:
            m = re.match(r'^(nginx|memcached):(asan|tsan)=(.+)$', r)
            if not m or not os.access(m.group(3), os.X_OK):
                sys.exit(f'servers.py: --rebuilt {r}: SERVER:asan|tsan=EXECUTABLE')
            self.rebuilt[(m.group(1), m.group(2))] = os.path.abspath(m.group(3))

    def verify(self, server, out, maps, modules):
        """A libodebug run: silent, libodebug and its modules mapped."""
        stats = dict(re.findall(r'^(\w+)\s*: (\d+)$', out, re.M))
        missing = [m for m in ['libodebug.so.1.0.0'] + modules if m not in maps]
        if 'warnings' not in stats or int(stats['warnings']) or 'ODEBUG:' in out or missing:
            sys.exit(f'servers.py: {server} under odebug: warnings '
                     f'{stats.get("warnings")}, not mapped {missing}:\n{out[-3000:]}')
        self.objects.setdefault(server, []).append(int(stats['objs_allocated']))

    def main(self):
        a = self.args
        servers = []
        missing = []
        if 'nginx' in a.only:
            if os.access(self.nginx, os.X_OK) and shutil.which('ab'):
                servers.append((Nginx(self), a.requests,
                                dict.fromkeys(VALGRIND, a.vg_requests)))
            else:
                missing.append('nginx and ab (apt-get install nginx apache2-utils)')
        if 'memcached' in a.only:
            if os.access(self.memcached, os.X_OK) and shutil.which('memcslap'):
                servers.append((Memcached(self), a.keys,
                                {'memcheck': a.vg_keys, 'helgrind': a.race_keys,
                                 'drd': a.race_keys}))
            else:
                missing.append('memcached and memcslap (apt-get install memcached libmemcached-tools)')
        if missing:
            log('servers.py: missing ' + '; '.join(missing))
            if not servers:
                return 77
        if any(c in VALGRIND for c in a.configs) and not shutil.which('valgrind'):
            sys.exit('servers.py: valgrind missing')
        if a.instr:
            return self.instr(servers)
        self.load.append(loadavg())
        t0 = time.monotonic()
        for r in range(a.rounds):
            for srv, n, vn in servers:
                order = [c for c in CONFIGS if c in a.configs and
                         (c not in REBUILT or (srv.name, c) in self.rebuilt)]
                if r % 2 and 'plain' in order and 'odebug' in order:
                    i, j = order.index('plain'), order.index('odebug')
                    order[i], order[j] = order[j], order[i]
                got = {}
                for c in order:
                    got[c] = srv.run(c, vn[c] if c in VALGRIND else n)
                    for metric, v in got[c].items():
                        if metric == 'ops':
                            continue
                        self.results.setdefault((metric, c), []).append(v)
                if 'plain' in got and 'odebug' in got:
                    for metric in got['plain']:
                        self.ratios.setdefault(metric, []).append(
                            got['odebug'][metric] / got['plain'][metric])
                log(f'round {r + 1} {srv.name}: ' + ', '.join(
                    f'{c} {got[c][srv.name]:.0f}/s {got[c][srv.name + "-cpu"]:.1f} µs'
                    for c in order) + f' (load {loadavg():.2f})')
            self.load.append(loadavg())
        self.report(time.monotonic() - t0)
        if a.svg:
            self.svg(a.svg)
        return 0

    def instr(self, servers):
        """Instructions per request, plain and with libodebug (callgrind):
        two runs of each, N and 2N requests, so start and exit cancel out."""
        a = self.args
        for srv, n, _ in servers:
            n = max(1, n // 10)
            per = {}
            for c in ('cg-plain', 'cg-odebug'):
                runs = []
                for k in (n, 2 * n):
                    got = srv.run(c, k)
                    runs.append((got['ops'], callgrind_costs(srv.cgout)))
                    log(f'{srv.name} {c} {k}: {got["ops"]} requests, '
                        f'{sum(runs[-1][1].values()):,} instructions')
                (o1, c1), (o2, c2) = runs
                per[c] = {key: (c2.get(key, 0) - c1.get(key, 0)) / (o2 - o1)
                          for key in set(c1) | set(c2)}
            calls = {c: {k[1:]: v for k, v in per[c].items() if k[0] == 'calls'}
                     for c in per}
            for c in per:
                per[c] = {k: v for k, v in per[c].items() if k[0] != 'calls'}
            plain, odb = (sum(per[c].values()) for c in ('cg-plain', 'cg-odebug'))
            print(f'# {srv.name}: instructions per request (callgrind, the difference '
                  f'of {n} and {2 * n} requests per test): plain {plain:,.0f}, '
                  f'libodebug {odb:,.0f} ({odb / plain:.3f}x)')
            objs = {}
            for c in per:
                for (ob, fn), v in per[c].items():
                    objs.setdefault(ob, {}).setdefault(c, 0)
                    objs[ob][c] += v
            print('| object | plain | libodebug | added |')
            print('|---|---|---|---|')
            rows = sorted(objs.items(), key=lambda kv: -abs(kv[1].get('cg-odebug', 0)
                                                           - kv[1].get('cg-plain', 0)))
            for ob, v in rows[:8]:
                p, o = v.get('cg-plain', 0), v.get('cg-odebug', 0)
                print(f'| {ob} | {p:,.1f} | {o:,.1f} | {o - p:+,.1f} |')
            fns = sorted(((v, ob, fn) for (ob, fn), v in per['cg-odebug'].items()
                          if 'odebug' in (ob or '')), reverse=True)
            print('| libodebug function (self) | instructions per request |')
            print('|---|---|')
            for v, ob, fn in fns[:a.top]:
                print(f'| {fn} ({ob}) | {v:,.1f} |')
            top = sorted(((v, ob, fn) for (ob, fn), v in calls['cg-odebug'].items()
                          if 'odebug' in (ob or '') and v >= 0.05), reverse=True)
            print('| calls into libodebug | per request |')
            print('|---|---|')
            for v, ob, fn in top[:a.top]:
                print(f'| {fn} ({ob}) | {v:,.2f} |')
        return 0

    @staticmethod
    def spread(v, fmt=',.0f'):
        return f'{statistics.median(v):{fmt}} [{min(v):{fmt}} – {max(v):{fmt}}]'

    METRICS = [('nginx', 'nginx, requests/s'),
               ('memcached', 'memcached, set+get operations/s'),
               ('memcached-set', 'memcached set, operations/s'),
               ('memcached-get', 'memcached get, operations/s'),
               ('nginx-cpu', 'nginx, server CPU µs per request'),
               ('memcached-cpu', 'memcached, server CPU µs per operation'),
               ('nginx-user', 'nginx, of which user space'),
               ('memcached-user', 'memcached, of which user space')]

    def report(self, seconds):
        a = self.args
        print(f'# {a.rounds} rounds, {seconds / 60:.1f} min; load average (1 min) '
              f'{min(self.load):.2f} – {max(self.load):.2f}, at each round\'s end: '
              + ' '.join(f'{x:.2f}' for x in self.load))
        print(f'# nginx: ab -n {a.requests} -c {a.concurrency} (valgrind -n {a.vg_requests}); '
              f'memcached: memcslap -c {a.concurrency} -e {a.keys} (memcheck -e {a.vg_keys}, '
              f'helgrind and drd -e {a.race_keys}); '
              'median [min – max]; the ratio is taken within each round')
        shown = [c for c in a.configs if any(k[1] == c for k in self.results)]
        print('| workload | ' + ' | '.join(LABELS[c] for c in shown)
              + ' | libodebug / plain |')
        print('|---|' + '---|' * (len(shown) + 1))
        for metric, label in self.METRICS:
            if (metric, a.configs[0]) not in self.results:
                continue
            fmt = '.1f' if metric.endswith(('-cpu', '-user')) else ',.0f'
            row = [self.spread(self.results[(metric, c)], fmt)
                   if (metric, c) in self.results else '–' for c in shown]
            r = self.ratios.get(metric)
            ratio = self.spread(r, '.3f') if r else ''
            print(f'| {label} | ' + ' | '.join(row) + f' | {ratio} |')
        if self.retried:
            print(f'# run again after a load generator\'s failure: {", ".join(self.retried)}')
        for srv, objs in self.objects.items():
            print(f'# {srv} under odebug: no report, {min(objs)} – {max(objs)} objects tracked')
        for (srv, tool), errs in sorted(self.vg_errors.items()):
            print(f'# {srv} under {tool}: {errs} errors reported per run')

    def svg(self, path):
        """Requests per second, log scale, a group of bars per workload."""
        metrics = [m for m in ['nginx', 'memcached-set', 'memcached-get']
                   if (m, 'plain') in self.results]
        configs = [c for c in CONFIGS if c in self.args.configs and
                   any((m, c) in self.results for m in metrics)]
        med = {k: statistics.median(v) for k, v in self.results.items()}
        top = max(med.values())
        lo_exp, hi_exp = 1, 1
        while 10 ** hi_exp < top:
            hi_exp += 1
        W, H, left, bottom, top_m = 760, 380, 70, 60, 40
        pw, ph = W - left - 20, H - bottom - top_m

        def y(v):
            import math
            v = max(v, 10 ** lo_exp)
            return top_m + ph * (1 - (math.log10(v) - lo_exp) / (hi_exp - lo_exp))
        out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
               f'font-family="sans-serif" font-size="12">',
               f'<rect width="{W}" height="{H}" fill="white"/>',
               f'<text x="{W / 2}" y="20" text-anchor="middle" font-size="14">'
               f'Requests per second (median of {self.args.rounds} rounds, log scale)</text>']
        for e in range(lo_exp, hi_exp + 1):
            yy = y(10 ** e)
            out.append(f'<line x1="{left}" x2="{W - 20}" y1="{yy:.1f}" y2="{yy:.1f}" '
                       f'stroke="#ddd"/>')
            out.append(f'<text x="{left - 6}" y="{yy + 4:.1f}" text-anchor="end">'
                       f'{10 ** e:,}</text>')
        gw = pw / len(metrics)
        bw = gw * 0.8 / len(configs)
        names = {'nginx': 'nginx, 4 KiB file (ab -c 16)',
                 'memcached-set': 'memcached set (memcslap -c 16)',
                 'memcached-get': 'memcached get (memcslap -c 16)'}
        for i, m in enumerate(metrics):
            x0 = left + i * gw + gw * 0.1
            for j, c in enumerate(configs):
                v = med.get((m, c))
                if v is None:
                    continue
                x = x0 + j * bw
                out.append(f'<rect x="{x:.1f}" y="{y(v):.1f}" width="{bw - 2:.1f}" '
                           f'height="{top_m + ph - y(v):.1f}" fill="{COLOURS[c]}">'
                           f'<title>{LABELS[c]}: {v:,.0f}</title></rect>')
                out.append(f'<text x="{x + bw / 2 - 1:.1f}" y="{y(v) - 4:.1f}" '
                           f'text-anchor="middle" font-size="10">{v:,.0f}</text>')
            out.append(f'<text x="{left + i * gw + gw / 2:.1f}" y="{top_m + ph + 18}" '
                       f'text-anchor="middle">{names[m]}</text>')
        lx = left
        for c in configs:
            out.append(f'<rect x="{lx}" y="{H - 22}" width="12" height="12" '
                       f'fill="{COLOURS[c]}"/>')
            out.append(f'<text x="{lx + 16}" y="{H - 12}">{LABELS[c]}</text>')
            lx += 30 + 7 * len(LABELS[c])
        out.append(f'<line x1="{left}" x2="{left}" y1="{top_m}" y2="{top_m + ph}" '
                   f'stroke="black"/>')
        out.append('</svg>')
        with open(path, 'w') as f:
            f.write('\n'.join(out) + '\n')
        log(f'wrote {path}')


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--build', default='build')
    p.add_argument('--rounds', type=int, default=5)
    p.add_argument('--concurrency', type=int, default=16)
    p.add_argument('--requests', type=int, default=20000, help='ab -n, plain and odebug')
    p.add_argument('--vg-requests', type=int, default=2000, help='ab -n under valgrind')
    p.add_argument('--keys', type=int, default=10000, help='memcslap -e, plain and odebug')
    p.add_argument('--vg-keys', type=int, default=100, help='memcslap -e under memcheck')
    p.add_argument('--race-keys', type=int, default=20, help='memcslap -e under helgrind, drd')
    p.add_argument('--only', default='nginx,memcached')
    p.add_argument('--configs', default=','.join(CONFIGS))
    p.add_argument('--rebuilt', action='append', default=[], metavar='SERVER:CONFIG=PATH',
                   help='the server rebuilt with asan or tsan, e.g. memcached:asan=./memcached')
    p.add_argument('--svg', help='write the plot here')
    p.add_argument('--instr', action='store_true',
                   help='instructions per request instead (callgrind, plain and odebug)')
    p.add_argument('--top', type=int, default=15, help='--instr: libodebug functions shown')
    p.add_argument('--quick', action='store_true',
                   help='one short round, plain and odebug only (a smoke test)')
    a = p.parse_args()
    a.only = a.only.split(',')
    a.configs = [c for c in CONFIGS if c in a.configs.split(',')]
    if a.quick:
        a.rounds, a.requests, a.keys, a.configs = 1, 2000, 500, ['plain', 'odebug']
    d = Driver(a)
    try:
        return d.main()
    finally:
        shutil.rmtree(d.tmp, ignore_errors=True)


if __name__ == '__main__':
    sys.exit(main())
