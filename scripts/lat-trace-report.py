#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""make lat-trace's report: where one latency round trip's time goes.

Reads the ftrace text dumps scripts/guest/lat-trace.sh leaves in DIR
(trace-PROG-DEV-ROUND.txt: function entries at a few points of the
path, and write() entry and exit) and cuts each message's way from the
sender's doorbell to the peer's next doorbell into segments:

  enter   the sender's write() (the provider's doorbell) enters the kernel
  post    the driver's post_send
  xmit    TCP transmits the first segment (__tcp_transmit_skb)
  rcv     TCP receives it (tcp_v4_rcv)
  ready   the driver's data_ready callback
  rcqe    the receive completion is written (Send)
  exit    the requester's write() returns (Read: the response is queued)
  scqe    the Read's completion is written (Read)
  next    the next doorbell: the peer's (Send, Write) or, for a Read,
          the requester's own next one

Prints, per program and segment, each device's median over all rounds
and its mean over the middle 80 per cent (the trace shows whole
microseconds; the mean of many resolves finer, and leaves out the
stalls of a descheduled vCPU), in microseconds, and xiw's minus siw's
mean.

This host runs a guest at two speeds, a round trip near 21 to 27 us or
near 40 to 60 (performance.rst, twentieth and thirty-third runs), and
whichever device's rounds fall in the slow one look slower in every
segment. So for each program run on both devices a second table keeps
only the messages whose TCP segments (xmit > rcv, rcv > ready: the same
code under both drivers) took together at most the lower quartile of
both devices' messages pooled, and gives their middle means: the two
devices compared in the same state of the host.

  python3 scripts/lat-trace-report.py DIR
"""
import collections
import os
import re
import statistics
import sys

LINE = re.compile(r'^\s*(.+)-(\d+)\s+\[(\d+)\]\s+(\S+)\s+([\d.]+):\s+(.*)$')

# Function (and caller) to the point of the path it marks.
POINTS = {
    'xiw_post_send': 'post', 'siw_post_send': 'post',
    '__tcp_transmit_skb': 'xmit',
    'tcp_v4_rcv': 'rcv',
    'xiw_sk_data_ready': 'ready', 'siw_qp_llp_data_ready': 'ready',
    'siw_rqe_complete': 'rcqe', 'siw_sqe_complete': 'scqe',
}

# The points one message passes, after its doorbell's enter; and
# whether the next doorbell is the same process's (a Read's requester).
CHAINS = {
    'ib_send_lat': (['post', 'xmit', 'rcv', 'ready', 'rcqe'], False),
    'ib_write_lat': (['post', 'xmit', 'rcv', 'ready'], False),
    'ib_read_lat': (['post', 'xmit', 'rcv', 'ready', 'exit', 'xmit',
                     'rcv', 'ready', 'scqe'], True),
}

# The first tenth of each run's messages is left out: start-up.
WARMUP = 10


def point(rest):
    """The path point a trace line's text marks, or None."""
    if rest.startswith('sys_enter:'):
        return 'enter'
    if rest.startswith('sys_exit:'):
        return 'exit'
    words = rest.split()
    fn = words[0]
    if fn == 'xiw_cq_add':
        caller = words[-1] if len(words) > 1 else ''
        if 'rx_complete' in caller:
            return 'rcqe'
        if 'sq_retire' in caller:
            return 'scqe'
        return None
    return POINTS.get(fn)


def load(path):
    """[(usec, pid, point)] in trace order."""
    ev = []
    with open(path) as f:
        for line in f:
            m = LINE.match(line)
            if not m:
                continue
            p = point(m.group(6))
            if p:
                ev.append((float(m.group(5)) * 1e6, int(m.group(2)), p))
    return ev


