# SPDX-License-Identifier: MIT
"""hot-text.py - write preload/hot-text.list: the functions a started
libodebug runs, which the build places together at the start of its text
(preload/hot-archive.py).

    /usr/bin/python3 bench/hot-text.py BUILD_DIR > preload/hot-text.list

The kernel maps a library's cached pages 64 KiB around each page fault,
so a function run once in a while keeps a whole window of our text
resident.  Once started, libodebug returns its pages to the page cache
(lib/base/trim.c); the windows that come back are the ones the program's calls
touch.  Listed first, in one input section group of under 64 KiB, those
calls touch one window, not every one.

The list is what the workloads below (python-rss.py's threads,
bench-locks' pairs) execute outside the start: each is run under callgrind (without the selftest, whose misuses would reach the
report path), and the functions reached from the process's roots (not
through our constructors, and not below odebug_enable_slow() or
odebug_start_slow(), the start) are the hot ones, as "source function"
lines: -ffunction-sections names function F's section .text.F in the
object built from its source, and a static function of another file with
the same name stays out.  Besides: the start's own functions, through
which the start returns after giving pages back, and every lock and
semaphore interposer and state function.  A line the build no longer has
renames nothing: the test hot-text says so.
"""
import collections
import glob
import os
import re
import subprocess
import sys
import tempfile

# Where a call is the start, not a use: nothing below it is hot.
START = {'odebug_enable_slow', 'odebug_start_slow'}
# Where the pages are given back from (lib/base/trim.c).
TRIM = {'odebug_trim', 'odebug_trim_after', 'trim_range', 'trim_run'}
# The lock and semaphore families' interposers and state functions, each
# (7 KiB of the latter): under valgrind, which runs one thread at a time,
# a workload takes other paths (a condition variable's wait, a reader's
# unlock of a lock nobody holds) than it does natively.
FAMILIES = re.compile(r'^(odebug_i_(pthread_(mutex|cond|rwlock|spin|barrier)|sem|mtx|cnd)_|'
                      r'odebug_(builtin|glibc|mutex|rwlock)_)')
# Called by the loader, not the program.
LOADER = {'odebug_constructor', 'preload_constructor', 'odebug_destructor',
          '_init', '_fini', 'frame_dummy', 'register_tm_clones',
          '__do_global_dtors_aux', 'deregister_tm_clones'}


def call_graph(path):
    """The run's functions, (object, source file, name), each with those it called."""
    names = {'ob': {}, 'fn': {}, 'fl': {}}
    callees, nodes = collections.defaultdict(set), set()
    ob = fl = fn = cob = cfl = pending = None

    def name(kind, s):
        m = re.match(r'\((\d+)\)(?: (.*))?$', s)
        if not m:
            return s
        if m.group(2) is not None:
            names[kind][m.group(1)] = m.group(2)
        return names[kind].get(m.group(1), '?')

    for line in open(path):
        key, _, val = line.rstrip('\n').partition('=')
        if key == 'ob':
            ob = name('ob', val)
        elif key == 'fl':
            fl = name('fl', val)
        elif key == 'fn':
            fn = name('fn', val)
            cob, cfl = ob, fl
            nodes.add((ob, fl, fn))
        elif key in ('fi', 'fe'):
            name('fl', val)
        elif key in ('cfi', 'cfl'):
            cfl = name('fl', val)
        elif key == 'cob':
            cob = name('ob', val)
        elif key == 'cfn':
            pending = (cob, cfl, name('fn', val))
        elif key == 'calls' and pending:
            callees[(ob, fl, fn)].add(pending)
            nodes.add(pending)
            pending, cob, cfl = None, ob, fl
    return nodes, callees


def hot_functions(path, lib):
    """
    Ours, (source file, name), reached from the process's roots (its start,
    its threads' starts) through any library, but not through our
    constructors (the loader's calls) or below the start: a callback libc
    calls for the start (dl_iterate_phdr's) is the start's.
    """
    nodes, callees = call_graph(path)
    base = lambda f: re.sub(r"'\d+$", '', f)
    called = {c for cs in callees.values() for c in cs}
    todo = [n for n in nodes if n not in called]
    seen, hot = set(), set()
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        ob, fl, fn = n
        if lib in ob:
            if base(fn) in LOADER or base(fn) in START:
                continue
            hot.add((os.path.basename(fl or ''), base(fn)))
        todo += callees.get(n, ())
    return hot


def run(cmd, lib):
    out = tempfile.mktemp(prefix='hot-text.', suffix='.cg')
    # No selftest: its misuses would make the report path look reached.
    env = dict(os.environ, LD_PRELOAD=lib, ODEBUG='1', ODEBUG_OPTIONS='selftest=0')
    subprocess.run(['valgrind', '--tool=callgrind', '--soname-synonyms=somalloc=nomatch',
                    '--callgrind-out-file=' + out] + cmd, env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return out


def sections(build):
    """Every .text.NAME section of the library's objects: NAME -> the sources that have one."""
    where = collections.defaultdict(set)
    for o in glob.glob(os.path.join(build, 'lib', 'libodebug-core.a.p', '*.o')) + \
            glob.glob(os.path.join(build, 'preload', 'libodebug-preload.a.p', '*.o')):
        out = subprocess.run(['objdump', '-h', o], capture_output=True, text=True).stdout
        for n in re.findall(r'^\s*\d+ \.text\.(\S+)', out, re.M):
            where[n].add(os.path.basename(o)[:-len('.o')])
    return where


def main():
    build = sys.argv[1]
    lib = os.path.realpath(os.path.join(build, 'preload', 'libodebug.so'))
    locks = os.path.join(build, 'bench', 'bench-locks')
    # python-rss.py's workload: 4 threads hashing jobs from a queue.
    workloads = [['/usr/bin/python3', os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                   'python-rss.py'), '--maxrss'],
                 [locks, 'pair', '10000'], [locks, 'rdpair', '10000']]
    hot = {('', f) for f in START | TRIM}
    for cmd in workloads:
        cg = run(cmd, lib)
        hot |= hot_functions(cg, 'libodebug')
        os.unlink(cg)
    # Aliases (interposers are exported under their versioned names): the
    # symbols at each hot function's address, as sections.
    by_addr, addr_of = collections.defaultdict(list), {}
    nm = subprocess.run(['nm', lib], capture_output=True, text=True).stdout
    for line in nm.splitlines():
        p = line.split()
        if len(p) == 3 and p[1] in 'tTwW':
            by_addr[p[0]].append(p[2].split('@')[0])
            addr_of.setdefault(p[2], p[0])
    where = sections(build)
    hot |= {('', n) for n in where if FAMILIES.match(n)}
    out = set()
    for src, f in hot:
        for n in by_addr.get(addr_of.get(f, ''), [f]):
            files = where.get(n, set())
            if src in files:	# the function of that file only
                out.add((src, n))
            elif len(files) == 1:	# a header's inline copy, an alias: its one file
                out.add((next(iter(files)), n))
            else:		# a name several files have, its file unknown: each
                out |= {(x, n) for x in files}
    print('# The functions a started libodebug runs, "source function" (bench/hot-text.py writes this).')
    for src, n in sorted(out):
        print(src, n)


if __name__ == '__main__':
    main()
