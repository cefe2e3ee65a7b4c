#!/usr/bin/env python3
# Copyright 2026 gr-spead authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""spead_bench's modes run end to end and print their figures (short runs at low rates;
no speed is asserted here: figures belong in the bench output, not in tests)."""

import os
import subprocess
import unittest

APPS = os.environ["GR_SPEAD_APPS_DIR"]


def bench(*args, timeout=60):
    return subprocess.run([os.path.join(APPS, "spead_bench"), *map(str, args)],
                          capture_output=True, text=True, timeout=timeout)


SHORT = ["--packet", 8972, "--heap-size", 65536, "--seconds", 0.2]
# A buffer below any rmem_max: as root the bench would otherwise lift the sysctl for a
# moment, which tests of the capped-buffer warning running alongside could see.
SEARCH = ["--rates", "0.2,0.4", "--runs", 1, "--refine", 0, "--buffer", 131072]


class spead_bench_modes(unittest.TestCase):
    def assert_figure(self, stdout, name):
        self.assertRegex(stdout, r"(?m)^%s: [0-9.e+-]+$" % name)

    def test_send_prints_a_rate_per_packet_size(self):
        r = bench("send", *SHORT, "--runs", 1)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"send packet 8972: [0-9.e+-]+ Gb/s \(median of 1\); "
                                   r"load average")
        self.assert_figure(r.stdout, "send_gbps_8972")

    def test_recv_finds_a_lossless_rate_and_says_which_buffer_it_used(self):
        r = bench("recv", *SHORT, *SEARCH)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("receive socket buffer: asked 131072 bytes, net.core.rmem_max", r.stdout)
        self.assertRegex(r.stdout, r"recv packet 8972 run 1/1 at 0.2 Gb/s: sent \d+ heaps")
        self.assert_figure(r.stdout, "recv_lossless_gbps_8972")

    def test_loopback_runs_the_source_flowgraph(self):
        r = bench("loopback", *SHORT, *SEARCH, timeout=100)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("spead.source (udp, 127.0.0.1) -> blocks.null_sink", r.stdout)
        self.assertRegex(r.stdout, r"loopback packet 8972: highest lossless rate")
        self.assert_figure(r.stdout, "loopback_lossless_gbps_8972")

    def test_loopback_continuous_runs_both_modes_and_prints_both_figures(self):
        # one rate, one run per mode: short enough to sit beside the test above
        r = bench("loopback", "--continuous", *SHORT, "--rates", 0.2, "--runs", 1,
                  "--refine", 0, "--buffer", 131072, timeout=100)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("then the source in continuous mode", r.stdout)
        self.assertRegex(r.stdout, r"loopback continuous packet 8972 run 1/1 at 0.2 Gb/s: "
                                   r"sent \d+ heaps")
        self.assertRegex(r.stdout, r"(?m)^loopback packet 8972: heaps mode [0-9.e+-]+ Gb/s, "
                                   r"continuous mode [0-9.e+-]+ Gb/s")
        self.assert_figure(r.stdout, "loopback_lossless_gbps_8972")
        self.assert_figure(r.stdout, "loopback_continuous_lossless_gbps_8972")

    def test_sink_runs_the_sink_flowgraph(self):
        r = bench("sink", *SHORT, "--runs", 1)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"sink packet 8972: [0-9.e+-]+ Gb/s")
        self.assert_figure(r.stdout, "sink_gbps_8972")

    def test_mem_still_compares_with_memcpy(self):
        r = bench("mem", "--packet", 8972, "--total-bytes", 1 << 22, "--repeat", 1)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("memcpy", r.stdout)

    def test_mem_threads_places_with_two_readers_and_prints_the_ratio(self):
        # The bench fails (exit 1) unless every heap of both runs is placed whole.
        r = bench("mem", "--continuous", "--threads", 2, "--packet", 8972,
                  "--heap-size", 65536, "--total-bytes", 1 << 25, "--repeat", 1)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"run 1: 1 thread [0-9.e+-]+ Gb/s, 2 threads "
                                   r"[0-9.e+-]+ Gb/s, ratio [0-9.e+-]+; memcpy alone")
        self.assert_figure(r.stdout, "mem_threads_ratio_8972")
        self.assert_figure(r.stdout, "mem_threads_memcpy_ratio_8972")


class spead_bench_errors(unittest.TestCase):
    def test_unknown_mode_and_bad_values_are_usage_errors(self):
        for args, text in [(["warp"], "unknown mode 'warp'"),
                           (["recv", "--rates", "fast"], "--rates"),
                           (["loopback", "--frobnicate"], "--frobnicate"),
                           (["sink", "--source", "tap"], "--source"),
                           (["mem", "--threads", 2], "add --continuous"),
                           (["mem", "--continuous", "--threads", 0], "--threads: 0")]:
            with self.subTest(args=args):
                r = bench(*args)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn(text, r.stderr)


if __name__ == "__main__":
    unittest.main()
