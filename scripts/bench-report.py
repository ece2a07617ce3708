#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""Parse perftest and iperf3 output and summarise make bench's results.

  bench-report.py perftest bw FILE [WINDOW]  print the bandwidth in Gb/s
  bench-report.py perftest rate FILE [WINDOW] print the message rate, Mop/s
  bench-report.py perftest lat FILE          print the latency in usec
  bench-report.py perftest lat_min FILE      print the fastest round
                                             trip's latency (t_min), usec
  bench-report.py iperf3 FILE                print iperf3's received Gb/s
  bench-report.py cmtime STEP FILE...        print cmtime's usec per
                                             connection for STEP (connect,
                                             disconnect), the mean over
                                             the FILEs (equal batches)
  bench-report.py connscale KEY FILE         print xiw-connscale's KEY
                                             (e.g. kmem_per_conn_kib)
  bench-report.py table RESULTS.TSV [DEVS]   print the table of medians
  bench-report.py ab DIR                     compare two trees from the
                                             runs make bench-ab left in
                                             DIR (base-N.tsv, change-N.tsv)

perftest converts its time stamps (TSC cycles) to seconds with a CPU
frequency it estimates at start-up; under emulation that estimate is often
off or fails outright ("Correlation coefficient r^2 < 0.9"), and perftest
then reports 0 Gb/s or an infinite latency. For a duration run (-D D -f M)
pass WINDOW = D - 2*M, the seconds perftest samples between its two
SIGALRMs: the bandwidth is then #bytes * #iterations / WINDOW, from the
wall clock, whatever the calibration did. Without WINDOW it is perftest's
own "BW average". The message rate (atomics, whose 8 bytes make a
bandwidth meaningless) is #iterations / WINDOW likewise, or perftest's
"MsgRate". Latency has no such way out: a failed calibration makes
the run invalid (the harness retries it).

