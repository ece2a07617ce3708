#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""What one iteration of each latency program cost the guest kernel, xiw0
against siw0, from the snapshots of scripts/tcg-prof.sh's plugin.

    scripts/tcg-prof-report.py DIR [TOP]

For each program and device: (counts at post-N2 - pre-N2) - (counts at
post-N1 - pre-N1), divided by N2 - N1 (DIR/done names them; DIR/setup
the QP count and CRC setting, if not one QP with CRC off). Kernel
addresses are named from DIR/kallsyms. Left out of the kernel's totals,
and shown apart: the system-call entry and gettimeofday path (perftest
calibrates its clock by calling gettimeofday for a fixed time, so their
count varies from run to run), the timer tick (which grows with
elapsed time, not with work) and spin-waits (a vCPU waiting in a lock's
slow path for the other one to let go: under emulation they count time,
not work). For cmtime, whose client asks for two more snapshots
(mid-* and end-*, scripts/tcg-prof/cmtime-steps.c), the connect step
(pre to mid) and the disconnect step (mid to end) are reported apart
too. For a latency program whose N2 run left the snapshots around its
steady window (from-* and to-*, scripts/tcg-prof/lat-window.c), that
window is reported too, per round trip, with nothing subtracted: no
start-up, connection or exit in it. Exit status 1 if a snapshot is
missing.

