#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""Tests for bench-report.py: python3 scripts/bench-report-test.py"""
import contextlib
import importlib.util
import io
import os
import tempfile
import unittest

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "bench_report", os.path.join(here, "bench-report.py"))
br = importlib.util.module_from_spec(spec)
spec.loader.exec_module(br)

SEP = "-" * 87
# Result blocks as perftest 4.5 (Debian 12) prints them.
BW_GBIT = f"""{SEP}
                    RDMA_Write BW Test
 Device         : siw0
{SEP}
 #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]
 65536      608              0.00               0.16   \t\t   0.000304
{SEP}
"""
BW_MIB = f"""{SEP}
 #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]
 65536      1000             0.00               100.00 \t\t   0.001600
{SEP}
"""
BAD_CLOCK = "Correlation coefficient r^2: 0.670526 < 0.9\n" + f"""{SEP}
 #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]
 65536      1659           0.000000            0.000000            0.000000
{SEP}
"""
LAT = f"""{SEP}
 #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    \
t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] 
 64      2000          164.19         17294.68      269.62   \t       \
1180.25     \t2276.25\t\t9424.52 \t\t16198.03
{SEP}
"""
LAT_INF = LAT.replace("269.62", "inf")
CM_FAIL = """Received 10 times ADDR_ERROR
 Unable to perform rdma_client function
 Unable to init the socket connection
"""


class Perftest(unittest.TestCase):
    def test_bw_gbits(self):
        self.assertAlmostEqual(br.parse_perftest("bw", BW_GBIT), 0.16)

    def test_bw_mib_converted(self):
        self.assertAlmostEqual(br.parse_perftest("bw", BW_MIB),
                               100 * 1048576 * 8 / 1e9)

    def test_bad_clock_is_invalid(self):
        with self.assertRaises(br.Invalid):
            br.parse_perftest("bw", BAD_CLOCK)

    def test_zero_is_invalid(self):
        text = BAD_CLOCK.split("\n", 1)[1]
        with self.assertRaises(br.Invalid):
            br.parse_perftest("bw", text)

    def test_bw_from_window(self):
        # 608 * 64 KiB in 2 s; perftest said 0.16.
        self.assertAlmostEqual(br.parse_perftest("bw", BW_GBIT, 2.0),
                               608 * 65536 * 8 / 2 / 1e9)

    def test_bw_from_window_despite_bad_clock(self):
        self.assertAlmostEqual(br.parse_perftest("bw", BAD_CLOCK, 3.0),
                               1659 * 65536 * 8 / 3 / 1e9)

    def test_rate_from_window(self):
        # ib_atomic_bw: 608 operations in 2 s, whatever the clock said.
        self.assertAlmostEqual(br.parse_perftest("rate", BW_GBIT, 2.0),
                               608 / 2 / 1e6)

    def test_rate_msgrate(self):
        self.assertAlmostEqual(br.parse_perftest("rate", BW_MIB), 0.0016)

    def test_lat_typical(self):
        self.assertAlmostEqual(br.parse_perftest("lat", LAT), 269.62)

    def test_lat_min(self):
        self.assertAlmostEqual(br.parse_perftest("lat_min", LAT), 164.19)

    def test_lat_min_needs_its_column(self):
        with self.assertRaises(br.Invalid):
            br.parse_perftest("lat_min", BW_GBIT)

    def test_lat_inf_is_invalid(self):
        with self.assertRaises(br.Invalid):
            br.parse_perftest("lat", LAT_INF)

    def test_no_result(self):
        for kind in ("bw", "lat", "lat_min"):
            with self.assertRaises(br.Invalid):
                br.parse_perftest(kind, CM_FAIL)

    def test_wrong_kind(self):
        with self.assertRaises(br.Invalid):
            br.parse_perftest("lat", BW_GBIT)

    def test_main_lat_min(self):
        fd, path = tempfile.mkstemp()
        with os.fdopen(fd, "w") as f:
            f.write(LAT)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = br.main(["bench-report.py", "perftest", "lat_min", path])
            rc_window = br.main(["bench-report.py", "perftest", "lat_min",
                                 path, "2"])
        os.unlink(path)
        self.assertEqual(rc, 0)
        self.assertEqual(out.getvalue().strip(), "164.19")
        self.assertEqual(rc_window, 1)
        self.assertIn("WINDOW", err.getvalue())


