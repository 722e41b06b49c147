#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""run-bench.py - run libodebug's benchmarks and print the figures
against the goals.

    bench/run-bench.py --build BUILDDIR [--runs 5] [--plot] [--quick]

Every group runs its variants alternated (plain, with libodebug, ... then
again), --runs rounds; a ratio is computed within each round, then the
median, min and max over the rounds are shown.  Instruction counts come from
callgrind (--toggle-collect=churn_loop), times from the programs' own
clocks (the timer wheel: the process's wall time).  --plot also sweeps the
object-operation cost over the number of live objects and over objects per
page and draws doc/bench-objops.png with bench/plot.gp.  Results go to
BUILDDIR/bench-results/ (results.json, results.md, *.dat).
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_ROOT = os.path.dirname(HERE)


def log(msg):
    print(msg, file=sys.stderr, flush=True)


class Bench:
    def __init__(self, args):
        self.args = args
        build = os.path.abspath(args.build)
        self.lib = os.path.join(build, 'preload', 'libodebug.so')
        self.bin = os.path.join(build, 'bench')
        for f in [self.lib, self.exe('bench-churn'), self.exe('bench-objops')]:
            if not os.path.exists(f):
                sys.exit(f'run-bench.py: {f} missing: build first (meson compile -C {build})')
        self.out = args.out or os.path.join(build, 'bench-results')
        os.makedirs(self.out, exist_ok=True)
        self.valgrind = shutil.which('valgrind')
        self.results = {}   # name -> list of per-round values
        self.notes = {}
        self.timed_runs = self.noisy_runs = 0
        self.base = {}      # a previous run's results, shown alongside (--compare)
        if args.compare:
            with open(os.path.join(args.compare, 'results.json')) as f:
                self.base = json.load(f)['results']
        self.foreign = []   # CPUs' worth of other processes, per timed run

    def exe(self, name):
        return os.path.join(self.bin, name)

    def env(self, preload=False, odebug=None, options=None):
        e = {k: v for k, v in os.environ.items()
             if k not in ('ODEBUG', 'ODEBUG_OPTIONS', 'LD_PRELOAD')}
        if preload:
            e['LD_PRELOAD'] = self.lib
        if odebug is not None:
            e['ODEBUG'] = odebug
        if options:
            e['ODEBUG_OPTIONS'] = options
        return e

    def run(self, cmd, env, check=True):
        p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
        if check and p.returncode != 0:
            sys.exit(f'run-bench.py: {" ".join(cmd)} failed ({p.returncode}):\n{p.stderr}')
        return p

    # The machine may be shared: a timed run is repeated (up to --retries
    # times) when other processes used more than 10 % of a CPU meanwhile,
    # and each run starts once the machine has been idle for a moment.

    @staticmethod
    def cpu_seconds():
        """CPU seconds used by everyone, and by our finished children."""
        with open('/proc/stat') as f:
            v = [int(x) for x in f.readline().split()[1:]]
        busy = sum(v) - v[3] - (v[4] if len(v) > 4 else 0)   # minus idle, iowait
        t = os.times()
        return busy / os.sysconf('SC_CLK_TCK'), t.children_user + t.children_system

    def wait_idle(self):
        deadline = time.monotonic() + self.args.idle_wait
        while True:
            b0, _ = self.cpu_seconds()
            time.sleep(0.5)
            b1, _ = self.cpu_seconds()
            if b1 - b0 <= 0.05 or time.monotonic() > deadline:
                return

    def measure(self, cmd, env):
        """Run @cmd on a quiet machine; returns (process, wall seconds)."""
        for attempt in range(self.args.retries + 1):
            if self.args.idle_wait > 0:
                self.wait_idle()
            b0, c0 = self.cpu_seconds()
            t0 = time.perf_counter()
            p = self.run(cmd, env)
            wall = time.perf_counter() - t0
            b1, c1 = self.cpu_seconds()
            foreign = max(0.0, (b1 - b0) - (c1 - c0))
            quiet = foreign <= max(0.03, 0.1 * wall)
            if quiet:
                break
        self.timed_runs += 1
        if not quiet:
            self.noisy_runs += 1
        self.foreign.append(round(foreign / wall, 3))
        self.last_cpu = c1 - c0     # the child's user + system seconds
        return p, wall

    @staticmethod
    def fields(line):
        return {k: v for k, v in re.findall(r'(\w+)=(\S+)', line)}

    def loadavg(self, where):
        with open('/proc/loadavg') as f:
            self.notes.setdefault('loadavg', []).append((where, f.read().split()[0]))

    def add(self, name, value):
        self.results.setdefault(name, []).append(value)

    # ---- 1. the release path ----------------------------------------

    CHURN_VARIANTS = [  # name, preload, ODEBUG, pairs? (or 'static': one tracked in .bss)
        ('plain', False, None, False),
        ('loaded', True, None, False),
        ('on', True, '1', False),
        ('on-1', True, '1', 'static'),
        ('plain-1m', False, None, True),
        ('on-1m', True, '1', True),
    ]

    def churn_cmd(self, threads, frees, pairs):
        cmd = [self.exe('bench-churn'), '--threads', str(threads),
               '--iters', str(frees // threads)]
        if pairs == 'static':
            cmd += ['--static', '1']
        elif pairs:
            cmd += ['--pairs', str(self.pairs)]
        return cmd

    def callgrind(self, cmd, env, tag):
        outfile = os.path.join(self.out, f'callgrind.{tag}')
        p = self.run([self.valgrind, '--tool=callgrind', '--toggle-collect=churn_loop',
                      f'--callgrind-out-file={outfile}'] + cmd, env)
        m = re.search(r'Collected : (\d+)', p.stderr)
        if not m:
            sys.exit(f'run-bench.py: no callgrind total for {tag}:\n{p.stderr}')
        own = 0
        ann = subprocess.run(['callgrind_annotate', '--threshold=100', outfile],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        for line in ann.stdout.splitlines():
            if 'libodebug.so' in line:
                mm = re.match(r'\s*([\d,]+)', line)
                if mm:
                    own += int(mm.group(1).replace(',', ''))
        return int(m.group(1)), own

    def bench_churn(self):
        a = self.args
        self.pairs = 100000 if a.quick else 1000000
        cg_frees = {False: 20000 if a.quick else 200000, True: 5000 if a.quick else 50000}
        wall_frees = {False: 1000000 if a.quick else 10000000,
                      True: 50000 if a.quick else 500000}
        for r in range(a.runs):
            for threads in (1, 2):
                ir, wall = {}, {}
                for name, preload, odebug, pairs in self.CHURN_VARIANTS:
                    env = self.env(preload, odebug)
                    if self.valgrind:
                        frees = cg_frees[pairs is True]
                        log(f'  churn callgrind {name} T={threads} round {r + 1}')
                        ir[name] = self.callgrind(self.churn_cmd(threads, frees, pairs), env,
                                                  f'{name}-t{threads}')
                        self.add(f'churn.t{threads}.{name}.ir_per_iter', ir[name][0] / frees)
                        self.add(f'churn.t{threads}.{name}.own_ir_per_free', ir[name][1] / frees)
                    frees = wall_frees[pairs is True]
                    log(f'  churn wall {name} T={threads} round {r + 1}')
                    f = self.fields(self.measure(self.churn_cmd(threads, frees, pairs),
                                                 env)[0].stdout)
                    wall[name] = float(f['ns_per_iter'])
                    if name == 'on' and f.get('live_at_start', '0') != '0':
                        sys.exit('run-bench.py: bench-churn with ODEBUG=1 tracked '
                                 f"{f['live_at_start']} object(s); the row says nothing tracked")
                    if name == 'on-1' and f.get('live_at_start') != '1':
                        sys.exit('run-bench.py: bench-churn --static 1 tracked '
                                 f"{f.get('live_at_start')} object(s), not one")
                    self.add(f'churn.t{threads}.{name}.ns_per_iter', wall[name])
                    if pairs is True:
                        self.add(f'churn.t{threads}.{name}.shared', float(f['shared']))
                if ir:
                    cf, pf = cg_frees[False], cg_frees[True]
                    self.add(f'churn.t{threads}.loaded.added_ir',
                             (ir['loaded'][0] - ir['plain'][0]) / cf)
                    self.add(f'churn.t{threads}.on.added_ir', (ir['on'][0] - ir['plain'][0]) / cf)
                    self.add(f'churn.t{threads}.on-1.added_ir',
                             (ir['on-1'][0] - ir['plain'][0]) / cf)
                    self.add(f'churn.t{threads}.on-1m.added_ir',
                             (ir['on-1m'][0] - ir['plain-1m'][0]) / pf)
                    self.add(f'churn.t{threads}.on-1m.ir_ratio', ir['on-1m'][0] / ir['plain-1m'][0])
                for name in ('loaded', 'on'):
                    self.add(f'churn.t{threads}.{name}.added_ns', wall[name] - wall['plain'])
                self.add(f'churn.t{threads}.on-1m.added_ns', wall['on-1m'] - wall['plain-1m'])
                self.add(f'churn.t{threads}.on-1m.ns_ratio', wall['on-1m'] / wall['plain-1m'])

    # ---- 2, 3. object operations and scaling ----------------------------

    def objops(self, live, per_page, threads, ops, options=None):
        cmd = [self.exe('bench-objops'), 'cycle', '--live', str(live), '--per-page',
               str(per_page), '--threads', str(threads), '--ops', str(ops)]
        p = self.measure(cmd, self.env(odebug='1', options=options))[0]
        f = self.fields(p.stdout)
        if f.get('enabled') != '1':
            sys.exit('run-bench.py: libodebug not enabled in bench-objops:\n' + p.stderr)
        return float(f['ns_per_op'])

    def bench_objops(self):
        a = self.args
        ops = 400000 if a.quick else 4000000
        big = 100000 if a.quick else 1000000
        configs = [  # key, live, per_page, threads
            ('1k.sparse.t1', 1000, 1, 1), ('1k.dense.t1', 1000, 64, 1),
            ('1m.sparse.t1', big, 1, 1), ('1m.dense.t1', big, 64, 1),
            ('1k.sparse.t2', 1000, 1, 2), ('1k.sparse.t4', 1000, 1, 4),
            ('1m.sparse.t2', big, 1, 2), ('1m.sparse.t4', big, 1, 4),
        ]
        for r in range(a.runs):
            ns = {}
            for key, live, per_page, threads in configs:
                log(f'  objops {key} round {r + 1}')
                ns[key] = self.objops(live, per_page, threads, ops)
                self.add(f'objops.{key}.ns', ns[key])
            for n in ('1k', '1m'):
                self.add(f'objops.{n}.dense_ratio', ns[f'{n}.dense.t1'] / ns[f'{n}.sparse.t1'])
                self.add(f'scaling.{n}.t2', ns[f'{n}.sparse.t1'] / ns[f'{n}.sparse.t2'])
                self.add(f'scaling.{n}.t4', ns[f'{n}.sparse.t1'] / ns[f'{n}.sparse.t4'])
                self.add(f'scaling.{n}.t4_vs_t2', ns[f'{n}.sparse.t2'] / ns[f'{n}.sparse.t4'])

    # ---- the object-operation goals, builds alternated -------------------

    def table_builds(self):
        """This build and each --baseline DIR-or-LIB[=LABEL], as (label,
        library to preload): the benchmarks are this build's, only the
        library differs (a build directory's preload/libodebug.so, or a
        library named directly, e.g. BUILD/bench/kernel/libodebug.so)."""
        builds = [(self.args.label or 'this', None)]
        for spec in self.args.baseline or []:
            d, _, label = spec.partition('=')
            lib = os.path.abspath(d)
            if os.path.isdir(lib):
                lib = os.path.join(lib, 'preload', 'libodebug.so')
            builds.append((label or os.path.basename(os.path.normpath(d)), lib))
        return builds

    def bench_table(self):
        """Per round, every build in turn: 1 K live (sparse, dense, 2 threads),
        the 1 M live density sweep in both mixes, the hot call against a
        spinlock pair and the timer wheel."""
        a = self.args
        ops = 400000 if a.quick else 4000000
        big = 100000 if a.quick else 1000000
        timer_ops = str(2000000 if a.quick else 20000000)
        builds = self.table_builds()
        for r in range(a.runs):
            for label, lib in builds:
                env = self.env(odebug='1')
                if lib:
                    env['LD_PRELOAD'] = lib
                bindir = self.bin
                def cycle(live, per_page, threads, n, mix=1):
                    cmd = [os.path.join(bindir, 'bench-objops'), 'cycle', '--live', str(live),
                           '--per-page', str(per_page), '--threads', str(threads),
                           '--ops', str(n)] + (['--mix', str(mix)] if mix != 1 else [])
                    f = self.fields(self.measure(cmd, env)[0].stdout)
                    if f.get('enabled') != '1':
                        sys.exit(f'run-bench.py: libodebug not enabled in {cmd[0]}')
                    return float(f['ns_per_op']), float(f.get('cpu_ns_per_op', 'nan'))
                log(f'  table {label} round {r + 1}')
                k = f'table.{label}'
                t1, c1 = cycle(1000, 1, 1, ops)
                t2, c2 = cycle(1000, 1, 2, ops)
                self.add(f'{k}.1k.sparse.t1.ns', t1)
                self.add(f'{k}.1k.sparse.t1.cpu_ns', c1)
                self.add(f'{k}.1k.sparse.t2.ns', t2)
                self.add(f'{k}.1k.t2_vs_t1', t1 / t2)
                self.add(f'{k}.1k.t2_vs_t1_cpu', 2 * c1 / c2)
                self.add(f'{k}.1k.dense.t1.ns', cycle(1000, 64, 1, ops)[0])
                for mix in (1, 2):
                    if label != builds[0][0] and not a.baseline_sweep:
                        break
                    worst = worst_cpu = 0
                    for pp in (1, 2, 4, 8, 16, 32, 64):
                        ns, cpu = cycle(big, pp, 1, 2 * ops // 4, mix)
                        self.add(f'{k}.1m.mix{mix}.p{pp}.ns', ns)
                        self.add(f'{k}.1m.mix{mix}.p{pp}.cpu_ns', cpu)
                        worst = max(worst, ns)
                        worst_cpu = max(worst_cpu, cpu)
                    self.add(f'{k}.1m.mix{mix}.worst.ns', worst)
                    self.add(f'{k}.1m.mix{mix}.worst.cpu_ns', worst_cpu)
                for threads, name in ((1, 'hot'), (2, 'hot_mt')):
                    p = self.run([os.path.join(bindir, 'bench-objops'), 'hot', '--ops', '4000000',
                                  '--threads', str(threads)], env)
                    f = self.fields(p.stdout)
                    self.add(f'{k}.{name}.ratio', float(f['ratio']))
                    self.add(f'{k}.{name}.ns_per_call', float(f['ns_per_call']))
                plain = self.timed([os.path.join(self.bin, 'bench-timer-plain'), timer_ops],
                                   self.env())
                plain_cpu = self.last_cpu
                on = self.timed([os.path.join(bindir, 'bench-timer-odebug'), timer_ops], env)
                self.add(f'{k}.timer.ratio', on / plain)
                self.add(f'{k}.timer.overhead', on / plain - 1)
                self.add(f'{k}.timer.cpu_ratio', self.last_cpu / plain_cpu)
                self.add(f'{k}.timer.cpu_overhead', self.last_cpu / plain_cpu - 1)
                if label == builds[0][0]:
                    # The floor: one compare-and-swap per call (timer.c's TIMER_FLOOR).
                    for name in ('floor', 'floor-local'):
                        w = self.timed([os.path.join(self.bin, f'bench-timer-{name}'), timer_ops],
                                       self.env())
                        self.add(f'table.timer.{name}.ratio', w / plain)
                        self.add(f'table.timer.{name}.cpu_ratio', self.last_cpu / plain_cpu)
            base = builds[1][0] if len(builds) > 1 else None
            if base:
                self.add('table.1k.sparse.vs_base',
                         self.results[f'table.{builds[0][0]}.1k.sparse.t1.ns'][-1] /
                         self.results[f'table.{base}.1k.sparse.t1.ns'][-1])

    def table_rows(self, row):
        for label, _ in self.table_builds():
            k = f'table.{label}'
            if self.stat(f'{k}.1k.sparse.t1.ns') is None:
                continue
            row(f'[{label}] object operation, 1 K live, sparse, 1 thread', f'{k}.1k.sparse.t1.ns',
                ' ns', 2, '—', None)
            row(f'[{label}] the same, CPU time', f'{k}.1k.sparse.t1.cpu_ns', ' ns', 2, '—', None)
            row(f'[{label}] the same, dense (64 per page)', f'{k}.1k.dense.t1.ns', ' ns', 2,
                '—', None)
            row(f'[{label}] 2 threads vs 1, disjoint objects, 1 K live, wall', f'{k}.1k.t2_vs_t1',
                '×', 2, '≥ 1.9×', lambda v: v >= 1.9)
            row(f'[{label}] the same in CPU time per operation (2 × cpu1 / cpu2)',
                f'{k}.1k.t2_vs_t1_cpu', '×', 2, '—', None)
            for mix in (1, 2):
                for pp in (1, 2, 4, 8, 16, 32, 64):
                    row(f'[{label}] 1 M live, {pp} per page, mix {mix}',
                        f'{k}.1m.mix{mix}.p{pp}.ns', ' ns', 1, '≤ 100 ns', lambda v: v <= 100)
                row(f'[{label}] 1 M live, worst density, mix {mix}', f'{k}.1m.mix{mix}.worst.ns',
                    ' ns', 1, '≤ 100 ns', lambda v: v <= 100)
                for pp in (1, 2, 4, 8, 16, 32, 64):
                    row(f'[{label}] 1 M live, {pp} per page, mix {mix}, CPU time',
                        f'{k}.1m.mix{mix}.p{pp}.cpu_ns', ' ns', 1, '(≤ 100 ns)', lambda v: v <= 100)
                row(f'[{label}] 1 M live, worst density, mix {mix}, CPU time',
                    f'{k}.1m.mix{mix}.worst.cpu_ns', ' ns', 1, '(≤ 100 ns)', lambda v: v <= 100)
            row(f'[{label}] hot call / spinlock pair, one thread', f'{k}.hot.ratio', '', 3,
                '≤ 1.3', lambda v: v <= 1.3)
            row(f'[{label}] the same, a second thread sleeping (the locked CAS)',
                f'{k}.hot_mt.ratio', '', 3, '≤ 1.3', lambda v: v <= 1.3)
            # The goal is an overhead (ratio - 1), as in the timer group.
            row(f'[{label}] timer wheel ODEBUG=1 / plain, wall', f'{k}.timer.ratio', '', 3,
                '—', None)
            row(f'[{label}] timer wheel overhead, ODEBUG=1, wall', f'{k}.timer.overhead', '', 3,
                '≤ 1.3', lambda v: v <= 1.3)
            row(f'[{label}] the same, CPU time', f'{k}.timer.cpu_overhead', '', 3, '(≤ 1.3)',
                lambda v: v <= 1.3)
        for name, what in (('floor', 'one locked CAS per call'),
                           ('floor-local', 'one unlocked cmpxchg per call')):
            row(f'timer wheel floor, {what} / plain, wall', f'table.timer.{name}.ratio', '', 3,
                '—', None)
            row(f'timer wheel floor, {what} / plain, CPU time', f'table.timer.{name}.cpu_ratio',
                '', 3, '—', None)
        row('1 K sparse, this build / the first --baseline, per round', 'table.1k.sparse.vs_base',
            '', 3, '≤ 1', lambda v: v <= 1)

    # ---- 4. memory ------------------------------------------------------

    def bench_memory(self):
        a = self.args
        live = 100000 if a.quick else 1000000
        origins_ok = None
        for r in range(a.runs):
            log(f'  memory round {r + 1}')
            res = {}
            for name, odebug, options in (('off', None, None), ('on', '1', None),
                                          ('origins', '1', 'origins=1')):
                p = self.run([self.exe('bench-objops'), 'mem', '--live', str(live)],
                             self.env(odebug=odebug, options=options))
                if name == 'origins':
                    origins_ok = "unknown option 'origins'" not in p.stderr
                    if not origins_ok:
                        continue
                res[name] = self.fields(p.stdout)
            off_end = int(res['off']['anon_end_kb'])
            off_start = int(res['off']['anon_start_kb'])
            for name in ('on', 'origins'):
                if name not in res:
                    continue
                f = res[name]
                total = (int(f['anon_end_kb']) - off_end) * 1024
                growth = ((int(f['anon_end_kb']) - int(f['anon_start_kb'])) -
                          (off_end - off_start)) * 1024
                trackers = int(f['pool_total']) - int(f['pool_total_start'])
                self.add(f'memory.{name}.bytes_per_object', total / live)
                self.add(f'memory.{name}.growth_per_object', growth / live)
                self.add(f'memory.{name}.startup_kb', int(f['anon_start_kb']) - off_start)
                self.add(f'memory.{name}.pool_total', int(f['pool_total']))
                if trackers:
                    self.add(f'memory.{name}.bytes_per_mapped_tracker', growth / trackers)
        self.notes['origins'] = origins_ok

    # ---- 5. the timer wheel --------------------------------------------

    def timed(self, cmd, env):
        return self.measure(cmd, env)[1]

    def bench_timer(self):
        a = self.args
        ops = str(2000000 if a.quick else 20000000)
        variants = [('plain', [self.exe('bench-timer-plain'), ops], self.env()),
                    ('odebug-off', [self.exe('bench-timer-odebug'), ops], self.env()),
                    ('odebug', [self.exe('bench-timer-odebug'), ops], self.env(odebug='1'))]
        if os.path.exists(self.exe('bench-timer-asan')):
            variants.append(('asan', [self.exe('bench-timer-asan'), ops], self.env()))
        if self.valgrind:
            variants.append(('memcheck', [self.valgrind, '--tool=memcheck', '-q',
                                          '--error-exitcode=3', '--leak-check=no',
                                          self.exe('bench-timer-plain'), ops], self.env()))
        for r in range(a.runs):
            t = {}
            for name, cmd, env in variants:
                log(f'  timer {name} round {r + 1}')
                t[name] = self.timed(cmd, env)
                self.add(f'timer.{name}.s', t[name])
            for name in t:
                if name != 'plain':
                    self.add(f'timer.{name}.overhead', t[name] / t['plain'] - 1)
            if 'asan' in t:
                self.add('timer.odebug_vs_asan',
                         (t['odebug'] / t['plain'] - 1) / (t['asan'] / t['plain'] - 1))

    # ---- 9. process start and exit, and shell-heavy runs ---------------

    @staticmethod
    def spawn_batch(cmd, env, n):
        """Run @cmd @n times; wall ms, child CPU ms and minor faults per run."""
        t0 = time.perf_counter()
        cpu = flt = 0
        for _ in range(n):
            pid = os.posix_spawnp(cmd[0], cmd, env, file_actions=[
                (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0)])
            _, status, ru = os.wait4(pid, 0)
            if status != 0:
                sys.exit(f'run-bench.py: {" ".join(cmd)} failed ({status})')
            cpu += ru.ru_utime + ru.ru_stime
            flt += ru.ru_minflt
        return (time.perf_counter() - t0) / n * 1e3, cpu / n * 1e3, flt / n

    def bench_startup(self):
        a = self.args
        n = 20 if a.quick else 100
        mk = os.path.join(self.out, 'shell-heavy')
        os.makedirs(mk, exist_ok=True)
        with open(os.path.join(mk, 'Makefile'), 'w') as f:
            names = [f't{i}' for i in range(40)]
            f.write(f'all: {" ".join(names)}\n.PHONY: all {" ".join(names)}\n')
            for i, t in enumerate(names):
                f.write(f'{t}:\n\t@echo {i} | tr 0-9 a-j | sed s/a/b/ | cat >/dev/null\n')
        workloads = [('true', ['/bin/true'], n),
                     ('make', ['make', '-s', '-C', mk], 2 if a.quick else 4)]
        if shutil.which('git') and os.path.exists(os.path.join(SOURCE_ROOT, '.git')):
            workloads.append(('git', ['git', '-C', SOURCE_ROOT, 'log', '--oneline', '-n', '200',
                                      '--stat'], 10 if a.quick else 40))
        libs = [('on', self.lib)]
        if a.startup_baseline:
            libs.append(('baseline', os.path.abspath(a.startup_baseline)))
        for r in range(a.runs):
            for w, cmd, count in workloads:
                log(f'  startup {w} round {r + 1}')
                res = {'plain': self.spawn_batch(cmd, self.env(), count)}
                for name, lib in libs:
                    env = self.env(odebug='1')
                    env['LD_PRELOAD'] = lib
                    res[name] = self.spawn_batch(cmd, env, count)
                if w == 'true':
                    env = self.env(preload=True)
                    res['unset'] = self.spawn_batch(cmd, env, count)
                for name in res:
                    if name == 'plain':
                        continue
                    self.add(f'startup.{w}.{name}.added_ms', res[name][0] - res['plain'][0])
                    self.add(f'startup.{w}.{name}.added_cpu_ms', res[name][1] - res['plain'][1])
                    self.add(f'startup.{w}.{name}.added_faults', res[name][2] - res['plain'][2])
                    self.add(f'startup.{w}.{name}.ratio', res[name][0] / res['plain'][0])
                    self.add(f'startup.{w}.{name}.cpu_ratio', res[name][1] / res['plain'][1])
                self.add(f'startup.{w}.plain.ms', res['plain'][0])

    # ---- 8. the event loop: real work per event ---------------------------

    def bench_eventloop(self):
        a = self.args
        events = str(20000 if a.quick else 200000)
        plain = [self.exe('bench-eventloop-plain'), events]
        variants = [('plain', plain, self.env()),
                    ('odebug', [self.exe('bench-eventloop-odebug'), events], self.env(odebug='1')),
                    ('odebug-off', [self.exe('bench-eventloop-odebug'), events], self.env())]
        if os.path.exists(self.exe('bench-eventloop-asan')):
            variants.append(('asan', [self.exe('bench-eventloop-asan'), events], self.env()))
        if self.valgrind:
            variants.append(('memcheck', [self.valgrind, '--tool=memcheck', '-q',
                                          '--error-exitcode=3', '--leak-check=no'] + plain,
                             self.env()))
        for r in range(a.runs):
            t, cpu, sums = {}, {}, set()
            for name, cmd, env in variants:
                log(f'  eventloop {name} round {r + 1}')
                p, t[name] = self.measure(cmd, env)
                cpu[name] = self.last_cpu
                sums.add(self.fields(p.stdout).get('checksum'))
                self.add(f'eventloop.{name}.s', t[name])
                self.add(f'eventloop.{name}.cpu', cpu[name])
            if len(sums) != 1:
                sys.exit(f'run-bench.py: the event loop builds disagree: {sums}')
            for name in t:
                if name != 'plain':
                    self.add(f'eventloop.{name}.overhead', t[name] / t['plain'] - 1)
            # Also in CPU seconds: on a loaded machine, waiting for a core
            # swamps the wall time of the short runs.
            for key, v in (('', t), ('cpu_', cpu)):
                od = v['odebug'] / v['plain'] - 1
                if key:
                    for name in v:
                        if name != 'plain':
                            self.add(f'eventloop.{name}.cpu_overhead', v[name] / v['plain'] - 1)
                for tool in ('asan', 'memcheck'):
                    if tool in v:
                        self.add(f'eventloop.{key}odebug_vs_{tool}',
                                 od / (v[tool] / v['plain'] - 1))

    # ---- 7. an annotation call with ODEBUG unset ---------------------------

    def collected(self, cmd, env, toggle=None):
        """Instructions callgrind counted (in @toggle only, if given)."""
        vg = [self.valgrind, '--tool=callgrind', '--callgrind-out-file=/dev/null']
        if toggle:
            vg.append(f'--toggle-collect={toggle}')
        p = self.run(vg + cmd, env)
        m = re.search(r'Collected : (\d+)', p.stderr)
        if not m:
            sys.exit(f'run-bench.py: no callgrind total for {cmd[0]}:\n{p.stderr}')
        return int(m.group(1))

    def bench_offcall(self):
        a = self.args
        if not self.valgrind:
            log('  offcall: needs valgrind')
            return
        calls = 200000 if a.quick else 2000000
        ops = str(200000 if a.quick else 2000000)
        for r in range(a.runs):
            log(f'  offcall round {r + 1}')
            on = self.collected([self.exe('bench-offcall'), str(calls)], self.env(), 'call_loop')
            off = self.collected([self.exe('bench-offcall-disabled'), str(calls)], self.env(),
                                 'call_loop')
            self.add('offcall.ir_per_call', on / calls)
            self.add('offcall.added_ir_per_call', (on - off) / calls)
            # The timer wheel, whole process: linked and unset against plain.
            linked = self.collected([self.exe('bench-timer-odebug'), ops], self.env())
            plain = self.collected([self.exe('bench-timer-plain'), ops], self.env())
            self.add('offcall.timer_ir_overhead', linked / plain - 1)

    # ---- 6. activate with origins ---------------------------------------

    def bench_origins(self):
        a = self.args
        ops = str(400000 if a.quick else 4000000)
        cmd = [self.exe('bench-objops'), 'activate', '--live', '1000', '--ops', ops]
        p = self.run(cmd, self.env(odebug='1', options='origins=1'))
        ok = "unknown option 'origins'" not in p.stderr
        self.notes['origins'] = ok
        if not ok:
            log('  origins: option rejected (n/a); measuring without it only')
        if ok and self.valgrind:
            # Instructions added per activate: two lengths of the same run,
            # so start-up and exit cancel out.
            small, big = (20000, 40000) if a.quick else (200000, 400000)
            ir = {}
            for opts in (None, 'origins=1'):
                for n in (small, big):
                    c = [self.exe('bench-objops'), 'activate', '--live', '1000', '--ops', str(n)]
                    ir[(opts, n)] = self.collected(c, self.env(odebug='1', options=opts))
            self.add('origins.added_ir_per_activate',
                     ((ir[('origins=1', big)] - ir[(None, big)]) -
                      (ir[('origins=1', small)] - ir[(None, small)])) / ((big - small) / 2))
        for r in range(a.runs):
            log(f'  activate round {r + 1}')
            base = float(self.fields(self.measure(
                cmd, self.env(odebug='1'))[0].stdout)['ns_per_pair'])
            self.add('origins.off.ns_per_pair', base)
            if ok:
                orig = float(self.fields(self.measure(
                    cmd, self.env(odebug='1', options='origins=1'))[0].stdout)['ns_per_pair'])
                self.add('origins.on.ns_per_pair', orig)
                self.add('origins.added_ns_per_activate', orig - base)

    # ---- the plot's sweeps ----------------------------------------------

    # ---- 10. a small program's memory; real servers -------------------------

    def bench_smallrss(self):
        """python3 with 4 threads: its maximum RSS added by ODEBUG=1 (python-rss.py,
        fixed addresses, its own alternated rounds)."""
        rounds = 3 if self.args.quick else 11
        p = subprocess.run(['/usr/bin/python3', os.path.join(HERE, 'python-rss.py'), self.lib,
                            str(rounds)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
        m = re.search(r'added ([+-]?\d+) KB', p.stdout)
        if p.returncode or not m:
            log(f'  smallrss: python-rss.py failed:\n{p.stdout[-1000:]}')
            return
        self.add('smallrss.python3.added_kb', float(m.group(1)))

    def bench_servers(self):
        """nginx and memcached under odebug / plain (servers.py, those two
        configurations; the valgrind tools' and rebuilds' columns are
        servers.py's own)."""
        cmd = [sys.executable, os.path.join(HERE, 'servers.py'), '--build',
               os.path.dirname(os.path.dirname(self.lib)), '--configs', 'plain,odebug']
        cmd += ['--quick'] if self.args.quick else ['--rounds', str(self.args.runs)]
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        if p.returncode == 77:
            log('  servers: nginx, memcached or their load generators missing')
            return
        for metric, name in (('nginx, requests/s', 'nginx'),
                             ('memcached, set+get operations/s', 'memcached')):
            m = re.search(r'^\| ' + re.escape(metric) + r' \|.*\| ([\d.]+) \[[^]]*\] \|$',
                          p.stdout, re.M)
            if m:
                self.add(f'servers.{name}.ratio', float(m.group(1)))

    def bench_plot(self):
        a = self.args
        ops = 400000 if a.quick else 4000000
        lives = [1000, 4000, 16000, 64000, 256000, 1000000]
        densities = [1, 2, 4, 8, 16, 32, 64]
        if a.quick:
            lives = [1000, 16000, 100000]
            densities = [1, 8, 64]
        runs = max(3, a.runs // 2) if not a.quick else 1
        points = sorted({(n, p) for n in lives for p in (1, 64)} |
                        {(n, p) for n in (lives[0], lives[-1]) for p in densities})
        data = {pt: [] for pt in points}
        for r in range(runs):
            for n, p in points:
                log(f'  plot live={n} per_page={p} round {r + 1}')
                data[(n, p)].append(self.objops(n, p, 1, ops))
        med = {pt: statistics.median(v) for pt, v in data.items()}
        with open(os.path.join(self.out, 'objops-live.dat'), 'w') as f:
            f.write('# live  ns/op sparse (1 per page)  ns/op dense (64 per page)\n')
            for n in lives:
                f.write(f'{n} {med[(n, 1)]:.2f} {med[(n, 64)]:.2f}\n')
        with open(os.path.join(self.out, 'objops-density.dat'), 'w') as f:
            f.write(f'# objects per page  ns/op {lives[0]} live  ns/op {lives[-1]} live\n')
            for p in densities:
                f.write(f'{p} {med[(lives[0], p)]:.2f} {med[(lives[-1], p)]:.2f}\n')
        self.notes['plot'] = {'runs': runs, 'ops': ops, 'lives': lives, 'densities': densities}
        gp = shutil.which('gnuplot')
        if not gp:
            log('  gnuplot not found: data written, no plot')
            return
        plot = a.plot_file or os.path.join(SOURCE_ROOT, 'doc', 'bench-objops.png')
        os.makedirs(os.path.dirname(os.path.abspath(plot)), exist_ok=True)
        setup = (f"datadir='{self.out}'; outfile='{plot}'; lo='{lives[0]}'; hi='{lives[-1]}'; "
                 f"label='{a.label or 'this build'}'")
        if a.compare and os.path.exists(os.path.join(a.compare, 'objops-live.dat')):
            setup += f"; basedir='{os.path.abspath(a.compare)}'; baselabel='{a.compare_label}'"
        subprocess.run([gp, '-e', setup, os.path.join(HERE, 'plot.gp')], check=True)
        log(f'  plot: {plot}')

    # ---- the table -------------------------------------------------------

    @staticmethod
    def stat_of(results, name):
        v = results.get(name)
        if not v:
            return None
        return statistics.median(v), min(v), max(v)

    def stat(self, name):
        return self.stat_of(self.results, name)

    def table(self):
        rows = []
        na = 'n/a'

        def fmt(s, unit, digits):
            if s is None:
                return na
            m, lo, hi = s
            return f'{m:.{digits}f}{unit} [{lo:.{digits}f} – {hi:.{digits}f}]'

        def row(figure, name, unit, digits, goal, test):
            s = self.stat(name)
            if test is None:
                met = ''
            else:
                met = na if s is None else ('met' if test(s[0]) else 'MISSED')
            base = fmt(self.stat_of(self.base, name), unit, digits) if self.base else None
            rows.append((figure, fmt(s, unit, digits), goal, met, base))

        q = ' (quick)' if self.args.quick else ''
        big = '100 K' if self.args.quick else '1 M'
        for t in (1, 2):
            row(f'instructions added per free, loaded, ODEBUG unset, {t} thread(s)',
                f'churn.t{t}.loaded.added_ir', '', 1, '≤ 12', lambda v: v <= 12)
            row(f'instructions added per free, ODEBUG=1, nothing tracked, {t} thread(s)',
                f'churn.t{t}.on.added_ir', '', 1, '≤ 30', lambda v: v <= 30)
            row(f'instructions added per free, ODEBUG=1, one object tracked elsewhere, {t} thread(s)',
                f'churn.t{t}.on-1.added_ir', '', 1, '≤ 40', lambda v: v <= 40)
            row(f'churn instructions, ODEBUG=1, {big} tracked sharing pages / plain, {t} thread(s)',
                f'churn.t{t}.on-1m.ir_ratio', '', 3, '≤ 1.475', lambda v: v <= 1.475)
        for t in (1, 2):
            for name, label in (('plain', 'plain glibc'), ('loaded', 'loaded, ODEBUG unset'),
                                ('on', 'ODEBUG=1, nothing tracked'),
                                ('on-1', 'ODEBUG=1, one tracked elsewhere'),
                                ('plain-1m', f'plain glibc, {big} pairs'),
                                ('on-1m', f'ODEBUG=1, {big} tracked')):
                row(f'churn wall ns per iteration, {label}, {t} thread(s)',
                    f'churn.t{t}.{name}.ns_per_iter', ' ns', 1, '—', None)
            row(f'churn wall time, ODEBUG=1, {big} tracked / plain, {t} thread(s)',
                f'churn.t{t}.on-1m.ns_ratio', '', 2, '(≤ 1.50)', lambda v: v <= 1.5)
            row(f'libodebug\'s own instructions per free, ODEBUG=1, {big} tracked, {t} thread(s)',
                f'churn.t{t}.on-1m.own_ir_per_free', '', 0, '—', None)
            row(f'churned blocks sharing a 4 KiB chunk with a tracked object, {t} thread(s)',
                f'churn.t{t}.on-1m.shared', '', 2, '—', None)
        row('object operation, 1 K live, random, sparse', 'objops.1k.sparse.t1.ns', ' ns', 1,
            '≤ 40 ns', lambda v: v <= 40)
        row('object operation, 1 K live, random, dense', 'objops.1k.dense.t1.ns', ' ns', 1,
            '≤ 40 ns', lambda v: v <= 40)
        row(f'object operation, {big} live, random, sparse', 'objops.1m.sparse.t1.ns', ' ns', 1,
            '≤ 150 ns', lambda v: v <= 150)
        row(f'object operation, {big} live, random, dense', 'objops.1m.dense.t1.ns', ' ns', 1,
            '≤ 150 ns', lambda v: v <= 150)
        row(f'{big} dense / {big} sparse', 'objops.1m.dense_ratio', '', 2, '≤ 1.3',
            lambda v: v <= 1.3)
        row('1 K dense / 1 K sparse', 'objops.1k.dense_ratio', '', 2, '(≤ 1.3)',
            lambda v: v <= 1.3)
        row('2 threads vs 1, disjoint objects, 1 K live', 'scaling.1k.t2', '×', 2, '≥ 1.7×',
            lambda v: v >= 1.7)
        row(f'2 threads vs 1, disjoint objects, {big} live', 'scaling.1m.t2', '×', 2, '≥ 1.7×',
            lambda v: v >= 1.7)
        row('4 threads on 2 cores vs 1, 1 K live', 'scaling.1k.t4', '×', 2, '—', None)
        row('4 threads on 2 cores vs 2, 1 K live', 'scaling.1k.t4_vs_t2', '×', 2, '—', None)
        row(f'4 threads on 2 cores vs 1, {big} live', 'scaling.1m.t4', '×', 2, '—', None)
        row(f'memory per tracked object, {big} live (smaps: all of libodebug\'s anonymous '
            'mappings vs ODEBUG unset)', 'memory.on.bytes_per_object', ' B', 1, '≤ 48 B',
            lambda v: v <= 48)
        row(f'memory per tracked object, growth from 0 to {big}',
            'memory.on.growth_per_object', ' B', 1, '—', None)
        row('resident bytes per tracker mapped (slab growth / trackers added)',
            'memory.on.bytes_per_mapped_tracker', ' B', 1, '—', None)
        row(f'memory per tracked object with origins=1, 100 call sites',
            'memory.origins.bytes_per_object', ' B', 1, '≤ 56 B', lambda v: v <= 56)
        for name, label in (('odebug', 'ODEBUG=1'), ('odebug-off', 'libodebug linked, ODEBUG unset'),
                            ('asan', '-fsanitize=address'), ('memcheck', 'valgrind memcheck')):
            goal, test = {'odebug': ('≤ 1.3', lambda v: v <= 1.3),
                          'odebug-off': ('≤ 0.03', lambda v: v <= 0.03)}.get(name, ('—', None))
            row(f'timer wheel overhead, {label}', f'timer.{name}.overhead', '', 3, goal, test)
        row('timer wheel overhead, ODEBUG=1 / ASan\'s (no goal: a quarter of ASan\'s is 0.4 ns a call)',
            'timer.odebug_vs_asan', '', 2, '—', None)
        row('instructions per annotation call, libodebug linked, ODEBUG unset, call site and '
            'loop included', 'offcall.ir_per_call', '', 1, '—', None)
        row('instructions added per annotation call, ODEBUG unset (vs the loop built with '
            'ODEBUG_DISABLE)', 'offcall.added_ir_per_call', '', 1, '≤ 6', lambda v: v <= 6)
        row('timer wheel instructions, libodebug linked, ODEBUG unset / plain − 1',
            'offcall.timer_ir_overhead', '', 4, '(≤ 0.03)', lambda v: v <= 0.03)
        for name, label in (('plain', 'plain (ODEBUG_DISABLE)'), ('odebug', 'libodebug, ODEBUG=1'),
                            ('odebug-off', 'libodebug linked, ODEBUG unset'),
                            ('asan', '-fsanitize=address'), ('memcheck', 'valgrind memcheck')):
            row(f'event loop wall time, {label}', f'eventloop.{name}.s', ' s', 3, '—', None)
        for name, label in (('odebug', 'ODEBUG=1'), ('odebug-off', 'libodebug linked, ODEBUG unset'),
                            ('asan', '-fsanitize=address'), ('memcheck', 'valgrind memcheck')):
            row(f'event loop overhead, {label}', f'eventloop.{name}.overhead', '', 3, '—', None)
        row('event loop overhead, ODEBUG=1 / ASan\'s', 'eventloop.odebug_vs_asan', '', 3,
            '≤ 0.1', lambda v: v <= 0.1)
        row('event loop overhead, ODEBUG=1 / memcheck\'s', 'eventloop.odebug_vs_memcheck', '', 4,
            '≤ 0.05', lambda v: v <= 0.05)
        for name, label in (('odebug', 'ODEBUG=1'), ('odebug-off', 'libodebug linked, ODEBUG unset'),
                            ('asan', '-fsanitize=address'), ('memcheck', 'valgrind memcheck')):
            row(f'event loop CPU-time overhead, {label}', f'eventloop.{name}.cpu_overhead', '', 3,
                '—', None)
        row('event loop CPU-time overhead, ODEBUG=1 / ASan\'s', 'eventloop.cpu_odebug_vs_asan', '',
            3, '(≤ 0.1)', lambda v: v <= 0.1)
        row('event loop CPU-time overhead, ODEBUG=1 / memcheck\'s',
            'eventloop.cpu_odebug_vs_memcheck', '', 4, '(≤ 0.05)', lambda v: v <= 0.05)
        row('/bin/true, wall ms per process, plain', 'startup.true.plain.ms', ' ms', 3, '—', None)
        for name, label in (('on', 'ODEBUG=1'), ('unset', 'preloaded, ODEBUG unset'),
                            ('baseline', 'ODEBUG=1, --startup-baseline library')):
            goal, test = ('≤ 0.5 ms', lambda v: v <= 0.5) if name == 'on' else ('—', None)
            row(f'/bin/true preloaded, ms added per process, {label}',
                f'startup.true.{name}.added_ms', ' ms', 3, goal, test)
            row(f'/bin/true preloaded, CPU ms added per process, {label}',
                f'startup.true.{name}.added_cpu_ms', ' ms', 3, '—', None)
            row(f'/bin/true preloaded, page faults added per process, {label}',
                f'startup.true.{name}.added_faults', '', 0, '—', None)
        for w, label in (('make', 'make, 40 rules of 4-process pipelines'),
                         ('git', 'git log --stat -n 200')):
            for name, nlabel in (('on', 'ODEBUG=1'), ('baseline', 'ODEBUG=1, baseline library')):
                goal, test = ('≤ 1.1', lambda v: v <= 1.1) if name == 'on' else ('—', None)
                row(f'{label}, preloaded {nlabel} / plain, wall', f'startup.{w}.{name}.ratio', '',
                    3, goal, test)
                row(f'{label}, preloaded {nlabel} / plain, CPU', f'startup.{w}.{name}.cpu_ratio',
                    '', 3, '—', None)
        row('python3 with 4 threads, maximum RSS added by ODEBUG=1 (python-rss.py)',
            'smallrss.python3.added_kb', ' KB', 0, '≤ 512 KB', lambda v: v <= 512)
        row('nginx, requests/s under odebug / plain (servers.py)', 'servers.nginx.ratio', '', 3,
            '≥ 0.95', lambda v: v >= 0.95)
        row('memcached, set+get operations/s under odebug / plain (servers.py)',
            'servers.memcached.ratio', '', 3, '≥ 0.95', lambda v: v >= 0.95)
        self.table_rows(row)
        row('ns per activate+deactivate pair, origins unset (100 call sites, 1 K live)',
            'origins.off.ns_per_pair', ' ns', 1, '—', None)
        row('ns per activate+deactivate pair, origins=1', 'origins.on.ns_per_pair', ' ns', 1,
            '—', None)
        row('ns added per activate by origins=1', 'origins.added_ns_per_activate', ' ns', 1,
            '≤ 25 ns', lambda v: v <= 25)
        row('instructions added per activate by origins=1 (callgrind)',
            'origins.added_ir_per_activate', '', 0, '—', None)
        return rows, q

    def report(self):
        rows, q = self.table()
        w0 = max(len(r[0]) for r in rows)
        w1 = max(len(r[1]) for r in rows)
        load = ', '.join(f'{w} {v}' for w, v in self.notes.get('loadavg', []))
        noisy = (f'{self.noisy_runs} of {self.timed_runs} timed runs still had other '
                 f'processes using > 10 % of a CPU after {self.args.retries} retries; '
                 f'median foreign load {statistics.median(self.foreign or [0]):.3f} CPUs')
        label = self.args.label or 'measured'
        blabel = self.args.compare_label
        lines = [f'libodebug benchmarks{q}: median [min – max] of {self.args.runs} rounds',
                 f'1-minute load average at the start of each group: {load}',
                 noisy,
                 f'{"figure":<{w0}}  {label:<{w1}}  {"goal":<10} {"status":<7}' +
                 (f'{blabel}' if self.base else '')]
        for r in rows:
            lines.append(f'{r[0]:<{w0}}  {r[1]:<{w1}}  {r[2]:<10} {r[3]:<7}' +
                         (f'{r[4]}' if self.base else ''))
        print('\n'.join(lines))
        with open(os.path.join(self.out, 'results.md'), 'w') as f:
            f.write(''.join(f'{x}\n\n' for x in lines[:3]))
            if self.base:
                f.write(f'| figure | goal | {label}: median [min – max] | status | {blabel} |\n'
                        '|---|---|---|---|---|\n')
                for r in rows:
                    f.write(f'| {r[0]} | {r[2]} | {r[1]} | {r[3]} | {r[4]} |\n')
            else:
                f.write(f'| figure | goal | {label}: median [min – max] | status |\n'
                        '|---|---|---|---|\n')
                for r in rows:
                    f.write(f'| {r[0]} | {r[2]} | {r[1]} | {r[3]} |\n')
        with open(os.path.join(self.out, 'results.json'), 'w') as f:
            self.notes['timed_runs'] = self.timed_runs
            self.notes['noisy_runs'] = self.noisy_runs
            self.notes['foreign_load'] = self.foreign
            json.dump({'results': self.results, 'notes': self.notes,
                       'args': vars(self.args)}, f, indent=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--build', default='build', help='meson build directory')
    ap.add_argument('--runs', type=int, default=5, help='rounds per group (default 5)')
    ap.add_argument('--quick', action='store_true',
                    help='small sizes, one round: a smoke test, not figures')
    ap.add_argument('--plot', action='store_true', help='also run the sweeps and draw the plot')
    ap.add_argument('--plot-file', help='where the plot goes, .png or .svg '
                    '(default doc/bench-objops.png in the source tree)')
    ap.add_argument('--out', help='results directory (default BUILD/bench-results)')
    ap.add_argument('--retries', type=int, default=3,
                    help='repeat a timed run disturbed by other processes (default 3)')
    ap.add_argument('--idle-wait', type=float, default=60,
                    help='seconds to wait for an idle machine before each timed run '
                    '(default 60; 0: do not wait)')
    ap.add_argument('--label', help='name of this build in the table and the plot')
    ap.add_argument('--compare', metavar='RESULTS',
                    help="a previous run's results directory (e.g. the kernel-style "
                    'baseline): shown in a column of the table and in the plot')
    ap.add_argument('--compare-label', default='kernel-style baseline',
                    help='its name (default: kernel-style baseline)')
    ap.add_argument('--startup-baseline', metavar='LIB',
                    help='another libodebug.so to run beside this build\'s in the startup group')
    ap.add_argument('--baseline', action='append', metavar='BUILD-OR-LIB[=LABEL]',
                    help='another build directory, or a libodebug.so such as '
                    'BUILD/bench/kernel/libodebug.so, run alternately with this one in the '
                    'table group (repeatable; the first is the one 1 K sparse is compared with)')
    ap.add_argument('--baseline-sweep', action='store_true',
                    help='run the 1 M live density sweep for the --baseline builds too')
    ap.add_argument('--only',
                    default='churn,objops,memory,timer,origins,offcall,eventloop,startup,smallrss',
                    help='groups to run, comma-separated (plot with --plot; "table": '
                    'the object-operation goals, with --baseline builds alternated; '
                    '"servers": nginx and memcached, minutes)')
    args = ap.parse_args()
    if args.quick:
        if '--runs' not in sys.argv:
            args.runs = 1
        if '--idle-wait' not in sys.argv:
            args.idle_wait = 0
        if '--retries' not in sys.argv:
            args.retries = 0
    b = Bench(args)
    if not b.valgrind:
        log('valgrind not found: no instruction counts, no memcheck')
    for group in args.only.split(','):
        log(f'{group}:')
        b.loadavg(group)
        getattr(b, 'bench_' + group)()
    if args.plot:
        log('plot:')
        b.loadavg('plot')
        b.bench_plot()
    b.loadavg('end')
    b.report()


if __name__ == '__main__':
    main()