User space: where the guest left DIR/DEV-PROG-N.maps (the server's
/proc/PID/maps, address-space randomisation off, so that server and
client map every object at the same address), user instructions are
split by object (the provider, libibverbs, the program, libc, the rest)
and the provider's functions named. A user block that ran more than
BUSY times per iteration is counted as busy polling, apart from the work:
in a latency program each end polls its CQ or buffer hundreds of times
per round trip, for as long as the other end takes, and so the count
grows with time, not with work; no block of the work itself runs that
often in one round trip (a non-empty poll's share of the loop's blocks
is counted with the polling, a few dozen instructions).
"""
import bisect
import collections
import os
import re
import subprocess
import sys

KERNEL = 0xffff800000000000
BUSY = 16   # runs per iteration above which a user block is polling
HERE = os.path.dirname(os.path.abspath(__file__))
KINDS = ('irq-enables', 'clis', 'locked')   # the plugin's columns 4-6
NCOLS = 3 + len(KINDS)
# perftest's clock calibration: syscalls and the clock they read
NOISE = re.compile(r'^(entry_SYSCALL_64\w*|do_syscall_64|x64_sys_call|'
                   r'syscall_\w+|(arch_)?exit_to_user_mode\w*|'
                   r'fpregs_assert_state_consistent|__put_user_(nocheck_)?8|'
                   r'__x64_sys_gettimeofday|ktime_get_real_ts64|read_hpet|'
                   r'read_tsc|__x64_sys_clock_gettime|put_timespec64)$')
# a vCPU spinning until the other one lets go: functions whose
# instructions are almost all the wait (the slow paths of queued
# spinlocks and rwlocks, a mutex's optimistic spinning)
SPIN = re.compile(r'^(native_queued_spin_lock_slowpath|queued_(read|write)_'
                  r'lock_slowpath|__pv_queued_spin_lock_slowpath|'
                  r'mutex_spin_on_owner|osq_lock)$')
# the groups kept out of the kernel's work (group() names them)
NOT_WORK = ('syscall/clock', 'tick', 'spin')
TICK = re.compile(r'(apic_timer|hrtimer|^tick_|_tick$|_tick_|'
                  r'update_process_times|clockevents|lapic_next|'
                  r'^irq_enter|^irq_exit|rcu_sched_clock|^account_|'
                  r'trigger_load_balance|run_local_timers|calc_global_load|'
                  r'timekeeping|update_wall_time|update_vsyscall|'
                  r'sysvec_|^handle_irq|^irq_work)')


class Symbols:
    def __init__(self, path):
        syms = []
        with open(path) as f:
            for line in f:
                p = line.split()
                if len(p) < 3 or p[1] not in 'tTwW':
                    continue
                a = int(p[0], 16)
                if a:
                    syms.append((a, p[2] + (' ' + p[3] if len(p) > 3 else '')))
        syms.sort()
        self.addrs = [a for a, _ in syms]
        self.names = [n for _, n in syms]

    def name(self, va):
        """The function at va, and whether va is its first byte."""
        i = bisect.bisect_right(self.addrs, va) - 1
        if i < 0:
            return '?', False
        return self.names[i], self.addrs[i] == va


def group(name):
    fn = name.split(' ')[0]
    if NOISE.match(fn):
        return 'syscall/clock'
    if SPIN.match(fn):
        return 'spin'
    if TICK.search(fn):
        return 'tick'
    return name[name.index('['):] if '[' in name else 'kernel'


def load(path):
    blocks = {}
    with open(path) as f:
        for line in f:
            p = line.rstrip('\n').split('\t')
            if len(p) != NCOLS:
                raise ValueError('%s: bad line %r' % (path, line))
            v = [int(x) for x in p[1:]]
            blocks[(int(p[0], 16), v[0])] = v[1:]
    return blocks


def window(d, syms, name, first='pre', last='post'):
    """Per-symbol sums over the blocks run between FIRST-NAME and
    LAST-NAME."""
    pre = load(os.path.join(d, 'snap-%s-%s.tsv' % (first, name)))
    post = load(os.path.join(d, 'snap-%s-%s.tsv' % (last, name)))
    # per symbol: instructions, block runs, calls (runs of its first
    # block), then each of KINDS
    sums = collections.defaultdict(lambda: [0.0] * NCOLS)
    user = {}
    for (va, insns), v in post.items():
        runs = v[0] - pre.get((va, insns), [0])[0]
        if runs <= 0:
            continue
        if va < KERNEL:
            user[(va, insns)] = runs
            continue
        sym, entry = syms.name(va)
        s = sums[sym]
        s[0] += runs * insns
        s[1] += runs
        s[2] += runs if entry else 0
        for k in range(len(KINDS)):
            s[3 + k] += runs * v[1 + k]
    return sums, user


def per_iteration(d, syms, dev, prog, n1, n2, first='pre', last='post'):
    a, ua = window(d, syms, '%s-%s-%d' % (dev, prog, n1), first, last)
    b, ub = window(d, syms, '%s-%s-%d' % (dev, prog, n2), first, last)
    n = n2 - n1
    out = {}
    for sym in set(a) | set(b):
        x = b.get(sym, [0.0] * NCOLS)
        y = a.get(sym, [0.0] * NCOLS)
        out[sym] = [(p - q) / n for p, q in zip(x, y)]
    user = {k: (ub.get(k, 0) - ua.get(k, 0)) / n for k in set(ua) | set(ub)}
    return out, user


def steady(d, syms, dev, prog, n1, n2):
    """The N2 run's window between its client's doorbells N1 and N2
    (from-* and to-*, scripts/tcg-prof/lat-window.c), per round trip."""
    a, ua = window(d, syms, '%s-%s-%d' % (dev, prog, n2), 'from', 'to')
    n = n2 - n1
    return ({sym: [x / n for x in v] for sym, v in a.items()},
            {k: r / n for k, r in ua.items()})


def snapshots_present(d, prog, whats, runs, what_for):
    """Whether both devices' runs of prog (iteration counts runs) left a
    snapshot for each of whats; a note on stderr if some did and not
    others."""
    have = [os.path.exists(os.path.join(d, 'snap-%s-%s-%s-%d.tsv' %
                                        (w, dev, prog, n)))
            for w in whats for dev in ('xiw0', 'siw0') for n in runs]
    if any(have) and not all(have):
        print('tcg-prof-report: %s: %s incomplete, not reported' %
              (prog, what_for), file=sys.stderr)
    return all(have)


def has_window(d, prog, n2):
    """Whether both devices' N2 runs of a latency program left the steady
    window's snapshots."""
    return prog != 'cmtime' and snapshots_present(
        d, prog, ('from', 'to'), (n2,), 'steady window')


class Maps:
    """A process's executable mappings (/proc/PID/maps): which object a
    user address is in, and the function, from the object's own symbols
    where the file can be read here (the guest's root is this machine's;
    what the guest installed into its overlay, the provider, is looked
    for in build/userspace/)."""

    def __init__(self, path):
        self.ranges = []
        with open(path) as f:
            for line in f:
                p = line.split()
                if len(p) < 5 or 'x' not in p[1]:
                    continue
                start, end = (int(x, 16) for x in p[0].split('-'))
                name = p[5] if len(p) > 5 else '[anon]'
                self.ranges.append((start, end, int(p[2], 16), name))
        self.ranges.sort()
        self.starts = [r[0] for r in self.ranges]
        self.syms = {}

    def find(self, va):
        """(object path, offset in the file), or ('?', va)."""
        i = bisect.bisect_right(self.starts, va) - 1
        if i >= 0 and va < self.ranges[i][1]:
            start, _, off, name = self.ranges[i]
            return name, va - start + off
        return '?', va

    def function(self, name, off):
        if name not in self.syms:
            self.syms[name] = elf_functions(name)
        addrs, names = self.syms[name]
        i = bisect.bisect_right(addrs, off) - 1
        return names[i] if i >= 0 else '+%#x' % off


