#!/usr/bin/python3
# Copyright 2026 gr-spead authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""apps/spead_compare.py as the regenerate script runs it: a clean skip without spead2,
the whole pipeline (receivers fed in turn, rusage, parsing, table, tidy CSV, ratios)
over stand-in "spead2" tools that wrap gr-spead's own, failures that say which tool and
why, and, where spead2's tools are given (SPEAD2_BIN_DIR), a short real comparison."""

import csv
import os
import statistics
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "apps", "spead_compare.py")
APPS = os.environ["GR_SPEAD_APPS_DIR"]
HEADER = ["bench", "impl", "packet_bytes", "offered_gbps", "trial", "metric", "value"]
PER_TRIAL = ["cpu_user_s_per_gib", "cpu_sys_s_per_gib", "cpu_s_per_gib", "heaps_received",
             "heaps_sent", "gbps"]


def compare(*args, env=None, timeout=300):
    environment = dict(os.environ)
    environment.pop("SPEAD2_BIN_DIR", None)
    environment.update(env or {})
    return subprocess.run([sys.executable, SCRIPT, *map(str, args)], capture_output=True,
                          text=True, timeout=timeout, env=environment)


def write_wrapper(path, target, log, drop=(), exit_code=None):
    """An executable Python script standing in for a tool: it notes its name in `log`
    and then becomes `target` without the flags in `drop` (or exits with exit_code)."""
    with open(path, "w") as f:
        f.write("#!/usr/bin/python3\nimport os, sys\n"
                f"with open({log!r}, 'a') as f:\n"
                f"    f.write({os.path.basename(path)!r} + '\\n')\n")
        if exit_code is not None:
            f.write(f"print('stand-in failing on purpose', file=sys.stderr)\n"
                    f"sys.exit({exit_code})\n")
        else:
            f.write(f"args = [a for a in sys.argv[1:] if a not in {list(drop)!r}]\n"
                    f"os.execv({target!r}, [{target!r}] + args)\n")
    os.chmod(path, 0o755)


