#!/usr/bin/env python3
# Copyright 2026 gr-spead authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""spead_recv on the reference captures: heaps, items, descriptors and statistics
printed as the README promises; clear errors and exit codes for bad input."""

import os
import shutil
import struct
import subprocess
import tempfile
import time
import unittest

from app_support import free_udp_port, receiver, stats

APPS = os.environ["GR_SPEAD_APPS_DIR"]
VECTORS = os.environ["GR_SPEAD_VECTORS_DIR"]


def run(*args, timeout=60):
    return subprocess.run([os.path.join(APPS, "spead_recv"), *args], capture_output=True,
                          text=True, timeout=timeout)


class spead_recv_on_captures(unittest.TestCase):
    def test_prints_heaps_items_descriptors_and_stats(self):
        r = run("--descriptors", os.path.join(VECTORS, "spead64-40_immediate.pcap"))
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertIn("heap 1: 372 bytes in 1 packet, SPEAD-64-40", lines)
        self.assertIn("  0x1000 [5 bytes] = 0xbc8f", lines)
        self.assertIn("  0x1001 [5 bytes] = 0xae257e2", lines)
        # immediates stay in wire order: 0x1000 before 0x1001 in heap 3
        heap3 = lines.index("heap 3: 1 bytes in 1 packet, SPEAD-64-40")
        self.assertEqual(lines[heap3 + 1:heap3 + 3],
                         ["  0x1000 [5 bytes] = 0x7be5f8f1", "  0x1001 [5 bytes] = 0x1847c123"])
        self.assertIn("  descriptor 0x1001 'Test item 1'", lines)
        self.assertIn("    dtype:       {'shape': (1,), 'fortran_order': False, 'descr': '>u4'}",
                      lines)
        s = stats(r.stdout)
        self.assertEqual((s["heaps"], s["packets"], s["stop_heaps"]), (3, 4, 1))

    def test_descriptors_are_printed_only_when_asked_for_as_spead2_recv_does(self):
        r = run(os.path.join(VECTORS, "spead64-40_immediate.pcap"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("heap 1: 372 bytes in 1 packet, SPEAD-64-40", r.stdout)
        self.assertNotIn("  descriptor 0x1001", r.stdout)

    def test_each_source_is_a_stream_of_its_own_unless_joint(self):
        capture = os.path.join(VECTORS, "spead64-40_immediate.pcap")
        # Two streams, each ended by its own stop heap: every heap of both.
        r = run("--quiet", capture, capture)
        self.assertEqual(r.returncode, 0, r.stderr)
        s = stats(r.stdout)
        self.assertEqual((s["heaps"], s["stop_heaps"]), (6, 2), r.stdout)
        # One stream: the first stop heap ends it, whichever capture it came from.
        r = run("--quiet", "--joint", capture, capture)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(stats(r.stdout)["stop_heaps"], 1, r.stdout)

    def test_concurrent_heaps_is_max_heaps_by_spead2_recv_name(self):
        capture = os.path.join(VECTORS, "spead64-40_multipacket_1472.pcap")
        r = run("--quiet", "--concurrent-heaps", "2", capture)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(stats(r.stdout)["heaps"], 3)
        r = run("--quiet", "--concurrent-heaps", "2", "--max-heaps", "3", capture)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--concurrent-heaps 2 and --max-heaps 3 are the same setting", r.stderr)
        r = run("--quiet", "--concurrent-heaps", "0", capture)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--max-heaps", r.stderr.splitlines()[0])

    def test_every_capture_gives_the_heap_count_spead2_printed(self):
        for name, heaps, packets in [("spead64-48_multipacket_8972", 2, 17),
                                     ("spead64-40_multipacket_1472", 3, 37),
                                     ("spead64-40_two_substreams", 4, 15)]:
            with self.subTest(name=name):
                r = run("--quiet", os.path.join(VECTORS, name + ".pcap"))
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertNotIn("heap 1:", r.stdout)
                s = stats(r.stdout)
                self.assertEqual((s["heaps"], s["packets"]), (heaps, packets))
                self.assertEqual(s["incomplete_heaps_evicted"] + s["incomplete_heaps_flushed"], 0)

    def test_help_stats_lists_every_counter_with_its_meaning(self):
        r = run("--help-stats")
        self.assertEqual(r.returncode, 0)
        self.assertRegex(r.stdout, r"packets_duplicate +dropped: payload range already received")


class spead_recv_errors(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.dir)
        # 3 heaps in 37 packets of 1472 bytes (spead2's capture)
        with open(os.path.join(VECTORS, "spead64-40_multipacket_1472.pcap"), "rb") as f:
            self.capture = f.read()

    def damaged(self, data):
        path = os.path.join(self.dir, "damaged.pcap")
        with open(path, "wb") as f:
            f.write(data)
        return path

    def record_offsets(self):
        """Byte offset of each record header of the (classic pcap) capture."""
        offsets, at = [], 24
        while at < len(self.capture):
            offsets.append(at)
            at += 16 + struct.unpack_from("<I", self.capture, at + 8)[0]
        return offsets

    def test_a_truncated_capture_is_a_failure_exit_1_after_the_heaps_before_it(self):
        path = self.damaged(self.capture[:-100])  # the last record cut short
        r = run("--quiet", path)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("the receiver failed: cannot read capture '" + path + "' at record 37",
                      r.stderr)
        self.assertIn("truncated or damaged", r.stderr)
        s = stats(r.stdout)
        # the three data heaps arrived; the stop heap in the last record did not
        self.assertEqual((s["reader_errors"], s["heaps"], s["packets"]), (1, 3, 36))
        self.assertEqual((s["stop_heaps"], s["incomplete_heaps_flushed"]), (0, 0))

    def test_a_corrupt_record_is_a_failure_not_the_end_of_the_capture(self):
        data = bytearray(self.capture)
        struct.pack_into("<I", data, self.record_offsets()[9] + 8, 0x7FFFFFFF)
        r = run("--quiet", self.damaged(bytes(data)))
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("at record 10", r.stderr)
        s = stats(r.stdout)
        # every datagram before the damaged record, even those read in the same batch
        self.assertEqual((s["reader_errors"], s["packets"]), (1, 9))
        self.assertEqual(s["heaps"] + s["incomplete_heaps_flushed"], 1)

    def test_an_intact_capture_ends_without_a_reader_error(self):
        r = run("--quiet", self.damaged(self.capture))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(stats(r.stdout)["reader_errors"], 0)

    def test_unreadable_file_is_a_clear_error_and_exit_1(self):
        r = run("/nonexistent/capture.pcap")
        self.assertEqual(r.returncode, 1)
        self.assertIn("/nonexistent/capture.pcap", r.stderr)

    def test_not_a_capture_is_a_clear_error(self):
        r = run(os.path.join(VECTORS, "README.md"))
        self.assertEqual(r.returncode, 1)
        self.assertIn("README.md", r.stderr)

    def test_an_address_without_its_port_says_so_and_exits_2(self):
        for source in ("239.1.2.3", "239.1.2.3+3"):
            r = run(source)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn('"%s" has no port; write %s:PORT, e.g. %s:7148'
                          % (source, source, source), r.stderr)
            self.assertNotIn("cannot read capture", r.stderr)

    def test_more_threads_than_ports_is_a_usage_error_naming_the_flag(self):
        r = run("--threads", "2", "127.0.0.1:7148")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--threads: 2 receiver threads but only 1 distinct UDP port",
                      r.stderr.splitlines()[0])

    def test_no_source_is_a_usage_error_and_exit_2(self):
        r = run()
        self.assertEqual(r.returncode, 2)
        self.assertIn("SOURCE", r.stderr)

    def test_bad_policy_names_the_option(self):
        r = run("--incomplete", "keep", os.path.join(VECTORS, "spead64-40_immediate.pcap"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("--incomplete", r.stderr)

    def test_full_queue_policy_takes_block_or_drop_and_names_both_otherwise(self):
        capture = os.path.join(VECTORS, "spead64-40_immediate.pcap")
        for policy in ("block", "drop"):
            r = run("--quiet", "--full-queue-policy", policy, capture)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(stats(r.stdout)["heaps"], 3, r.stdout)
        r = run("--full-queue-policy", "wait", capture)
        self.assertEqual(r.returncode, 2)
        first = r.stderr.splitlines()[0]
        self.assertIn("--full-queue-policy: 'wait' is not a policy; use drop", first)
        self.assertIn("or block", first)

    def test_full_queue_policy_in_continuous_mode_is_a_usage_error(self):
        r = run("--timestamp-item", str(0x1600), "--full-queue-policy", "block",
                "127.0.0.1:7148")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--full-queue-policy applies to heaps", r.stderr.splitlines()[0])


def continuous_heap(cnt, timestamp, substream, payload=b"\x01" * 64):
    """A one-packet SPEAD-64-40 heap carrying a timestamp (0x1600) and a substream
    (0x3101) immediate; substream None: a stream-stop heap."""
    specials = [(0x01, cnt), (0x02, len(payload)), (0x03, 0), (0x04, len(payload))]
    items = [(0x06, 2)] if substream is None else [(0x1600, timestamp),
                                                   (0x3101, substream)]
    if substream is None:
        payload = b""
        specials[1] = (0x02, 0)
        specials[3] = (0x04, 0)
    pointers = [(1 << 63) | (i << 40) | v for i, v in specials + items]
    return (struct.pack(">BBBBHH", 0x53, 4, 3, 5, 0, len(pointers))
            + b"".join(struct.pack(">Q", p) for p in pointers) + payload)


class spead_recv_continuous(unittest.TestCase):
    def test_first_substream_takes_a_hosts_share_and_counts_the_others(self):
        self.take_two_of_four(["--substream-count", "2", "--first-substream", "2"])

    def test_substream_ids_take_a_hosts_share_and_count_the_others(self):
        self.take_two_of_four(["--substream-ids", "1,3"])

    def take_two_of_four(self, choice):
        """A sender's 4 substreams to spead_recv given choice (taking two of them)."""
        import socket
        port = free_udp_port()
        with receiver(port, "--timestamp-item", 0x1600, "--substream-item", 0x3101,
                      *choice) as recv:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as tx:
                cnt = 1
                for position in range(8):
                    for substream in range(4):  # the sender's 4; this host takes 2
                        tx.sendto(continuous_heap(cnt, 64 * position, substream),
                                  ("127.0.0.1", port))
                        cnt += 1
                        time.sleep(0.001)
                tx.sendto(continuous_heap(cnt, 0, None), ("127.0.0.1", port))
            code, out, err = recv.result()
        self.assertEqual(code, 0, err)
        got = stats(out)
        self.assertEqual(got["heaps"], 16, out)
        self.assertEqual(got["heaps_other_substream"], 16, out)
        self.assertEqual(got["heaps_bad_substream"], 0, out)
        self.assertEqual(got["positions_released"], 8, out)
        self.assertIn("Positions 0-7 from timestamp 0: 16 heaps, 0 missing", out)

    def test_first_substream_without_continuous_mode_is_a_usage_error(self):
        r = run("--first-substream", "4", "127.0.0.1:7148")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("give --timestamp-item too", r.stderr)
        r = run("--timestamp-item", "5632", "--first-substream", "4", "127.0.0.1:7148")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--first-substream: 4 with no substream_item", r.stderr)

    def test_bad_substream_ids_are_a_usage_error_naming_the_flag(self):
        r = run("--timestamp-item", "5632", "--substream-item", "12545",
                "--substream-ids", "8-", "127.0.0.1:7148")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--substream-ids: '8-' in '8-' is not a substream id or range",
                      r.stderr)
        r = run("--substream-ids", "8-11", "127.0.0.1:7148")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("give --timestamp-item too", r.stderr)


if __name__ == "__main__":
    unittest.main()
