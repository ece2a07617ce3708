#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""Tests for lat-trace-report.py: python3 scripts/lat-trace-report-test.py"""
import importlib.util
import io
import os
import tempfile
import unittest

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "lat_trace_report", os.path.join(here, "lat-trace-report.py"))
lt = importlib.util.module_from_spec(spec)
spec.loader.exec_module(lt)

HEAD = """\
# tracer: function
#
# entries-in-buffer/entries-written: 9/9   #P:2
#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION
"""


def line(pid, usec, text, comm='ib_send_lat'):
    return '%16s-%-5d [000] ..... %12.6f: %s\n' % (comm, pid, usec / 1e6,
                                                  text)


ENTER = 'sys_enter: NR 1 (6, 7ffc, 20, 1, 0, 7ffc)'
EXIT = 'sys_exit: NR 1 = 32'


def send_trip(pid, t, post, xmit, rcv, ready, cqe, drv='xiw'):
    """One message of ib_send_lat from pid; returns the lines and end."""
    out = [line(pid, t, ENTER)]
    t += post
    out.append(line(pid, t, '%s_post_send <-ib_uverbs_post_send' % drv))
    t += xmit
    out.append(line(pid, t, '__tcp_transmit_skb <-tcp_write_xmit'))
    t += rcv
    out.append(line(pid, t, 'tcp_v4_rcv <-ip_protocol_deliver_rcu'))
    t += ready
    out.append(line(pid, t, 'xiw_sk_data_ready <-tcp_rcv_established'
                    if drv == 'xiw' else
                    'siw_qp_llp_data_ready <-tcp_rcv_established'))
    t += cqe
    out.append(line(pid, t, 'xiw_cq_add <-xiw_rx_complete_rqe'
                    if drv == 'xiw' else
                    'siw_rqe_complete <-siw_rdmap_complete'))
    # The sender's own completion and return: not on the way.
    out.append(line(pid, t + 1, 'xiw_cq_add <-xiw_sq_retire'
                    if drv == 'xiw' else
                    'siw_sqe_complete <-siw_qp_sq_process'))
    out.append(line(pid, t + 2, EXIT))
    return out, t


