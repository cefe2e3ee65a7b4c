#!/usr/bin/env python3
# Copyright 2026 gr-spead authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""spead_bench's modes run end to end and print their figures (short runs at low rates;
no speed is asserted here: figures belong in the bench output, not in tests)."""

import csv
import os
import re
import subprocess
import tempfile
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
        # spead2_send's and spead_send's default
        self.assertRegex(r.stdout, r"packet 8972 run 1/1: .* heaps in [0-9.e+-]+ s, 4 in flight")
        self.assert_figure(r.stdout, "send_gbps_8972")

    def test_recv_finds_a_lossless_rate_and_says_which_buffer_it_used(self):
        r = bench("recv", *SHORT, *SEARCH)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("receive socket buffer: asked 131072 bytes, net.core.rmem_max", r.stdout)
        self.assertRegex(r.stdout, r"recv packet 8972 run 1/1 at 0.2 Gb/s: sent \d+ heaps")
        self.assert_figure(r.stdout, "recv_lossless_gbps_8972")

    def test_a_search_the_sender_cannot_keep_up_with_never_reports_zero(self):
        # Asked 1000 Gb/s for a moment, the sender falls short: either the receiver keeps
        # up (a lower bound: lossless at >= what the sender reached, sender-limited) or
        # it loses heaps (no lossless rate). Never "highest lossless rate 0".
        r = bench("recv", "--packet", 8972, "--heap-size", 65536, "--seconds", 0.002,
                  "--rates", 1000, "--runs", 1, "--refine", 0, "--buffer", 131072)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("highest lossless rate 0 ", r.stdout)
        self.assertRegex(r.stdout, r"(?m)^recv packet 8972: (lossless at >= [0-9.e+-]+ Gb/s, "
                                   r"sender-limited .*the sender reached only|"
                                   r"no lossless rate: heaps lost at 1000 Gb/s)")
        self.assertRegex(r.stdout, r"(?m)^recv_lossless_sender_limited_8972: [01]$")
        limited = re.search(r"(?m)^recv_lossless_sender_limited_8972: 1$", r.stdout)
        figure = float(re.search(r"(?m)^recv_lossless_gbps_8972: (.*)$", r.stdout).group(1))
        self.assertEqual(figure > 0, bool(limited), r.stdout)

    def test_loopback_runs_the_source_flowgraph(self):
        r = bench("loopback", *SHORT, *SEARCH, timeout=100)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("spead.source (udp, 127.0.0.1) -> blocks.null_sink", r.stdout)
        # a figure, a lower bound when the loaded machine's sender fell short, or none
        # when even the lowest rate lost heaps: the search ran and said which
        self.assertRegex(r.stdout, r"loopback packet 8972: (highest lossless rate [0-9.e+-]+ "
                                   r"Gb/s|lossless at >= [0-9.e+-]+ Gb/s, sender-limited|"
                                   r"no lossless rate: heaps lost at)")
        self.assert_figure(r.stdout, "loopback_lossless_gbps_8972")

    def test_loopback_continuous_runs_both_modes_and_prints_both_figures(self):
        # one rate, one run per mode: short enough to sit beside the test above
        r = bench("loopback", "--continuous", *SHORT, "--rates", 0.2, "--runs", 1,
                  "--refine", 0, "--buffer", 131072, timeout=100)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("then the source in continuous mode", r.stdout)
        self.assertRegex(r.stdout, r"loopback continuous packet 8972 run 1/1 at 0.2 Gb/s: "
                                   r"sent \d+ heaps")
        # a figure, or a lower bound when the sender could not reach the rate
        self.assertRegex(r.stdout, r"(?m)^loopback packet 8972: heaps mode (>= )?[0-9.e+-]+ "
                                   r"Gb/s( \(sender-limited\))?, continuous mode (>= )?"
                                   r"[0-9.e+-]+ Gb/s")
        self.assert_figure(r.stdout, "loopback_lossless_gbps_8972")
        self.assert_figure(r.stdout, "loopback_continuous_lossless_gbps_8972")

    def test_sink_runs_the_sink_flowgraph(self):
        r = bench("sink", *SHORT, "--runs", 1)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"sink packet 8972, source none: [0-9.e+-]+ Gb/s")
        self.assert_figure(r.stdout, "sink_gbps_8972")

    def test_sink_alternate_puts_each_sink_run_beside_a_send_run(self):
        r = bench("sink", *SHORT, "--runs", 2, "--alternate")
        self.assertEqual(r.returncode, 0, r.stderr)
        rounds = re.findall(r"packet 8972 round \d/2, source none: sink ([0-9.e+-]+) Gb/s, "
                            r"send ([0-9.e+-]+) Gb/s: sink / send ([0-9.e+-]+)", r.stdout)
        self.assertEqual(len(rounds), 2, r.stdout)
        # the send run keeps as many heaps in flight as the sink's stream (8)
        self.assertEqual(len(re.findall(r"packet 8972 run \d/2: .* heaps in [0-9.e+-]+ s, "
                                        r"8 in flight", r.stdout)), 2, r.stdout)
        for sink, send, ratio in rounds:
            self.assertGreater(float(send), 0)
            self.assertAlmostEqual(float(ratio), float(sink) / float(send), places=3)
        self.assert_figure(r.stdout, "sink_vs_send_8972")
        self.assertNotIn("null_source", r.stdout)

    def test_sink_alternate_puts_every_source_beside_the_same_send_run(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "bench.csv")
            r = bench("sink", *SHORT, "--runs", 1, "--alternate", "--source", "none",
                      "null", "--csv", out)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out) as f:
                rows = list(csv.DictReader(f))
        sends = re.findall(r"send ([0-9.e+-]+) Gb/s: sink / send", r.stdout)
        self.assertEqual(len(sends), 2, r.stdout)
        self.assertEqual(sends[0], sends[1])  # one send run, both sources beside it
        self.assert_figure(r.stdout, "sink_vs_send_8972")
        self.assert_figure(r.stdout, "sink_vs_send_null_source_8972")
        benches = {row["bench"] for row in rows}
        self.assertLessEqual({"send", "sink", "sink_null_source", "sink_vs_send",
                              "sink_vs_send_null_source"}, benches)
        # one send run's rows, not one per source
        self.assertEqual(
            [row["trial"] for row in rows if row["bench"] == "send" and row["metric"] == "gbps"],
            ["1"])

    def test_loopback_alternate_puts_the_source_beside_recv(self):
        r = bench("loopback", *SHORT, *SEARCH, "--alternate")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"loopback / recv packet 8972 pair 1/1: [0-9.e+-]+ "
                                   r"\(loopback ")
        self.assertRegex(r.stdout, r"loopback / recv packet 8972: [0-9.e+-]+ \(median of 1")
        self.assertIn("loopback_vs_recv_8972: ", r.stdout)

    def test_loopback_alternate_pairs_take_the_median_and_keep_the_first_searches(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "bench.csv")
            r = bench("loopback", *SHORT, *SEARCH, "--alternate", "--pairs", 3,
                      "--csv", out, timeout=180)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out) as f:
                rows = list(csv.DictReader(f))
        pairs = [float(x) for x in re.findall(
            r"loopback / recv packet 8972 pair \d/3: ([0-9.e+-]+) ", r.stdout)]
        self.assertEqual(len(pairs), 3, r.stdout)
        ratio = {row["trial"]: float(row["value"]) for row in rows
                 if row["bench"] == "loopback_vs_recv"}
        self.assertEqual(set(ratio), {"1", "2", "3", "median"})
        self.assertAlmostEqual(ratio["median"], sorted(pairs)[1], places=4)
        figure = re.search(r"(?m)^loopback_vs_recv_8972: ([0-9.e+-]+)$", r.stdout)
        self.assertAlmostEqual(float(figure.group(1)), ratio["median"], places=4)
        # one search of each side in the tables: one median row each
        for side in ("recv", "loopback"):
            self.assertEqual(len([row for row in rows if row["bench"] == side and
                                  row["trial"] == "median" and
                                  row["metric"] == "lossless_gbps"]), 1, side)

    def test_mem_still_compares_with_memcpy(self):
        r = bench("mem", "--packet", 8972, "--total-bytes", 1 << 22, "--repeat", 1)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("memcpy", r.stdout)

    def test_mem_timed_runs_take_no_page_faults(self):
        # Every buffer a timed run writes (memcpy's ring, the assembler's pool, the
        # placement's chunks) is touched before the first: the warm-up pass takes the
        # faults (256 per 1 MiB heap buffer), a timed run none of them. (Below one
        # buffer's 256 rather than 0: the kernel may fault a page for its own reasons,
        # e.g. NUMA balancing, on a machine that has it.)
        for mode in ([], ["--continuous"]):
            with self.subTest(mode=mode):
                r = bench("mem", *mode, "--packet", 8972, "--total-bytes", 1 << 24,
                          "--repeat", 2)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertRegex(r.stdout, r"warm-up pass \(not counted\): page faults "
                                           r"memcpy \d+, decode\+(assemble|place) \d+")
                faults = re.findall(r"run \d+: .*; page faults memcpy (\d+), "
                                    r"decode\+(?:assemble|place) (\d+)", r.stdout)
                self.assertEqual(len(faults), 2, r.stdout)
                for copy, decode in faults:
                    self.assertLess(int(copy), 256, r.stdout)
                    self.assertLess(int(decode), 256, r.stdout)

    def test_mem_threads_places_with_two_readers_and_prints_the_ratio(self):
        # The bench fails (exit 1) unless every heap of both runs is placed whole.
        r = bench("mem", "--continuous", "--threads", 2, "--packet", 8972,
                  "--heap-size", 65536, "--total-bytes", 1 << 25, "--repeat", 1)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"run 1: 1 thread [0-9.e+-]+ Gb/s, 2 threads "
                                   r"[0-9.e+-]+ Gb/s, ratio [0-9.e+-]+; memcpy alone: "
                                   r"ratio [0-9.e+-]+; share [0-9.e+-]+")
        self.assert_figure(r.stdout, "mem_threads_2_ratio_8972")
        self.assert_figure(r.stdout, "mem_threads_2_memcpy_ratio_8972")
        self.assert_figure(r.stdout, "mem_threads_2_share_8972")

    def test_recv_continuous_threads_compares_cpu_per_gib_of_1_and_2_threads(self):
        r = bench("recv", "--continuous", "--threads", 2, *SHORT, "--rates", 0.2,
                  "--runs", 1, "--buffer", 131072, timeout=100)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"packet 8972 run 1, 1 thread: \d+ of \d+ heaps complete")
        self.assertRegex(r.stdout, r"packet 8972 run 1, 2 threads: \d+ of \d+ heaps complete")
        # a figure, or none when the loaded machine lost every heap of a run
        self.assertRegex(r.stdout, r"(?m)^recv_threads (packet 8972: 1 thread .* ratio "
                                   r"[0-9.e+-]+|packet 8972: no figure)")


CSV_HEADER = "bench,impl,packet_bytes,offered_gbps,trial,metric,value"
NUMBER = r"[0-9.e+-]+"


class spead_bench_csv(unittest.TestCase):
    """--csv appends tidy rows (bench,impl,packet_bytes,offered_gbps,trial,metric,value)
    for a plotting script."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.dir.name, "bench.csv")

    def tearDown(self):
        self.dir.cleanup()

    def run_bench(self, *args, timeout=60):
        r = bench(*args, "--csv", self.path, timeout=timeout)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r

    def rows(self):
        with open(self.path, newline="") as f:
            return list(csv.DictReader(f))

    def values(self, bench_name, trial):
        """{metric: value} of one trial's rows."""
        return {row["metric"]: float(row["value"]) for row in self.rows()
                if row["bench"] == bench_name and row["trial"] == trial}

    def assert_cpu_adds_up(self, values):
        self.assertGreater(values["cpu_s_per_gib"], 0)
        self.assertAlmostEqual(values["cpu_s_per_gib"],
                               values["cpu_user_s_per_gib"] + values["cpu_sys_s_per_gib"],
                               delta=1e-5 * values["cpu_s_per_gib"])

    def test_recv_writes_the_header_and_a_trial_with_the_receive_sides_cpu(self):
        r = self.run_bench("recv", "--packet", 1472, "--rates", 1, "--runs", 1,
                           "--refine", 0, "--seconds", 0.5, "--buffer", 131072)
        with open(self.path) as f:
            self.assertEqual(f.readline().rstrip("\n"), CSV_HEADER)
        trial = [row for row in self.rows() if row["trial"] == "1"]
        self.assertEqual({(row["bench"], row["impl"], row["packet_bytes"],
                           row["offered_gbps"]) for row in trial},
                         {("recv", "gr-spead", "1472", "1")})
        values = self.values("recv", "1")
        self.assertGreater(values["heaps_received"], 0)
        self.assertEqual(values["packets_lost"],
                         values["packets_sent"] - values["packets_received"])
        # values are written to 6 significant digits
        self.assertAlmostEqual(values["loss_fraction"],
                               (values["heaps_sent"] - values["heaps_received"])
                               / values["heaps_sent"], delta=1e-6)
        self.assert_cpu_adds_up(values)
        self.assertIn("lossless_gbps", self.values("recv", "median"))
        self.assertIn(self.values("recv", "median")["sender_limited"], (0, 1))
        self.assertRegex(r.stdout, r"recv packet 1472 run 1/1 at 1 Gb/s: .*; receive side "
                                   r"%s user \+ %s sys = %s CPU s/GiB of heap payload "
                                   r"received" % (NUMBER, NUMBER, NUMBER))

    def test_every_trial_of_a_rate_search_has_its_rows(self):
        r = self.run_bench("recv", *SHORT, *SEARCH)
        printed = re.findall(r"recv packet 8972 run (\d+)/1 at (%s) Gb/s" % NUMBER, r.stdout)
        self.assertTrue(printed)
        written = [(row["trial"], row["offered_gbps"]) for row in self.rows()
                   if row["metric"] == "gbps" and row["trial"] != "median"]
        self.assertEqual(written, printed)

    def test_send_writes_its_rate_and_cpu_per_run_and_their_medians(self):
        self.run_bench("send", *SHORT, "--runs", 1)
        for trial in ("1", "median"):
            with self.subTest(trial=trial):
                values = self.values("send", trial)
                self.assertGreater(values["gbps"], 0)
                self.assert_cpu_adds_up(values)
        self.assertGreater(self.values("send", "1")["heaps_sent"], 0)
        self.assertEqual({row["offered_gbps"] for row in self.rows()}, {""})

    def test_mem_writes_its_rate_beside_memcpy(self):
        self.run_bench("mem", "--packet", 8972, "--total-bytes", 1 << 22, "--repeat", 1)
        values = self.values("mem", "1")
        self.assertEqual(set(values), {"gbps", "memcpy_gbps", "ratio_to_memcpy"})
        self.assertAlmostEqual(values["ratio_to_memcpy"],
                               values["gbps"] / values["memcpy_gbps"], delta=1e-4)
        self.assertEqual(self.values("mem", "median"), values)

    def test_mem_round_numbers_its_trials_on_and_writes_its_medians_as_mem_pair(self):
        # regenerate's third round of three runs: trials 7 to 9, the round's medians as
        # bench mem_pair, trial 3, and no median row of mem (make_figures takes the
        # median over every round's trials).
        self.run_bench("mem", "--packet", 8972, "--total-bytes", 1 << 22, "--repeat", 3,
                       "--round", 3)
        rows = self.rows()
        self.assertEqual(sorted({(row["bench"], row["trial"]) for row in rows}),
                         [("mem", "7"), ("mem", "8"), ("mem", "9"), ("mem_pair", "3")])
        ratios = sorted(self.values("mem", trial)["ratio_to_memcpy"]
                        for trial in ("7", "8", "9"))
        pair = self.values("mem_pair", "3")
        self.assertEqual(set(pair), {"gbps", "memcpy_gbps", "ratio_to_memcpy"})
        self.assertAlmostEqual(pair["ratio_to_memcpy"], ratios[1], delta=1e-5)

    def test_a_second_run_appends_rows_without_a_second_header(self):
        args = ["mem", "--packet", 8972, "--total-bytes", 1 << 22, "--repeat", 1]
        self.run_bench(*args)
        first = len(self.rows())
        self.run_bench(*args)
        with open(self.path) as f:
            lines = f.read().splitlines()
        self.assertEqual(lines.count(CSV_HEADER), 1)
        self.assertEqual(lines[0], CSV_HEADER)
        self.assertEqual(len(self.rows()), 2 * first)