class Iperf3(unittest.TestCase):
    def test_received(self):
        text = '{"end": {"sum_received": {"bits_per_second": 680000000.0}}}'
        self.assertAlmostEqual(br.parse_iperf3(text), 0.68)

    def test_error(self):
        with self.assertRaises(br.Invalid):
            br.parse_iperf3('{"error": "unable to connect"}')
        with self.assertRaises(br.Invalid):
            br.parse_iperf3("iperf3: error")


CMTIME = """creating id
resolving address
resolving route
creating qp
connecting
disconnecting
destroying id
step              total ms     max ms     min us  us / conn
create id    :       1.97       0.02       1.00       1.97
resolve addr :     120.51     119.90     150.00     120.51
resolve route:      80.11      79.02     101.00      80.11
create qp    :     310.00       2.00     250.00     310.00
connect      :    1982.40    1900.00     800.00    1982.40
disconnect   :    1049.12    1000.00     300.00    1049.12
destroy      :      20.00       0.10      15.00      20.00
"""


class Cmtime(unittest.TestCase):
    def test_steps(self):
        self.assertAlmostEqual(br.parse_cmtime("connect", CMTIME), 1982.40)
        self.assertAlmostEqual(br.parse_cmtime("disconnect", CMTIME),
                               1049.12)

    def test_a_failed_connection_is_invalid(self):
        text = CMTIME.replace("connecting\n", "connecting\n"
                              "event: RDMA_CM_EVENT_REJECTED, error: 8\n")
        with self.assertRaises(br.Invalid):
            br.parse_cmtime("connect", text)
        with self.assertRaises(br.Invalid):
            br.parse_cmtime("connect", "failure rconnecting: x\n" + CMTIME)

    def test_mean_over_batches(self):
        paths = []
        for value in ("1000.00", "2000.00"):
            fd, path = tempfile.mkstemp()
            with os.fdopen(fd, "w") as f:
                f.write(CMTIME.replace("1982.40\n", value + "\n"))
            paths.append(path)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = br.main(["bench-report.py", "cmtime", "connect"] + paths)
        for path in paths:
            os.unlink(path)
        self.assertEqual(rc, 0)
        self.assertEqual(out.getvalue().strip(), "1500")

    def test_missing_or_zero(self):
        with self.assertRaises(br.Invalid):
            br.parse_cmtime("connect", "creating id\n")
        with self.assertRaises(br.Invalid):
            br.parse_cmtime("connect", CMTIME.replace(
                "   1982.40\n", "      0.00\n"))
        with self.assertRaises(br.Invalid):
            br.parse_cmtime("create qp", CMTIME)


CONNSCALE = """connections 1000
processes 63
slab_kib 20480
vmalloc_kib 8000
free_kib 40000
slab_per_conn_kib 20.48
vmalloc_per_conn_kib 8.00
kmem_per_conn_kib 28.48
free_per_conn_kib 40.00
after_slab_kib -12
after_vmalloc_kib 0
"""


class Connscale(unittest.TestCase):
    def test_keys(self):
        self.assertAlmostEqual(
            br.parse_connscale("kmem_per_conn_kib", CONNSCALE), 28.48)
        self.assertAlmostEqual(
            br.parse_connscale("vmalloc_per_conn_kib", CONNSCALE), 8.0)

    def test_negative_is_a_result(self):
        text = CONNSCALE.replace("vmalloc_per_conn_kib 8.00",
                                 "vmalloc_per_conn_kib -0.50")
        self.assertAlmostEqual(
            br.parse_connscale("vmalloc_per_conn_kib", text), -0.5)
        self.assertEqual(br.fmt(-0.5), "-0.5")

    def test_missing_unknown_or_unreadable(self):
        with self.assertRaises(br.Invalid):
            br.parse_connscale("kmem_per_conn_kib", "connections 1000\n")
        with self.assertRaises(br.Invalid):
            br.parse_connscale("after_slab_kib", CONNSCALE)
        with self.assertRaises(br.Invalid):
            br.parse_connscale("slab_per_conn_kib", CONNSCALE.replace(
                "20.48", "nan"))
        with self.assertRaises(br.Invalid):
            br.parse_connscale("slab_per_conn_kib", CONNSCALE.replace(
                "20.48", "x"))


