#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""Tests for tcg-prof-report.py: python3 scripts/tcg-prof-report-test.py"""
import contextlib
import importlib.util
import io
import os
import tempfile
import unittest

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "tcg_prof_report", os.path.join(here, "tcg-prof-report.py"))
tp = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tp)

KALLSYMS = """\
ffffffff81000000 T entry_SYSCALL_64
ffffffff81001000 T tcp_sendmsg
ffffffff81002000 T __schedule
ffffffff81003000 T process_one_work
ffffffff81004000 T hrtimer_interrupt
ffffffff81005000 T native_queued_spin_lock_slowpath
ffffffffc0000000 t xiw_tx_build\t[xiw]
ffffffffc0100000 t siw_tx_hdt\t[siw]
"""


def block(va, insns, runs, irq=0, cli=0, locked=0):
    return '%x\t%d\t%d\t%d\t%d\t%d\n' % (va, insns, runs, irq, cli, locked)


class Report(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.d = self.tmp.name
        self.write('kallsyms', KALLSYMS)
        self.write('done', '10 20 64 ib_send_lat\n')

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, text):
        with open(os.path.join(self.d, name), 'w') as f:
            f.write(text)

    def snaps(self, dev, n, runs_per_iter, extra_noise):
        """pre: nothing yet; post: n iterations of the given blocks."""
        self.write('snap-pre-%s-ib_send_lat-%d.tsv' % (dev, n),
                   block(0xffffffff81001000, 10, 5))
        post = block(0xffffffff81001000, 10, 5 + n)          # tcp_sendmsg
        post += block(0xffffffff81001010, 4, n * 2, locked=1)  # its body
        post += block(0xffffffff81000000, 7, extra_noise)    # syscalls
        post += block(0xffffffff81004000, 3, n)              # tick
        post += block(0x401000, 5, n * 100)                  # user
        for va, insns, per in runs_per_iter:
            post += block(va, insns, n * per, irq=1)
        self.write('snap-post-%s-ib_send_lat-%d.tsv' % (dev, n), post)

    def run_report(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out), \
                contextlib.redirect_stderr(io.StringIO()):
            rc = tp.main_args([self.d])
        return rc, out.getvalue()

    def test_per_iteration_subtracts_the_short_run(self):
        for dev, va in (('xiw0', 0xffffffffc0000000),
                        ('siw0', 0xffffffffc0100000)):
            self.snaps(dev, 10, [(va, 50, 2)], extra_noise=1000)
            self.snaps(dev, 20, [(va, 50, 2)], extra_noise=10)
        rc, out = self.run_report()
        self.assertEqual(rc, 0)
        lines = {l.split('  ')[1].strip(): l for l in out.splitlines()
                 if l.startswith('  ') and '  ' in l[2:]}
        # 10 (tcp_sendmsg) + 2 * 4 (body) + 2 * 50 (driver) per iteration
        self.assertRegex(lines['work insns'], r'118\.0\s+118\.0\s+1\.00')
        self.assertRegex(lines['driver'], r'100\.0\s+100\.0\s+1\.00')
        self.assertRegex(lines['locked'], r'2\.0\s+2\.0\s+1\.00')
        self.assertRegex(lines['irq-enables'], r'2\.0\s+2\.0')
        self.assertRegex(lines['tick insns'], r'3\.0\s+3\.0')
        # syscalls: (10 - 1000) * 7 / 10: kept apart, whatever its sign
        self.assertRegex(lines['syscall/clock insns'], r'-693\.0')
        self.assertIn('xiw_tx_build [xiw]', out)

    def test_missing_snapshot_fails(self):
        self.snaps('xiw0', 10, [], extra_noise=0)
        rc, _ = self.run_report()
        self.assertEqual(rc, 1)

    def test_malformed_line_fails(self):
        for dev in ('xiw0', 'siw0'):
            for n in (10, 20):
                self.snaps(dev, n, [], extra_noise=0)
        self.write('snap-post-siw0-ib_send_lat-20.tsv', 'user\t5\n')
        rc, _ = self.run_report()
        self.assertEqual(rc, 1)

    def all_snaps(self):
        for dev in ('xiw0', 'siw0'):
            for n in (10, 20):
                self.snaps(dev, n, [], extra_noise=0)

    def test_setup_named_in_the_header(self):
        self.all_snaps()
        rc, out = self.run_report()
        self.assertEqual(rc, 0)
        self.assertNotIn('QPs per run', out)
        self.assertNotIn('CRC on', out)
        self.write('setup', 'qps=8 crc=1\n')
        rc, out = self.run_report()
        self.assertEqual(rc, 0)
        self.assertIn('8 QPs per run', out)
        self.assertIn('MPA CRC on at both ends', out)

    def test_bad_setup_fails(self):
        self.all_snaps()
        for text in ('qps=0 crc=0\n', 'qps=8 crc=2\n', 'qps=x\n',
                     'queues=8\n'):
            self.write('setup', text)
            rc, _ = self.run_report()
            self.assertEqual(rc, 1, text)

    def test_spin_waits_kept_apart(self):
        for dev, spins in (('xiw0', (5, 500)), ('siw0', (300, 30))):
            for n, spin in zip((10, 20), spins):
                self.snaps(dev, n, [(0xffffffff81005000, 1, spin / n)],
                           extra_noise=0)
        rc, out = self.run_report()
        self.assertEqual(rc, 0)
        lines = {l.split('  ')[1].strip(): l for l in out.splitlines()
                 if l.startswith('  ') and '  ' in l[2:]}
        # tcp_sendmsg and its body only: the spinning is not work
        self.assertRegex(lines['work insns'], r'18\.0\s+18\.0\s+1\.00')
        # (500 - 5) / 10 and (30 - 300) / 10
        self.assertRegex(lines['spin insns'], r'49\.5\s+-27\.0')
        self.assertNotIn('native_queued_spin_lock_slowpath', out)

    def cmtime_snaps(self, dev, n, va, steps=('mid', 'end')):
        """pre, mid, end, post: the driver's block runs 3 times per
        connection in the connect step, 2 in the disconnect step and 1
        after it; tcp_sendmsg 7 times per connection in the connect step,
        2 after the disconnect step."""
        name = '%s-cmtime-%d' % (dev, n)
        counts = (('pre', 0, 0), ('mid', 3 * n, 7 * n),
                  ('end', 5 * n, 7 * n), ('post', 6 * n, 9 * n))
        for what, drv, tcp in counts:
            if what in ('mid', 'end') and what not in steps:
                continue
            self.write('snap-%s-%s.tsv' % (what, name),
                       block(va, 40, drv) + block(0xffffffff81001000, 10, tcp))

    def test_cmtime_steps_apart(self):
        self.write('done', '10 20 64 cmtime\n')
        for dev, va in (('xiw0', 0xffffffffc0000000),
                        ('siw0', 0xffffffffc0100000)):
            for n in (10, 20):
                self.cmtime_snaps(dev, n, va)
        rc, out = self.run_report()
        self.assertEqual(rc, 0)
        parts = out.split('cmtime, ')
        self.assertEqual(len(parts), 3)
        whole, conn, disc = parts

        def work(text):
            for l in text.splitlines():
                if l.strip().startswith('work insns'):
                    return l
            self.fail('no work row in %r' % text)
        self.assertRegex(work(whole), r'330\.0\s+330\.0')
        self.assertTrue(conn.startswith('connect step'))
        self.assertRegex(work(conn), r'190\.0\s+190\.0')
        self.assertTrue(disc.startswith('disconnect step'))
        self.assertRegex(work(disc), r'80\.0\s+80\.0')

    def test_cmtime_without_all_steps(self):
        """No step snapshots, or one missing (siw0's long run's end):
        the whole only."""
        for name, partial in (('none', ()), ('one missing', ('mid',))):
            with self.subTest(name):
                self.write('done', '10 20 64 cmtime\n')
                for f in os.listdir(self.d):
                    if f.startswith('snap-'):
                        os.unlink(os.path.join(self.d, f))
                for dev, va in (('xiw0', 0xffffffffc0000000),
                                ('siw0', 0xffffffffc0100000)):
                    for n in (10, 20):
                        full = not partial or (dev, n) != ('siw0', 20)
                        self.cmtime_snaps(dev, n, va, steps=(
                            ('mid', 'end') if partial and full
                            else partial))
                rc, out = self.run_report()
                self.assertEqual(rc, 0)
                self.assertIn('\ncmtime\n', out)
                self.assertNotIn('step', out)

    def test_steady_window(self):
        """from-* and to-* in the long run: (to - from) / (N2 - N1), and
        nothing of the short run subtracted."""
        self.all_snaps()
        for dev, va in (('xiw0', 0xffffffffc0000000),
                        ('siw0', 0xffffffffc0100000)):
            for what, k in (('from', 0), ('to', 10)):
                self.write('snap-%s-%s-ib_send_lat-20.tsv' % (what, dev),
                           block(va, 50, 100 + 3 * k) +
                           block(0xffffffff81001000, 10, 5 + k) +
                           block(0x401000, 5, 1000 + 200 * k))
        rc, out = self.run_report()
        self.assertEqual(rc, 0)
        parts = out.split('ib_send_lat, steady window, client doorbells'
                          ' 10 to 20')
        self.assertEqual(len(parts), 2)
        rows = {l.split('  ')[1].strip(): l
                for l in parts[1].splitlines()
                if l.startswith('  ') and '  ' in l[2:]}
        self.assertRegex(rows['work insns'], r'160\.0\s+160\.0\s+1\.00')
        self.assertRegex(rows['driver'], r'150\.0\s+150\.0')
        self.assertRegex(rows['user insns'], r'1000\s+1000')

    def test_steady_window_incomplete(self):
        self.all_snaps()
        self.write('snap-from-xiw0-ib_send_lat-20.tsv', '')
        self.write('snap-to-xiw0-ib_send_lat-20.tsv', '')
        rc, out = self.run_report()
        self.assertEqual(rc, 0)
        self.assertNotIn('steady window', out)

    MAPS = """\
00400000-00410000 r-xp 00000000 00:10 1 /nonexistent/bin/ib_send_lat
00410000-00420000 rw-p 00010000 00:10 1 /nonexistent/bin/ib_send_lat
7f0000000000-7f0000010000 r-xp 00001000 00:10 2 /nonexistent/libxiw-test.so
7f0000100000-7f0000110000 r-xp 00002000 00:10 3 /nonexistent/libsiw-test.so
7f0000200000-7f0000210000 r-xp 00000000 00:10 4 /nonexistent/libc.so.6
"""

    def test_user_split_by_object(self):
        """A provider block run 4 times per iteration is work; blocks run
        100 times (the program's, one of the provider's) are polling."""
        for dev, va in (('xiw0', 0x7f0000000100), ('siw0', 0x7f0000100100)):
            for n in (10, 20):
                self.snaps(dev, n, [], extra_noise=0)
                name = 'snap-post-%s-ib_send_lat-%d.tsv' % (dev, n)
                with open(os.path.join(self.d, name), 'a') as f:
                    f.write(block(va, 30, 4 * n))
                    f.write(block(va + 0x100, 10, 100 * n))
                    f.write(block(0x7f0000200000, 7, n))
            self.write('%s-ib_send_lat-20.maps' % dev, self.MAPS)
        rc, out = self.run_report()
        self.assertEqual(rc, 0)
        rows = {l.split('  ')[2].strip(): l for l in out.splitlines()
                if l.startswith('    ') and '  ' in l[4:]}
        self.assertRegex(rows['provider'], r'120\.0\s+120\.0\s+1\.00')
        self.assertRegex(rows['libc'], r'7\.0\s+7\.0')
        self.assertRegex(rows['busy polling'], r'1500\.0\s+1500\.0')
        self.assertRegex(rows['user work'], r'127\.0\s+127\.0')
        self.assertIn('xiw0 provider functions', out)

    def test_user_split_needs_both_maps(self):
        self.all_snaps()
        self.write('xiw0-ib_send_lat-20.maps', self.MAPS)
        rc, out = self.run_report()
        self.assertEqual(rc, 0)
        self.assertNotIn('by object', out)

    def test_bad_maps_fails(self):
        self.all_snaps()
        for dev in ('xiw0', 'siw0'):
            self.write('%s-ib_send_lat-20.maps' % dev,
                       'zz-10 r-xp 0 00:10 1 /nonexistent/x\n')
        rc, _ = self.run_report()
        self.assertEqual(rc, 1)

    def test_missing_done_fails(self):
        os.unlink(os.path.join(self.d, 'done'))
        rc, _ = self.run_report()
        self.assertEqual(rc, 1)


if __name__ == '__main__':
    unittest.main()