class spead_bench_errors(unittest.TestCase):
    def test_unknown_mode_and_bad_values_are_usage_errors(self):
        for args, text in [(["warp"], "unknown mode 'warp'"),
                           (["recv", "--rates", "fast"], "--rates"),
                           (["loopback", "--frobnicate"], "--frobnicate"),
                           (["sink", "--source", "tap"], "--source: 'tap' is not a source"),
                           (["loopback", "--pairs", 0], "--pairs: 0"),
                           (["loopback", "--pairs", 2], "--pairs: only loopback --alternate"),
                           (["sink", "--source", "null", "null"],
                            "--source: 'null' is given twice"),
                           (["rdma", "--address", "nowhere"], "--address: 'nowhere'"),
                           (["rdma", "--sender-netns", "no-such-ns"],
                            "--sender-netns: 'no-such-ns' is not a network namespace"),
                           (["mem", "--sender-netns", "x"], "--sender-netns: only"),
                           (["mem", "--threads", 2], "add --continuous"),
                           (["mem", "--continuous", "--threads", 0], "--threads: 0"),
                           (["recv", "--threads", 2], "add --continuous"),
                           (["recv", "--continuous"], "give 2 or more"),
                           (["mem", "--alternate"], "--alternate: spead_bench mem has no"),
                           (["mem", "--round", -1], "--round: -1; give the round"),
                           (["mem", "--continuous", "--round", 1],
                            "--round: only spead_bench mem (heaps)"),
                           (["send", "--round", 1], "--round: only spead_bench mem"),
                           (["loopback", "--alternate", "--continuous"],
                            "--alternate: loopback --continuous"),
                           (["mem", "--csv", "/nonexistent/bench.csv"],
                            "--csv: cannot write '/nonexistent/bench.csv'")]:
            with self.subTest(args=args):
                r = bench(*args)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn(text, r.stderr)


if __name__ == "__main__":
    unittest.main()