HEAD = "round\tdevice\ttest\tmetric\tunit\tvalue\tstatus\tattempts\tseconds\tlog\n"


def tsv(rows):
    f = tempfile.NamedTemporaryFile("w", suffix=".tsv", delete=False)
    f.write(HEAD)
    for r in rows:
        f.write("\t".join(str(x) for x in r) + "\n")
    f.close()
    return f.name


def row(rnd, dev, test, value, metric="bw"):
    unit = {"bw": "Gb/s", "rate": "Mop/s"}.get(metric, "usec")
    status = "ok" if value != "fail" else "fail(rc=1)"
    return (rnd, dev, test, metric, unit, value, status, 1, 5, "x")


class Table(unittest.TestCase):
    def cells(self, lines, test):
        for line in lines:
            if line.startswith(test + " ") or line == test:
                return line.split()
        self.fail("no row " + test)

    def test_medians_and_ratios(self):
        rows = []
        for r, (x, s, t) in enumerate([(0.2, 0.4, 1.0), (0.3, 0.5, 2.0),
                                       (0.1, 0.9, 3.0)], 1):
            rows += [row(r, "xiw", "w", x), row(r, "siw", "w", s),
                     row(r, "xiw", "l", 10 * r, "lat"),
                     row(r, "siw", "l", 40, "lat"), row(r, "tcp", "tcp", t)]
        path = tsv(rows)
        lines, xiw_failed = br.table(path, ["xiw", "siw"])
        os.unlink(path)
        self.assertFalse(xiw_failed)
        # test unit xiw siw xiw/siw xiw/TCP siw/TCP
        self.assertEqual(self.cells(lines, "w"),
                         ["w", "Gb/s", "0.2", "0.5", "0.4", "0.1", "0.25"])
        self.assertEqual(self.cells(lines, "l"),
                         ["l", "usec", "20.0", "40.0", "0.5", "-", "-"])
        self.assertEqual(self.cells(lines, "tcp")[-1], "2.00")

    def test_any_failed_run_is_fail(self):
        rows = [row(1, "xiw", "w", 0.2), row(2, "xiw", "w", "fail"),
                row(3, "xiw", "w", 0.3), row(1, "siw", "w", 0.4),
                row(1, "tcp", "tcp", "fail")]
        path = tsv(rows)
        lines, xiw_failed = br.table(path, ["xiw", "siw"])
        os.unlink(path)
        self.assertTrue(xiw_failed)
        self.assertEqual(self.cells(lines, "w"),
                         ["w", "Gb/s", "fail", "0.4", "-", "-", "-"])
        self.assertIn("fail", self.cells(lines, "tcp"))
        self.assertIn("note: xiw w: 1 of 3 runs failed", lines)

    def test_xiw_crc_off_column(self):
        rows = []
        for r in (1, 2, 3):
            rows += [row(r, "xiw", "w", 0.2), row(r, "xiwnc", "w", 0.3),
                     row(r, "siw", "w", 0.6), row(r, "tcp", "tcp", 1.2)]
        path = tsv(rows)
        lines, xiw_failed = br.table(path, ["xiw", "xiwnc", "siw"])
        os.unlink(path)
        self.assertFalse(xiw_failed)
        # test unit xiw xiwnc siw xiw/siw xiwnc/siw xiw/TCP xiwnc/TCP siw/TCP
        self.assertEqual(self.cells(lines, "w"),
                         ["w", "Gb/s", "0.2", "0.3", "0.6", "0.333", "0.5",
                          "0.167", "0.25", "0.5"])

    def test_siw_crc_on_column(self):
        rows = []
        for r in (1, 2, 3):
            rows += [row(r, "xiw", "w", 0.2), row(r, "xiwnc", "w", 0.3),
                     row(r, "siw", "w", 0.6), row(r, "siwcrc", "w", 0.1)]
        path = tsv(rows)
        lines, xiw_failed = br.table(path, ["xiw", "xiwnc", "siw", "siwcrc"])
        os.unlink(path)
        self.assertFalse(xiw_failed)
        # test unit xiw xiwnc siw siwcrc xiw/siw xiwnc/siw xiw/siwcrc,
        # then the four /TCP columns (no tcp run: "-")
        self.assertEqual(self.cells(lines, "w")[:9],
                         ["w", "Gb/s", "0.2", "0.3", "0.6", "0.1", "0.333",
                          "0.5", "2.00"])
        head = next(ln for ln in lines if ln.startswith("test "))
        self.assertIn("xiw/siwcrc", head.split())

    def test_siwcrc_failure_does_not_fail_the_run(self):
        path = tsv([row(1, "xiw", "w", 0.4), row(1, "siwcrc", "w", "fail")])
        lines, xiw_failed = br.table(path, ["xiw", "siwcrc"])
        os.unlink(path)
        self.assertFalse(xiw_failed)
        self.assertIn("note: siwcrc w: 1 of 1 runs failed", lines)

    def test_xiwnc_failure_fails_the_run(self):
        path = tsv([row(1, "xiw", "w", 0.4), row(1, "xiwnc", "w", "fail"),
                    row(1, "siw", "w", 0.4)])
        lines, xiw_failed = br.table(path, ["xiw", "xiwnc", "siw"])
        os.unlink(path)
        self.assertTrue(xiw_failed)
        self.assertIn("note: xiwnc w: 1 of 1 runs failed", lines)

    def test_siw_only(self):
        path = tsv([row(1, "siw", "w", 0.4), row(1, "tcp", "tcp", 0.8)])
        lines, xiw_failed = br.table(path, ["siw"])
        os.unlink(path)
        self.assertFalse(xiw_failed)
        self.assertEqual(self.cells(lines, "w"), ["w", "Gb/s", "0.4", "0.5"])

    def test_siw_failure_does_not_fail_the_run(self):
        path = tsv([row(1, "xiw", "w", 0.4), row(1, "siw", "w", "fail")])
        _, xiw_failed = br.table(path, ["xiw", "siw"])
        os.unlink(path)
        self.assertFalse(xiw_failed)