def read_rows(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


def value(rows, bench, impl, packet, trial, metric):
    found = [r for r in rows if r[0] == bench and r[1] == impl and r[2] == str(packet)
             and r[4] == str(trial) and r[5] == metric]
    if len(found) != 1:
        raise AssertionError(f"{len(found)} rows for {bench} {impl} {packet} {trial} {metric}")
    return float(found[0][6])


class StandIns(unittest.TestCase):
    """spead2_send/spead2_recv played by gr-spead's own tools behind wrappers, so the
    pipeline runs where spead2 is not installed (CI)."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.log = os.path.join(self.tmp.name, "started.log")
        self.spead2_dir = os.path.join(self.tmp.name, "spead2")
        self.apps_dir = os.path.join(self.tmp.name, "apps")
        os.mkdir(self.spead2_dir)
        os.mkdir(self.apps_dir)
        for ours, theirs in (("spead_send", "spead2_send"), ("spead_recv", "spead2_recv")):
            real = os.path.join(APPS, ours)
            # spead_recv has no memory pool option: it always recycles its heap buffers.
            write_wrapper(os.path.join(self.spead2_dir, theirs), real, self.log,
                          drop=["--mem-pool"])
            write_wrapper(os.path.join(self.apps_dir, ours), real, self.log)
        self.csv = os.path.join(self.tmp.name, "out.csv")

    def started(self):
        with open(self.log) as f:
            return f.read().split()

    def test_every_trial_gives_each_metric_per_trial_and_median_in_the_tidy_csv(self):
        run = compare("--spead2-bin", self.spead2_dir, "--apps", self.apps_dir,
                      "--packet", 1472, 8972, "--rate", 0.5, "--heaps", 20, "--trials", 2,
                      "--csv", self.csv)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        header, rows = read_rows(self.csv)
        self.assertEqual(header, HEADER)
        self.assertTrue(all(len(r) == 7 for r in rows))
        self.assertEqual({r[0] for r in rows}, {"compare_recv"})
        for packet in (1472, 8972):
            for impl in ("spead2", "gr-spead"):
                for trial in (1, 2, "median"):
                    self.assertEqual(value(rows, "compare_recv", impl, packet, trial,
                                           "heaps_received"), 20)
                    self.assertEqual(value(rows, "compare_recv", impl, packet, trial,
                                           "heaps_sent"), 20)
                    user, system, total = (value(rows, "compare_recv", impl, packet, trial, m)
                                           for m in PER_TRIAL[:3])
                    self.assertGreater(total, 0)
                    if trial != "median":
                        self.assertAlmostEqual(total, user + system,
                                               delta=1e-5 * total + 1e-6)
                    self.assertGreater(value(rows, "compare_recv", impl, packet, trial,
                                             "gbps"), 0)
                offered = {r[3] for r in rows if r[1] == impl and r[2] == str(packet)}
                self.assertEqual(offered, {"0.5"})
        self.assertEqual(len(rows), 2 * (2 * 3 * len(PER_TRIAL) + 3))

    def test_the_cpu_ratio_is_ours_over_spead2_per_trial_and_its_median(self):
        run = compare("--spead2-bin", self.spead2_dir, "--apps", self.apps_dir,
                      "--packet", 1472, "--rate", 0.5, "--heaps", 20, "--trials", 3,
                      "--csv", self.csv)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        _, rows = read_rows(self.csv)
        ratios = []
        for trial in (1, 2, 3):
            ours = value(rows, "compare_recv", "gr-spead", 1472, trial, "cpu_s_per_gib")
            theirs = value(rows, "compare_recv", "spead2", 1472, trial, "cpu_s_per_gib")
            ratio = value(rows, "compare_recv", "ratio", 1472, trial, "cpu_ratio")
            self.assertAlmostEqual(ratio, ours / theirs, delta=1e-4 * ratio)
            ratios.append(ratio)
        median = value(rows, "compare_recv", "ratio", 1472, "median", "cpu_ratio")
        self.assertAlmostEqual(median, statistics.median(ratios), delta=1e-5 * median)
        self.assertIn(f"CPU s/GiB gr-spead/spead2: median {median:.3f}", run.stdout)

    def test_the_receiver_that_goes_first_alternates_from_trial_to_trial(self):
        run = compare("--spead2-bin", self.spead2_dir, "--apps", self.apps_dir,
                      "--packet", 1472, "--rate", 0.5, "--heaps", 5, "--trials", 3)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        receivers = [name for name in self.started() if name.endswith("_recv")]
        self.assertEqual(receivers, ["spead2_recv", "spead_recv", "spead_recv",
                                     "spead2_recv", "spead2_recv", "spead_recv"])
        self.assertEqual(self.started().count("spead2_send"), 6)
        self.assertNotIn("spead_send", self.started())

    def test_send_compares_both_senders_at_unlimited_rate(self):
        run = compare("--spead2-bin", self.spead2_dir, "--apps", self.apps_dir,
                      "--packet", 8972, "--trials", 2, "--send", "--no-recv",
                      "--send-heaps", 30, "--csv", self.csv)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        self.assertEqual(sorted(self.started()),
                         ["spead2_send", "spead2_send", "spead_send", "spead_send"])
        _, rows = read_rows(self.csv)
        self.assertEqual({r[0] for r in rows}, {"compare_send"})
        self.assertEqual({r[3] for r in rows}, {""})  # as fast as possible
        for impl in ("spead2", "gr-spead"):
            self.assertEqual(value(rows, "compare_send", impl, 8972, "median", "heaps_sent"),
                             30)
            self.assertGreater(value(rows, "compare_send", impl, 8972, 1, "gbps"), 0)
            self.assertGreater(value(rows, "compare_send", impl, 8972, 2, "cpu_s_per_gib"), 0)
        for metric in ("cpu_ratio", "gbps_ratio"):
            self.assertGreater(value(rows, "compare_send", "ratio", 8972, "median", metric), 0)

    def test_rows_are_appended_under_a_single_header(self):
        for _ in range(2):
            run = compare("--spead2-bin", self.spead2_dir, "--apps", self.apps_dir,
                          "--packet", 1472, "--rate", 0.5, "--heaps", 5, "--trials", 1,
                          "--csv", self.csv)
            self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        header, rows = read_rows(self.csv)
        self.assertEqual(header, HEADER)
        self.assertNotIn(HEADER, rows)
        self.assertEqual(len(rows), 2 * (2 * 2 * len(PER_TRIAL) + 2))

    def test_a_failing_receiver_fails_the_run_and_is_named_with_its_exit_status(self):
        write_wrapper(os.path.join(self.spead2_dir, "spead2_recv"), "", self.log, exit_code=3)
        run = compare("--spead2-bin", self.spead2_dir, "--apps", self.apps_dir,
                      "--packet", 1472, "--rate", 0.5, "--heaps", 5, "--trials", 1,
                      "--csv", self.csv)
        self.assertEqual(run.returncode, 1, run.stdout + run.stderr)
        self.assertIn("FAILED: receive 1472 B trial 1 spead2: spead2_recv ended "
                      "(exit status 3) before binding port", run.stderr)
        self.assertIn("stand-in failing on purpose", run.stderr)
        self.assertIn("1 trial(s) failed", run.stderr)
        # The receiver that ran is still reported; no ratio without a pair.
        _, rows = read_rows(self.csv)
        self.assertEqual({r[1] for r in rows}, {"gr-spead"})


class Options(unittest.TestCase):
    def test_without_spead2_tools_it_skips_with_exit_status_77(self):
        with tempfile.TemporaryDirectory() as empty:
            run = compare("--spead2-bin", empty, "--apps", APPS)
        self.assertEqual(run.returncode, 77, run.stdout + run.stderr)
        self.assertIn("SKIPPED: spead2_send/spead2_recv not found", run.stdout)
        self.assertIn("(give --spead2-bin or SPEAD2_BIN_DIR)", run.stdout)

    def test_spead2_bin_dir_from_the_environment_is_used_when_no_option_is_given(self):
        with tempfile.TemporaryDirectory() as empty:
            run = compare("--apps", APPS, env={"SPEAD2_BIN_DIR": empty})
        self.assertEqual(run.returncode, 77, run.stdout + run.stderr)
        self.assertIn(f"not found in {empty}", run.stdout)

    def test_missing_gr_spead_tools_name_the_option_that_fixes_it(self):
        with tempfile.TemporaryDirectory() as tmp:
            for name in ("spead2_send", "spead2_recv"):
                write_wrapper(os.path.join(tmp, name), "/bin/true", os.devnull)
            empty = os.path.join(tmp, "empty")
            os.mkdir(empty)
            run = compare("--spead2-bin", tmp, "--apps", empty)
        self.assertEqual(run.returncode, 2, run.stdout + run.stderr)
        self.assertIn(f"spead_send/spead_recv not found in {empty}; give --apps DIR or "
                      "GR_SPEAD_APPS_DIR", run.stderr)

    def test_a_rate_per_packet_size_must_match_the_packet_sizes(self):
        run = compare("--packet", 1472, 8972, "--rate", 1, 2, 3)
        self.assertEqual(run.returncode, 2)
        self.assertIn("--rate: give one rate or one per packet size (2), not 3", run.stderr)


@unittest.skipUnless(os.environ.get("SPEAD2_BIN_DIR"),
                     "spead2's tools not given (set SPEAD2_BIN_DIR to their directory)")
class AgainstSpead2(unittest.TestCase):
    def test_a_short_run_reports_both_receivers_and_the_median_ratio(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "out.csv")
            run = compare("--heaps", 100, "--trials", 1, "--packet", 1472, "--apps", APPS,
                          "--csv", path, env={"SPEAD2_BIN_DIR": os.environ["SPEAD2_BIN_DIR"]})
            self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
            _, rows = read_rows(path)
        for impl in ("spead2", "gr-spead"):
            self.assertGreater(value(rows, "compare_recv", impl, 1472, 1, "cpu_s_per_gib"), 0)
            self.assertGreater(value(rows, "compare_recv", impl, 1472, 1, "heaps_received"),
                               0)
        self.assertGreater(value(rows, "compare_recv", "ratio", 1472, "median", "cpu_ratio"),
                           0)


if __name__ == "__main__":
    unittest.main()