The parsers exit 0 and print a number for a valid result, or exit 1 and
print a reason on stderr: no result line, a zero/non-finite value, or (for
perftest's own figures) the calibration warning.

"table" exits 1 if any run of the xiw device failed, else 0. A run
recorded with status n/a (a test the device cannot run: siw has no
atomics) shows as n/a and is no failure.
"""
import json
import math
import os
import re
import statistics
import sys

# perftest prints "MB/sec" meaning MiB/s.
MIB_PER_S_IN_GBIT = 1024 * 1024 * 8 / 1e9
# Header names that contain a single space; joined so that the header
# splits on white space into one token per column.
JOINED = (("BW peak", "BW_peak"), ("BW average", "BW_average"),
          ("99% percentile", "99%_percentile"),
          ("99.9% percentile", "99.9%_percentile"))
BAD_CLOCK = ("Correlation coefficient", "Conflicting CPU frequency")


class Invalid(Exception):
    """The output holds no trustworthy result."""


def header_tokens(line):
    for spaced, joined in JOINED:
        line = line.replace(spaced, joined)
    return line.split()


def parse_perftest(kind, text, window=None):
    """Gb/s (kind "bw"), millions of messages per second (kind "rate"),
    typical latency in usec (kind "lat") or the lowest (kind "lat_min").

    window: seconds a duration run sampled; the bandwidth is then computed
    from #bytes and #iterations instead of taken from perftest."""
    if window is None:
        for warning in BAD_CLOCK:
            if warning in text:
                raise Invalid("perftest clock calibration failed: " + warning)
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if not line.lstrip().startswith("#bytes"):
            continue
        cols = header_tokens(line)
        if kind == "bw":
            wanted = (("BW_average[Gb/sec]", 1.0),
                      ("BW_average[MB/sec]", MIB_PER_S_IN_GBIT))
        elif kind == "rate":
            wanted = (("MsgRate[Mpps]", 1.0),)
        elif kind == "lat_min":
            wanted = (("t_min[usec]", 1.0),)
        else:
            wanted = (("t_typical[usec]", 1.0), ("t_avg[usec]", 1.0))
        for name, scale in wanted:
            if name in cols:
                col = cols.index(name)
                break
        else:
            continue
        for data in lines[i + 1:]:
            fields = data.split()
            if fields and re.fullmatch(r"\d+", fields[0]):
                if len(fields) <= col:
                    raise Invalid("short result line: " + data.strip())
                try:
                    if window is not None and kind == "rate":
                        value = float(fields[1]) / window / 1e6
                    elif window is not None:
                        value = (float(fields[0]) * float(fields[1]) * 8 /
                                 window / 1e9)
                    else:
                        value = float(fields[col]) * scale
                except ValueError:
                    raise Invalid("bad number in: " + data.strip()) from None
                if not math.isfinite(value) or value <= 0:
                    raise Invalid("result is %s" % fields[col])
                return value
            if data.startswith("---"):
                break
    raise Invalid("no perftest result line")


def parse_iperf3(text):
    """Received throughput in Gb/s from iperf3 -J output."""
    try:
        doc = json.loads(text)
        bps = doc["end"]["sum_received"]["bits_per_second"]
    except (ValueError, KeyError, TypeError):
        raise Invalid("no iperf3 result") from None
    if not math.isfinite(bps) or bps <= 0:
        raise Invalid("iperf3 result is %s" % bps)
    return bps / 1e9


CMTIME_STEPS = ("connect", "disconnect")


def parse_cmtime(step, text):
    """Microseconds per connection that rdmacm-utils' cmtime client
    reports for a step: its last column, the step's wall time over all
    connections divided by their number. cmtime carries on past a failed
    connection and still divides by all of them, so any failure it
    printed makes the run invalid."""
    if step not in CMTIME_STEPS:
        raise Invalid("no cmtime step %r" % step)
    for line in text.splitlines():
        low = line.lower()
        if "fail" in low or "error" in low:
            raise Invalid("cmtime: " + line.strip())
    for line in text.splitlines():
        name, sep, rest = line.partition(":")
        if not sep or name.strip() != step:
            continue
        fields = rest.split()
        try:
            value = float(fields[3])
        except (IndexError, ValueError):
            raise Invalid("cmtime %s line unreadable: %s" %
                          (step, line.strip())) from None
        if not math.isfinite(value) or value <= 0:
            raise Invalid("cmtime %s is %s" % (step, fields[3]))
        return value
    raise Invalid("no cmtime %s line" % step)


CONNSCALE_KEYS = ("slab_per_conn_kib", "vmalloc_per_conn_kib",
                  "kmem_per_conn_kib", "free_per_conn_kib")


def parse_connscale(key, text):
    """A per-connection figure from xiw-connscale's "key value" lines.
    Memory can be given back between two readings (another cache
    shrinking), so zero and negative values are results too; a missing
    or unreadable line is not."""
    if key not in CONNSCALE_KEYS:
        raise Invalid("no connscale key %r" % key)
    for line in text.splitlines():
        fields = line.split()
        if len(fields) == 2 and fields[0] == key:
            try:
                value = float(fields[1])
            except ValueError:
                raise Invalid("connscale %s unreadable: %s" %
                              (key, line.strip())) from None
            if not math.isfinite(value):
                raise Invalid("connscale %s is %s" % (key, fields[1]))
            return value
    raise Invalid("no connscale %s line" % key)


def fmt(value):
    if value is None:
        return "-"
    if value < 0:
        return "-" + fmt(-value)
    if value >= 100:
        return "%.0f" % value
    if value >= 10:
        return "%.1f" % value
    return "%.3g" % value if value < 1 else "%.2f" % value


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def read_results(path):
    """Rows of results.tsv as dicts, in file order."""
    rows = []
    with open(path, encoding="utf-8") as f:
        header = f.readline().rstrip("\n").split("\t")
        for line in f:
            if line.strip():
                rows.append(dict(zip(header, line.rstrip("\n").split("\t"))))
    return rows


def columns(head, body, left):
    """HEAD, a rule and the BODY rows as aligned lines: the first LEFT
    columns to the left, the others to the right."""
    widths = [max(len(str(c)) for c in col) for col in zip(head, *body)]

    def line(cells):
        return "  ".join(
            str(c).ljust(w) if i < left else str(c).rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths))).rstrip()
    return [line(head), line(["-" * w for w in widths])] + \
        [line(c) for c in body]