def segments(ev, chain, same):
    """Per message, the time between consecutive points, and the total."""
    posters = {pid for _, pid, p in ev if p == 'post'}
    starts = [k for k, e in enumerate(ev)
              if e[2] == 'enter' and e[1] in posters]
    out = []
    for k in starts[len(starts) // WARMUP:]:
        t0, pid, _ = ev[k]
        ts = [t0]
        j = k + 1
        for want in chain:
            while j < len(ev) and ev[j][2] != want:
                j += 1
            if j == len(ev):
                return out
            ts.append(ev[j][0])
            j += 1
        while j < len(ev) and not (ev[j][2] == 'enter' and
                                   ev[j][1] in posters and
                                   (same or ev[j][1] != pid)):
            j += 1
        if j == len(ev):
            return out
        ts.append(ev[j][0])
        out.append([b - a for a, b in zip(ts, ts[1:])] + [ts[-1] - t0])
    return out


# The pooled quantile of the TCP segments' sum a message may take to be
# counted in the fast-state table, and the fewest messages per device
# that table needs.
FAST_QUANTILE = 0.25
FAST_MIN = 20
TCP_SEGMENTS = ('xmit > rcv', 'rcv > ready')


def fast_rows(rows_by_dev, labels):
    """The rows (per device) whose TCP segments' sum is at most the lower
    quartile of all devices' rows pooled, and that bound."""
    idx = [i for i, l in enumerate(labels) if l in TCP_SEGMENTS]
    tcp = {dv: [sum(r[i] for i in idx) for r in rows]
           for dv, rows in rows_by_dev.items()}
    pooled = sorted(x for xs in tcp.values() for x in xs)
    bound = pooled[int(len(pooled) * FAST_QUANTILE)]
    return ({dv: [r for r, t in zip(rows_by_dev[dv], tcp[dv]) if t <= bound]
             for dv in rows_by_dev}, bound)


def mid_mean(xs):
    """Mean of the middle 80 per cent."""
    xs = sorted(xs)
    cut = len(xs) // 10
    return statistics.mean(xs[cut:len(xs) - cut] or xs)


def report(d, out=sys.stdout):
    """Print the table for every trace in d; returns how many were read."""
    runs = collections.defaultdict(list)	# (prog, dev) -> segment rows
    name = re.compile(r'^trace-(ib_\w+_lat)-(\w+)-(\d+)\.txt$')
    for f in sorted(os.listdir(d)):
        m = name.match(f)
        if not m or m.group(1) not in CHAINS:
            continue
        chain, same = CHAINS[m.group(1)]
        runs[(m.group(1), m.group(2))] += segments(
            load(os.path.join(d, f)), chain, same)
    runs = {k: v for k, v in runs.items() if v}
    if not runs:
        return 0
    progs = [p for p in CHAINS if any(k[0] == p for k in runs)]
    for prog in progs:
        chain, _ = CHAINS[prog]
        devs = sorted(dev for p, dev in runs if p == prog)
        names = ['enter'] + chain + ['next']
        labels = ['%s > %s' % (a, b) for a, b in zip(names, names[1:])]
        labels.append('total')
        print('%s (usec per message, median / middle mean; n = %s)' % (
            prog, ', '.join('%s %d' % (dv, len(runs[(prog, dv)]))
                            for dv in devs)), file=out)
        print('  %-16s' % 'segment' + ''.join('%14s' % dv for dv in devs) +
              ('%11s' % 'xiw - siw' if {'xiw0', 'siw0'} <= set(devs)
               else ''), file=out)
        for i, label in enumerate(labels):
            med, mm = {}, {}
            for dv in devs:
                col = [r[i] for r in runs[(prog, dv)]]
                med[dv] = statistics.median(col)
                mm[dv] = mid_mean(col)
            line = '  %-16s' % label + ''.join(
                '%7.1f /%5.1f' % (med[dv], mm[dv]) for dv in devs)
            if 'xiw0' in mm and 'siw0' in mm:
                line += '%+11.1f' % (mm['xiw0'] - mm['siw0'])
            print(line, file=out)
        if {'xiw0', 'siw0'} <= set(devs):
            fast_table(prog, {dv: runs[(prog, dv)] for dv in devs}, labels,
                       out)
        print(file=out)
    return len(runs)


def fast_table(prog, rows_by_dev, labels, out):
    """The middle means over the messages of the host's fast state."""
    fast, bound = fast_rows(rows_by_dev, labels)
    devs = sorted(fast)
    if any(len(fast[dv]) < FAST_MIN for dv in devs):
        print('  (too few messages in the fast state to compare: %s)' %
              ', '.join('%s %d' % (dv, len(fast[dv])) for dv in devs),
              file=out)
        return
    print('  %s, messages whose TCP segments took at most %.1f us'
          ' (middle mean; n = %s)' % (
              prog, bound, ', '.join('%s %d' % (dv, len(fast[dv]))
                                     for dv in devs)), file=out)
    for i, label in enumerate(labels):
        mm = {dv: mid_mean([r[i] for r in fast[dv]]) for dv in devs}
        print('  %-16s' % label +
              ''.join('%14.2f' % mm[dv] for dv in devs) +
              '%+11.2f' % (mm['xiw0'] - mm['siw0']), file=out)


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    if not report(sys.argv[1]):
        print('lat-trace-report: no trace-*.txt with messages in %s' %
              sys.argv[1], file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