def elf_functions(path):
    """A file's functions by file offset (its LOAD segments map offsets
    to addresses), from nm; none if the file or nm is not there."""
    local = os.path.join(os.path.dirname(HERE), 'build', 'userspace',
                         os.path.basename(path))
    if not os.path.exists(path):
        path = local
    try:
        segs = []
        ph = subprocess.run(['readelf', '-lW', path], capture_output=True,
                            text=True, check=True).stdout
        for line in ph.splitlines():
            p = line.split()
            if p and p[0] == 'LOAD':
                segs.append((int(p[1], 16), int(p[2], 16), int(p[4], 16)))
        syms = []
        for opt in ([], ['-D']):
            nm = subprocess.run(['nm', '-C', '--defined-only'] + opt +
                                [path], capture_output=True, text=True)
            for line in nm.stdout.splitlines():
                p = line.split(None, 2)
                if len(p) == 3 and p[1] in 'tTwWiu':
                    syms.append((int(p[0], 16), p[2]))
            if syms:
                break
    except (OSError, subprocess.CalledProcessError, ValueError):
        return [], []
    out = []
    for va, name in syms:
        for off, vaddr, size in segs:
            if vaddr <= va < vaddr + size:
                out.append((va - vaddr + off, name))
                break
    out.sort()
    return [a for a, _ in out], [n for _, n in out]


def user_kind(name, prog):
    base = os.path.basename(name)
    if base.startswith(('libxiw-', 'libsiw-')):
        return 'provider'
    if base.startswith('libibverbs'):
        return 'libibverbs'
    if base == prog:
        return 'program'
    if base.startswith('libc.so'):
        return 'libc'
    return 'other'


def user_split(blocks, maps, prog):
    """Per-iteration user instructions by kind of object (busy polling
    apart), and the provider's by function."""
    kinds = collections.Counter()
    funcs = collections.Counter()
    for (va, insns), runs in blocks.items():
        if runs > BUSY:
            kinds['busy polling'] += runs * insns
            continue
        name, off = maps.find(va)
        kind = user_kind(name, prog)
        kinds[kind] += runs * insns
        if kind == 'provider':
            funcs[maps.function(name, off)] += runs * insns
    return kinds, funcs


def totals(per):
    t = collections.Counter()
    for sym, v in per.items():
        g = group(sym)
        key = 'work' if g not in NOT_WORK else g
        t[key + ' insns'] += v[0]
        if key == 'work':
            t['blocks'] += v[1]
            for k, name in enumerate(KINDS):
                t[name] += v[3 + k]
            if g.startswith('['):
                t['driver ' + g] += v[0]
    t['context switches'] = per.get('__schedule', [0] * NCOLS)[2]
    t['work items'] = per.get('process_one_work', [0] * NCOLS)[2]
    return t


def read_setup(path):
    """The QP count and CRC setting the guest ran with (DIR/setup, "qps=N
    crc=0|1"); one QP and CRC off where a run from before the file
    existed left none."""
    qps, crc = 1, 0
    try:
        with open(path) as f:
            text = f.read()
    except FileNotFoundError:
        return qps, crc
    for field in text.split():
        key, _, value = field.partition('=')
        if key == 'qps':
            qps = int(value)
        elif key == 'crc':
            crc = int(value)
        else:
            raise ValueError('setup: unknown field %r' % field)
    if qps < 1 or crc not in (0, 1):
        raise ValueError('setup: %r' % text.strip())
    return qps, crc


STEPS = (('connect step', 'pre', 'mid'), ('disconnect step', 'mid', 'end'))
WINDOW = 'steady window, client doorbells'


def has_steps(d, prog, n1, n2):
    """Whether cmtime's client left the snapshots around its steps."""
    return prog == 'cmtime' and snapshots_present(
        d, prog, ('mid', 'end'), (n1, n2), 'step snapshots')


USER_KINDS = ('provider', 'libibverbs', 'program', 'libc', 'other',
              'busy polling')