def table(path, devices=None):
    """The summary table as a list of lines, and whether xiw failed
    (a run of xiw or of xiwnc)."""
    rows = read_results(path)
    tests, units, runs = [], {}, {}
    seen_devices = []
    for r in rows:
        key = (r["test"], r["device"])
        if r["test"] not in tests:
            tests.append(r["test"])
        units[r["test"]] = (r["metric"], r["unit"])
        runs.setdefault(key, []).append(r)
        if r["device"] != "tcp" and r["device"] not in seen_devices:
            seen_devices.append(r["device"])
    devices = devices or seen_devices

    def not_applicable(test, dev):
        rs = runs.get((test, dev), [])
        return bool(rs) and all(r["status"] == "n/a" for r in rs)

    def median(test, dev):
        """(median or None, failed runs, runs)."""
        rs = runs.get((test, dev), [])
        ok = [float(r["value"]) for r in rs if r["status"] == "ok"]
        failed = len(rs) - len(ok)
        if not rs or failed:
            return None, failed, len(rs)
        return statistics.median(ok), 0, len(rs)

    tcp, _, _ = median("tcp", "tcp")
    head = ["test", "unit"] + ["%s" % d for d in devices]
    # Each xiw configuration against siw: xiw (defaults, CRC on) and
    # xiwnc (xiw with MPA CRC off, siw's own default) against siw, and
    # like for like with CRC on, xiw against siwcrc (siw built with MPA
    # CRC required).
    ratios = [(a, b) for a, b in (("xiw", "siw"), ("xiwnc", "siw"),
                                  ("xiw", "siwcrc"))
              if a in devices and b in devices]
    head += ["%s/%s" % r for r in ratios]
    head += ["%s/TCP" % d for d in devices]
    body, notes = [], []
    xiw_failed = False
    for test in tests:
        if test == "tcp":
            continue
        metric, unit = units[test]
        meds = {}
        cells = [test, unit]
        for d in devices:
            m, failed, n = median(test, d)
            meds[d] = m
            if not_applicable(test, d):
                cells.append("n/a")
            elif failed or n == 0:
                cells.append("fail")
                notes.append("%s %s: %s" % (
                    d, test, "no run" if n == 0 else
                    "%d of %d runs failed" % (failed, n)))
                if d in ("xiw", "xiwnc"):
                    xiw_failed = True
            else:
                cells.append(fmt(m))
        for a, b in ratios:
            cells.append(fmt(ratio(meds[a], meds[b])))
        for d in devices:
            cells.append(fmt(ratio(meds[d], tcp)) if metric == "bw" else "-")
        body.append(cells)
    if "tcp" in tests:
        m, failed, n = median("tcp", "tcp")
        cells = ["tcp (iperf3)", "Gb/s", "fail" if failed or not n else fmt(m)]
        if failed or not n:
            notes.append("tcp: %s" % ("no run" if not n else
                                      "%d of %d runs failed" % (failed, n)))
        cells += [""] * (len(head) - len(cells))
        body.append(cells)

    nruns = max((len(v) for v in runs.values()), default=0)
    out = ["make bench: medians of %d run(s) each, same guest, TCG" % nruns,
           "bandwidth (*_bw, tcp) in Gb/s, higher is better: a ratio > 1"
           " means the first device is faster;",
           "message rate (*_rate) in Mop/s, higher is better;",
           "latency (*_lat) in usec, lower is better: xiw/siw < 1 means xiw"
           " is faster (the /TCP columns apply to bandwidth only);",
           "*_lat_min: the same runs' fastest round trip (perftest's"
           " t_min), steadier than the typical one on a noisy host;",
           "connections (cm_*) in usec per connection (cmtime), lower is"
           " better;",
           "kernel memory (conn_*) in KiB per idle connection, both ends"
           " (xiw-connscale), lower is better;",
           "*_qN: N QPs at once, their bandwidths added.",
           "fail: at least one run failed or timed out (never a number);"
           " n/a: the device cannot run it.",
           ""]
    out += columns(head, body, 1)
    if notes:
        out.append("")
        out += ["note: " + n for n in notes]
    return out, xiw_failed


# Each xiw configuration against the siw with the same CRC setting, then
# xiw's default against siw's.
AB_PAIRS = (("xiwnc", "siw"), ("xiw", "siwcrc"), ("xiw", "siw"))
AB_SIDES = ("base", "change")