class NotApplicable(unittest.TestCase):
    def test_na_is_shown_and_no_failure(self):
        na = (1, "siw", "a", "rate", "Mop/s", "-", "n/a", 0, 0, "-")
        path = tsv([row(1, "xiw", "a", 0.02, "rate"), na])
        lines, xiw_failed = br.table(path, ["xiw", "siw"])
        os.unlink(path)
        self.assertFalse(xiw_failed)
        cells = [c for c in lines if c.startswith("a ")][0].split()
        self.assertEqual(cells[2:5], ["0.02", "n/a", "-"])
        self.assertFalse(any("note" in l for l in lines))


class Ab(unittest.TestCase):
    """make bench-ab's comparison of two trees."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def put(self, name, rows):
        path = tsv(rows)
        os.replace(path, os.path.join(self.dir.name, name))

    def rows_of(self, lines, test, what):
        return [ln.split() for ln in lines
                if ln.split()[:1] == [test] and ln.split()[2:3] == [what]]

    def test_round_ratios_and_change_over_base(self):
        # base: xiwnc/siw per round 1.0, 2.0 (file 1), 3.0 (file 2)
        self.put("base-1.tsv", [row(1, "xiwnc", "w", 1.0),
                                row(1, "siw", "w", 1.0),
                                row(2, "xiwnc", "w", 4.0),
                                row(2, "siw", "w", 2.0)])
        self.put("base-2.tsv", [row(1, "xiwnc", "w", 3.0),
                                row(1, "siw", "w", 1.0),
                                row(1, "tcp", "tcp", 9.0)])
        # change: 3.0 and 5.0 (median 4.0)
        self.put("change-1.tsv", [row(1, "xiwnc", "w", 3.0),
                                  row(1, "siw", "w", 1.0),
                                  row(2, "xiwnc", "w", 5.0),
                                  row(2, "siw", "w", 1.0)])
        self.put("notes.txt", [])       # not a run: ignored
        lines, ok = br.ab(self.dir.name)
        self.assertTrue(ok)
        self.assertIn("make bench-ab: 2 run(s) of the base tree, 1 of"
                      " the change, alternately", lines)
        r = self.rows_of(lines, "w", "xiwnc/siw")
        self.assertEqual(r, [["w", "ratio", "xiwnc/siw", "2.00", "(3)",
                              "4.00", "(2)", "2.00"]])
        # The ratio of medians would differ: base xiwnc 3.0 / siw 1.0.
        d = self.rows_of(lines, "w", "xiwnc")
        self.assertEqual(d, [["w", "Gb/s", "xiwnc", "3.00", "[1.00-4.00]",
                              "4.00", "[3.00-5.00]", "1.33"]])
        self.assertEqual(self.rows_of(lines, "w", "xiw/siwcrc"), [])
        # iperf3 ran in one base guest only, and is no device of a test.
        self.assertEqual(self.rows_of(lines, "tcp", "iperf3"),
                         [["tcp", "Gb/s", "iperf3", "9.00", "[9.00-9.00]",
                           "-", "-"]])
        self.assertEqual(self.rows_of(lines, "tcp", "xiwnc/siw"), [])
        self.assertFalse(any("tcp" in ln for ln in lines
                             if ln.startswith("note")))

    def test_tcp_row_both_sides_and_a_failed_iperf3(self):
        for side, v in (("base", 2.0), ("change", 3.0)):
            self.put(side + "-1.tsv", [row(1, "xiw", "w", 1.0),
                                       row(1, "siw", "w", 1.0),
                                       row(1, "tcp", "tcp", v),
                                       row(2, "tcp", "tcp", v + 2.0)])
        self.put("change-2.tsv", [row(1, "xiw", "w", 1.0),
                                  row(1, "siw", "w", 1.0),
                                  row(1, "tcp", "tcp", "fail")])
        lines, ok = br.ab(self.dir.name)
        # iperf3 failing is noted; it is no failure of xiw.
        self.assertTrue(ok)
        self.assertEqual(self.rows_of(lines, "tcp", "iperf3"),
                         [["tcp", "Gb/s", "iperf3", "3.00", "[2.00-4.00]",
                           "4.00", "[3.00-5.00]", "1.33"]])
        self.assertIn("note: tcp (iperf3) failed: change-2.tsv round 1",
                      lines)

    def test_a_failed_xiw_run_is_reported_and_fails(self):
        self.put("base-1.tsv", [row(1, "xiw", "w", 1.0),
                                row(1, "siwcrc", "w", 1.0)])
        self.put("change-1.tsv", [row(1, "xiw", "w", "fail"),
                                  row(1, "siwcrc", "w", "fail")])
        lines, ok = br.ab(self.dir.name)
        self.assertFalse(ok)
        self.assertIn("note: failed: change-1.tsv xiw w round 1", lines)
        # siwcrc's failure is no xiw failure; the change has no ratio.
        self.assertEqual(sum("failed" in ln for ln in lines), 1)
        self.assertEqual(self.rows_of(lines, "w", "xiw/siwcrc"),
                         [["w", "ratio", "xiw/siwcrc", "1.00", "(1)", "-",
                           "-"]])

    def test_a_side_without_runs_fails(self):
        self.put("change-1.tsv", [row(1, "xiw", "w", 1.0)])
        lines, ok = br.ab(self.dir.name)
        self.assertFalse(ok)
        self.assertIn("note: no base-N.tsv in " + self.dir.name, lines)

    def test_latency_rows(self):
        for side, x in (("base", 30.0), ("change", 24.0)):
            self.put(side + "-1.tsv", [row(1, "xiwnc", "l", x, "lat"),
                                       row(1, "siw", "l", 20.0, "lat")])
        lines, ok = br.ab(self.dir.name)
        self.assertTrue(ok)
        self.assertEqual(self.rows_of(lines, "l", "xiwnc/siw")[0][3:],
                         ["1.50", "(1)", "1.20", "(1)", "0.8"])
        self.assertEqual(self.rows_of(lines, "l", "siw")[0][1], "usec")

    def test_main_exit_status(self):
        with contextlib.redirect_stdout(io.StringIO()):
            self.assertEqual(br.main(["x", "ab", self.dir.name]), 1)
        with contextlib.redirect_stderr(io.StringIO()):
            self.assertEqual(br.main(["x", "ab", self.dir.name + "/no"]), 1)


if __name__ == "__main__":
    unittest.main()