def user_section(prog, ux, us, mx, ms, top):
    """User instructions per iteration by object, and the providers'
    functions, xiw0's beside siw0's."""
    a, fa = user_split(ux, mx, prog)
    b, fb = user_split(us, ms, prog)
    print('  user, by object (polling: blocks run over %d times per'
          ' iteration):' % BUSY)
    for key in USER_KINDS:
        ratio = '%.2f' % (a[key] / b[key]) if b[key] >= 0.5 else '-'
        print('    %-24s %10.1f %10.1f %7s' % (key, a[key], b[key], ratio))
    work = [sum(k[key] for key in USER_KINDS[:-1]) for k in (a, b)]
    ratio = '%.2f' % (work[0] / work[1]) if work[1] >= 0.5 else '-'
    print('    %-24s %10.1f %10.1f %7s' % ('user work', work[0], work[1],
                                          ratio))
    for dev, f in (('xiw0', fa), ('siw0', fb)):
        print('  %s provider functions (instructions):' % dev)
        for name, n in f.most_common(top // 3):
            print('    %-56s %8.1f' % (name[:56], n))


def section(title, rx, rs, top, maps=None):
    """One table: xiw0's and siw0's per-iteration counts side by side."""
    tx, ubx = rx
    ts, ubs = rs
    ux = sum(k[1] * r for k, r in ubx.items())
    us = sum(k[1] * r for k, r in ubs.items())
    a, b = totals(tx), totals(ts)
    a['driver'] = a['driver [xiw]']
    b['driver'] = b['driver [siw]']
    print('\n%s\n%s' % (title, '-' * len(title)))
    print('  %-26s %10s %10s %7s' % ('', 'xiw0', 'siw0', 'xiw/siw'))
    for key in ('work insns', 'driver', 'blocks') + KINDS + (
            'context switches', 'work items', 'syscall/clock insns',
            'tick insns', 'spin insns'):
        ratio = '%.2f' % (a[key] / b[key]) if b[key] >= 0.5 else '-'
        print('  %-26s %10.1f %10.1f %7s' % (key, a[key], b[key], ratio))
    print('  %-26s %10.0f %10.0f   (busy polling: grows with time)' %
          ('user insns', ux, us))
    if maps:
        user_section(title.split(',')[0], ubx, ubs, maps[0], maps[1], top)
    syms = [s for s in set(tx) | set(ts)
            if group(s) not in NOT_WORK]
    syms.sort(key=lambda s: -abs(tx.get(s, [0])[0] - ts.get(s, [0])[0]))
    print('  largest differences (instructions; calls):')
    for s in syms[:top]:
        x, y = tx.get(s, [0.0] * NCOLS), ts.get(s, [0.0] * NCOLS)
        print('    %-44s %8.0f %8.0f  %6.1f %6.1f' %
              (s[:44], x[0], y[0], x[2], y[2]))


def main_args(args):
    if len(args) not in (1, 2):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    d = args[0]
    top = int(args[1]) if len(args) == 2 else 25
    try:
        with open(os.path.join(d, 'done')) as f:
            fields = f.read().split()
        n1, n2, size, progs = int(fields[0]), int(fields[1]), fields[2], fields[3:]
        qps, crc = read_setup(os.path.join(d, 'setup'))
        syms = Symbols(os.path.join(d, 'kallsyms'))
        res = {(dev, p, ''): per_iteration(d, syms, dev, p, n1, n2)
               for p in progs for dev in ('xiw0', 'siw0')}
        for p in progs:
            if has_window(d, p, n2):
                for dev in ('xiw0', 'siw0'):
                    res[(dev, p, WINDOW)] = steady(d, syms, dev, p, n1, n2)
            if not has_steps(d, p, n1, n2):
                continue
            for title, first, last in STEPS:
                for dev in ('xiw0', 'siw0'):
                    res[(dev, p, title)] = per_iteration(
                        d, syms, dev, p, n1, n2, first, last)
    except (OSError, ValueError, IndexError) as e:
        print('tcg-prof-report: %s' % e, file=sys.stderr)
        return 1
    print('Per iteration (both ends in the guest: a round trip of %s bytes,'
          ' or for cmtime a connection made and torn down), %d - %d'
          ' iterations; kernel unless said.' % (size, n2, n1))
    if qps > 1:
        print('%d QPs per run: an iteration is one message on each.' % qps)
    if crc:
        print('MPA CRC on at both ends (siw0 from the build that requires'
              ' it).')
    for p in progs:
        paths = [os.path.join(d, '%s-%s-%d.maps' % (dev, p, n2))
                 for dev in ('xiw0', 'siw0')]
        maps = None
        if all(os.path.exists(m) for m in paths):
            try:
                maps = [Maps(m) for m in paths]
            except (OSError, ValueError) as e:
                print('tcg-prof-report: %s' % e, file=sys.stderr)
                return 1
        section(p, res[('xiw0', p, '')], res[('siw0', p, '')], top, maps)
        if ('xiw0', p, WINDOW) in res:
            section('%s, %s %d to %d' % (p, WINDOW, n1, n2),
                    res[('xiw0', p, WINDOW)], res[('siw0', p, WINDOW)], top,
                    maps)
        for title, _, _ in STEPS:
            if ('xiw0', p, title) in res:
                section('%s, %s' % (p, title), res[('xiw0', p, title)],
                        res[('siw0', p, title)], top)
    return 0


if __name__ == '__main__':
    sys.exit(main_args(sys.argv[1:]))