def ab(directory):
    """Two trees compared from make bench-ab's runs in DIRECTORY: every
    base-N.tsv and change-N.tsv there. For each test, each device's
    median over every round of a side, and each xiw configuration's
    ratio to its siw taken round by round (the same guest, the same
    minute: the host's drift cancels) and then the median of those.
    change/base compares the sides. Returns (lines, ok): ok is false if
    a side has no run or any run of xiw or xiwnc failed."""
    # (file, round) -> test -> device -> value, for each side
    rounds = {side: {} for side in AB_SIDES}
    files = {side: 0 for side in AB_SIDES}
    tests, units = [], {}
    failed = []
    # iperf3 over the guest's loopback, each side's: how fast the host
    # ran, which the ratios cancel and the device rows do not.
    tcp = {side: [] for side in AB_SIDES}
    tcp_failed = []
    for name in sorted(os.listdir(directory)):
        m = re.fullmatch(r"(base|change)-(\d+)\.tsv", name)
        if not m:
            continue
        side = m.group(1)
        files[side] += 1
        for r in read_results(os.path.join(directory, name)):
            if r["test"] == "tcp":
                if r["status"] == "ok":
                    tcp[side].append(float(r["value"]))
                else:
                    tcp_failed.append("%s round %s" % (name, r["round"]))
                continue
            if r["test"] not in tests:
                tests.append(r["test"])
            units[r["test"]] = r["unit"]
            if r["status"] != "ok":
                if r["status"] != "n/a" and r["device"] in ("xiw", "xiwnc"):
                    failed.append("%s %s %s round %s" % (
                        name, r["device"], r["test"], r["round"]))
                continue
            key = (name, r["round"])
            rounds[side].setdefault(key, {}).setdefault(
                r["test"], {})[r["device"]] = float(r["value"])

    def values(side, test, dev):
        return [v[test][dev] for v in rounds[side].values()
                if dev in v.get(test, {})]

    def ratios(side, test, a, b):
        return [v[test][a] / v[test][b] for v in rounds[side].values()
                if a in v.get(test, {}) and b in v.get(test, {}) and
                v[test][b] > 0]

    def med(xs):
        return statistics.median(xs) if xs else None

    def spread(v):
        """Each side's median [lowest-highest] of v (a list of values per
        side), then change/base."""
        m = [med(x) for x in v]
        return (["%s [%s-%s]" % (fmt(mm), fmt(min(x)), fmt(max(x)))
                 if x else "-" for mm, x in zip(m, v)] +
                [fmt(ratio(m[1], m[0]))])

    devices = [d for d in ("xiw", "xiwnc", "siw", "siwcrc")
               if any(values(s, t, d) for s in AB_SIDES for t in tests)]
    pairs = [p for p in AB_PAIRS if p[0] in devices and p[1] in devices]
    head = ["test", "unit", "what", "base", "change", "change/base"]
    body = []
    for test in tests:
        for a, b in pairs:
            r = [ratios(s, test, a, b) for s in AB_SIDES]
            if not any(r):
                continue
            m = [med(x) for x in r]
            body.append([test, "ratio", "%s/%s" % (a, b)] +
                        ["%s (%d)" % (fmt(v), len(x)) if x else "-"
                         for v, x in zip(m, r)] + [fmt(ratio(m[1], m[0]))])
        for d in devices:
            v = [values(s, test, d) for s in AB_SIDES]
            if any(v):
                body.append([test, units[test], d] + spread(v))
    if any(tcp.values()):
        body.append(["tcp", "Gb/s", "iperf3"] + spread(list(tcp.values())))
    out = ["make bench-ab: %d run(s) of the base tree, %d of the change,"
           " alternately" % (files["base"], files["change"]),
           "ratio rows: the median of the rounds' own ratios (their count"
           " in brackets);",
           "device rows: the median over every round [lowest-highest];",
           "tcp: iperf3 in the same guests, the host's speed on each"
           " side;",
           "change/base > 1 means the change measured more: better for"
           " bandwidth and rate, worse for latency, connection time and"
           " memory.",
           ""]
    out += columns(head, body, 3)
    ok = not failed and all(files.values())
    for side in AB_SIDES:
        if not files[side]:
            out.append("note: no %s-N.tsv in %s" % (side, directory))
    out += ["note: failed: " + f for f in failed]
    out += ["note: tcp (iperf3) failed: " + f for f in tcp_failed]
    return out, ok


def main(argv):
    try:
        if (len(argv) in (4, 5) and argv[1] == "perftest" and
                argv[2] in ("bw", "rate", "lat", "lat_min")):
            window = float(argv[4]) if len(argv) == 5 else None
            if window is not None and (argv[2].startswith("lat") or
                                       window <= 0):
                raise Invalid("WINDOW is for bandwidth and rate, in"
                              " seconds > 0")
            with open(argv[3], encoding="utf-8", errors="replace") as f:
                print("%.6g" % parse_perftest(argv[2], f.read(), window))
            return 0
        if len(argv) >= 4 and argv[1] == "cmtime":
            values = []
            for path in argv[3:]:
                with open(path, encoding="utf-8", errors="replace") as f:
                    values.append(parse_cmtime(argv[2], f.read()))
            print("%.6g" % statistics.mean(values))
            return 0
        if len(argv) == 4 and argv[1] == "connscale":
            with open(argv[3], encoding="utf-8", errors="replace") as f:
                print("%.6g" % parse_connscale(argv[2], f.read()))
            return 0
        if len(argv) == 3 and argv[1] == "iperf3":
            with open(argv[2], encoding="utf-8", errors="replace") as f:
                print("%.6g" % parse_iperf3(f.read()))
            return 0
    except (Invalid, OSError) as e:
        print(e, file=sys.stderr)
        return 1
    if len(argv) in (3, 4) and argv[1] == "table":
        devices = argv[3].split() if len(argv) == 4 else None
        lines, xiw_failed = table(argv[2], devices)
        print("\n".join(lines))
        return 1 if xiw_failed else 0
    if len(argv) == 3 and argv[1] == "ab":
        try:
            lines, ok = ab(argv[2])
        except OSError as e:
            print(e, file=sys.stderr)
            return 1
        print("\n".join(lines))
        return 0 if ok else 1
    print(__doc__.strip(), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
