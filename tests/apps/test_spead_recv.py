#!/usr/bin/env python3
# Copyright 2026 gr-spead authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""spead_recv on the reference captures: heaps, items, descriptors and statistics
printed as the README promises; clear errors and exit codes for bad input."""

import os
import subprocess
import unittest

APPS = os.environ["GR_SPEAD_APPS_DIR"]
VECTORS = os.environ["GR_SPEAD_VECTORS_DIR"]


def run(*args, timeout=60):
    return subprocess.run([os.path.join(APPS, "spead_recv"), *args], capture_output=True,
                          text=True, timeout=timeout)


def stats(stdout):
    out = {}
    for line in stdout.splitlines():
        name, sep, value = line.partition(": ")
        if sep and value.isdigit() and " " not in name:
            out[name] = int(value)
    return out


class spead_recv_on_captures(unittest.TestCase):
    def test_prints_heaps_items_descriptors_and_stats(self):
        r = run(os.path.join(VECTORS, "spead64-40_immediate.pcap"))
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
    def test_unreadable_file_is_a_clear_error_and_exit_1(self):
        r = run("/nonexistent/capture.pcap")
        self.assertEqual(r.returncode, 1)
        self.assertIn("/nonexistent/capture.pcap", r.stderr)

    def test_not_a_capture_is_a_clear_error(self):
        r = run(os.path.join(VECTORS, "README.md"))
        self.assertEqual(r.returncode, 1)
        self.assertIn("README.md", r.stderr)

    def test_no_source_is_a_usage_error_and_exit_2(self):
        r = run()
        self.assertEqual(r.returncode, 2)
        self.assertIn("SOURCE", r.stderr)

    def test_bad_policy_names_the_option(self):
        r = run("--incomplete", "keep", os.path.join(VECTORS, "spead64-40_immediate.pcap"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("--incomplete", r.stderr)


if __name__ == "__main__":
    unittest.main()