class Report(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.d = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, lines):
        with open(os.path.join(self.d, name), 'w') as f:
            f.write(HEAD + ''.join(lines))

    def ping_pong(self, drv, n, xmit):
        """n messages alternating between two pids, 3 us to each peer's
        next doorbell; returns the lines."""
        lines, t = [], 1000.0
        for i in range(n):
            pid = 100 + i % 2
            got, t = send_trip(pid, t, 2, xmit, 6, 8, 4, drv)
            lines += got
            t += 3
        return lines

    def run_report(self):
        buf = io.StringIO()
        count = lt.report(self.d, buf)
        return count, buf.getvalue()

    def test_segments(self):
        path = os.path.join(self.d, 'x')
        with open(path, 'w') as f:
            f.write(HEAD + ''.join(self.ping_pong('xiw', 20, 14)))
        rows = lt.segments(lt.load(path), *lt.CHAINS['ib_send_lat'])
        # The first tenth is start-up; the last message has no next one.
        self.assertEqual(len(rows), 20 - 2 - 1)
        self.assertEqual([round(x, 3) for x in rows[0]],
                         [2, 14, 6, 8, 4, 3, 37])

    def test_next_is_the_peer(self):
        """For a Send, the next doorbell is the other process's: the
        sender's own next one does not end the message."""
        lines, t = [], 1000.0
        for i in range(20):
            pid = 100 + i % 2
            got, t = send_trip(pid, t, 2, 10, 6, 8, 4)
            lines += got
            lines.append(line(pid, t + 5, ENTER))	# not the peer
            t += 9
        path = os.path.join(self.d, 'x')
        with open(path, 'w') as f:
            f.write(HEAD + ''.join(lines))
        rows = lt.segments(lt.load(path), *lt.CHAINS['ib_send_lat'])
        self.assertTrue(rows)
        self.assertEqual(round(rows[0][5], 3), 9)

    def test_table_and_difference(self):
        self.write('trace-ib_send_lat-xiw0-1.txt',
                   self.ping_pong('xiw', 40, 14))
        self.write('trace-ib_send_lat-siw0-1.txt',
                   self.ping_pong('siw', 40, 11))
        count, text = self.run_report()
        self.assertEqual(count, 2)
        post = [l for l in text.splitlines() if 'post > xmit' in l][0]
        self.assertIn('14.0 / 14.0', post)
        self.assertIn('11.0 / 11.0', post)
        self.assertTrue(post.rstrip().endswith('+3.0'), post)
        total = [l for l in text.splitlines() if 'total' in l][0]
        self.assertTrue(total.rstrip().endswith('+3.0'), total)

    def two_speeds(self, drv, n, xmit, slow_every):
        """Like ping_pong, but every slow_every-th message (0: none) in
        the host's slow state: every segment twice as long."""
        lines, t = [], 1000.0
        for i in range(n):
            k = 2 if slow_every and i % slow_every == 0 else 1
            got, t = send_trip(100 + i % 2, t, 2 * k, xmit * k, 6 * k,
                               8 * k, 4 * k, drv)
            lines += got
            t += 3 * k
        return lines

    def test_fast_state_table(self):
        """siw's messages half in the slow state: the main table mixes
        them, the fast-state table compares like with like."""
        self.write('trace-ib_send_lat-xiw0-1.txt',
                   self.two_speeds('xiw', 80, 14, 0))
        self.write('trace-ib_send_lat-siw0-1.txt',
                   self.two_speeds('siw', 80, 11, 2))
        _, text = self.run_report()
        head, fast = text.split('messages whose TCP segments took at most')
        post = [l for l in head.splitlines() if 'post > xmit' in l][0]
        self.assertFalse(post.rstrip().endswith('+3.0'), post)
        self.assertTrue(fast.startswith(' 14.0 us'), fast)
        post = [l for l in fast.splitlines() if 'post > xmit' in l][0]
        self.assertRegex(post, r'11\.00\s+14\.00\s+\+3\.00$')
        total = [l for l in fast.splitlines() if 'total' in l][0]
        self.assertTrue(total.rstrip().endswith('+3.00'), total)

    def test_fast_state_needs_messages_of_both(self):
        self.write('trace-ib_send_lat-xiw0-1.txt',
                   self.two_speeds('xiw', 80, 14, 0))
        self.write('trace-ib_send_lat-siw0-1.txt',
                   self.two_speeds('siw', 80, 11, 1))
        _, text = self.run_report()
        self.assertNotIn('took at most', text)
        self.assertIn('too few messages in the fast state', text)

    def test_read_chain_ends_at_own_next(self):
        lines, t = [], 1000.0
        for i in range(20):
            seq = [(ENTER, 0), ('xiw_post_send <-x', 2),
                   ('__tcp_transmit_skb <-x', 10), ('tcp_v4_rcv <-x', 6),
                   ('xiw_sk_data_ready <-x', 6), (EXIT, 15),
                   ('__tcp_transmit_skb <-x', 16), ('tcp_v4_rcv <-x', 7),
                   ('xiw_sk_data_ready <-x', 6),
                   ('xiw_cq_add <-xiw_sq_retire', 6)]
            for text, dt in seq:
                t += dt
                lines.append(line(100, t, text, 'ib_read_lat'))
            t += 18
        path = os.path.join(self.d, 'x')
        with open(path, 'w') as f:
            f.write(HEAD + ''.join(lines))
        rows = lt.segments(lt.load(path), *lt.CHAINS['ib_read_lat'])
        self.assertEqual(len(rows), 20 - 2 - 1)
        self.assertEqual(round(rows[0][-2], 3), 18)
        self.assertEqual(round(rows[0][-1], 3), 2 + 10 + 6 + 6 + 15 + 16 +
                         7 + 6 + 6 + 18)

    def test_nothing_to_read(self):
        self.write('trace-other.txt', [])
        count, _ = self.run_report()
        self.assertEqual(count, 0)

    def test_trace_without_messages_is_not_a_run(self):
        self.write('trace-ib_send_lat-xiw0-1.txt',
                   [line(100, 1000.0, ENTER)])
        count, text = self.run_report()
        self.assertEqual(count, 0)
        self.assertEqual(text, '')

    def test_mid_mean_leaves_out_stalls(self):
        xs = [10.0] * 18 + [2000.0, 3000.0]
        self.assertEqual(lt.mid_mean(xs), 10.0)
        self.assertEqual(lt.mid_mean([4.0]), 4.0)


if __name__ == '__main__':
    unittest.main()
