#!/usr/bin/python3
# Copyright 2026 gr-spead authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""docs/performance/make_figures.py on small synthetic CSVs: the figures whose rows are
there are written as PNGs, the others are skipped with a note, results.md holds the
medians, and a malformed CSV stops it with the file and line."""

import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "docs", "performance", "make_figures.py")
HEADER = "bench,impl,packet_bytes,offered_gbps,trial,metric,value\n"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

# Two trials and their median per receiver, and the ratio rows, as spead_compare.py
# writes them; plus spead_bench mem rows.
COMPARE_RECV = "".join(
    f"compare_recv,{impl},{packet},{rate},{trial},{metric},{value}\n"
    for packet, rate in ((1472, 3), (8972, 5))
    for impl, cpu in (("spead2", 1.0), ("gr-spead", 0.5))
    for trial, scale in ((1, 0.9), (2, 1.1), ("median", 1.0))
    for metric, value in (("cpu_s_per_gib", cpu * scale), ("gbps", rate * 0.98 * scale),
                          ("heaps_received", 1500)))
COMPARE_RECV += "".join(f"compare_recv,ratio,{packet},{rate},{trial},cpu_ratio,{value}\n"
                        for packet, rate in ((1472, 3), (8972, 5))
                        for trial, value in ((1, 0.45), (2, 0.55), ("median", 0.5)))
MEM = "".join(f"mem,gr-spead,{packet},0,{trial},ratio_to_memcpy,{value}\n"
              for packet in (1472, 8972)
              for trial, value in ((1, 0.61), (2, 0.63), (3, 0.62)))

# regenerate's callgrind rows: three trials per receive queue, gr-spead's with
# packets_per_batch; spead2's only where its tools were found.
IBV_GR_SPEAD = "".join(
    f"{bench},gr-spead,8972,,{trial},{metric},{value}\n"
    for bench, base in (("ibv_recv_slots", 450), ("ibv_recv_mprq", 440))
    for trial, step in ((1, 10), (2, 0), (3, -10))
    for metric, value in (("instructions_per_packet", base + step),
                          ("instructions_per_packet_with_copy", 9400),
                          ("packets", 2000), ("packets_per_batch", 4.5)))
IBV_SPEAD2 = "".join(
    f"{bench},spead2,8972,,{trial},{metric},{value}\n"
    for bench, base in (("ibv_recv_slots", 540), ("ibv_recv_mprq", 580))
    for trial, step in ((1, -10), (2, 0), (3, 10))
    for metric, value in (("instructions_per_packet", base + step),
                          ("instructions_per_packet_with_copy", 9450), ("packets", 2002)))

# spead_bench mem and regenerate's spead2-mem-decode: three trials and the median per
# packet size, the median row being the middle trial.
def mem_rows(impl, figures, spread):
    """figures: (packet, median Gb/s, memcpy Gb/s); spread: the trials' scale factors."""
    return "".join(
        f"mem,{impl},{packet},,{trial},{metric},{value}\n"
        for packet, gbps, memcpy in figures
        for trial, scale in zip((1, 2, 3, "median"), (*spread, 1.0))
        for metric, value in (("gbps", gbps * scale), ("memcpy_gbps", memcpy),
                              ("ratio_to_memcpy", gbps * scale / memcpy)))


MEM_GR_SPEAD = mem_rows("gr-spead", ((1472, 40, 80), (8972, 90, 100)), (0.95, 1.0, 1.05))
MEM_SPEAD2 = mem_rows("spead2", ((1472, 50, 80), (8972, 60, 100)), (1.05, 1.0, 0.95))


def paired_mem_rows(impl, ratios):
    """regenerate's alternated pairs as spead_bench mem --round and spead2-mem-decode
    --round write them: per pair (from 1) and packet size, three runs numbered on from
    the earlier pairs' (ratios r - 0.01, r and r + 0.01 of a 100 Gb/s memcpy) and the
    pair's medians as bench mem_pair. ratios: {packet: [r per pair, None where the side
    has no rows]}."""
    rows = ""
    for packet, by_pair in ratios.items():
        for pair, ratio in enumerate(by_pair, start=1):
            if ratio is None:
                continue
            for run, step in enumerate((-0.01, 0, 0.01)):
                trial = (pair - 1) * 3 + run + 1
                r = round(ratio + step, 4)
                rows += "".join(f"mem,{impl},{packet},,{trial},{metric},{value}\n"
                                for metric, value in (("gbps", round(r * 100, 4)),
                                                      ("memcpy_gbps", 100),
                                                      ("ratio_to_memcpy", r)))
            rows += "".join(f"mem_pair,{impl},{packet},,{pair},{metric},{value}\n"
                            for metric, value in (("gbps", round(ratio * 100, 4)),
                                                  ("memcpy_gbps", 100),
                                                  ("ratio_to_memcpy", ratio)))
    return rows


# Three pairs: gr-spead ahead in every complete pair but the second at 8972 B, level in
# the third (which counts), spead2's third at 1472 B missing.
PAIRS_GR_SPEAD = paired_mem_rows("gr-spead", {1472: [0.80, 0.82, 0.79],
                                              8972: [0.99, 0.93, 0.96]})
PAIRS_SPEAD2 = paired_mem_rows("spead2", {1472: [0.75, 0.76, None],
                                          8972: [0.97, 0.95, 0.96]})


def make_figures(*args):
    return subprocess.run([sys.executable, "-B", SCRIPT, *args], capture_output=True,
                          text=True, timeout=120)


class Figures(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.dir = tmp.name
        self.out = os.path.join(self.dir, "out")

    def write(self, name, text):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def assertPng(self, name):
        path = os.path.join(self.out, name)
        self.assertTrue(os.path.isfile(path), f"{name} was not written")
        with open(path, "rb") as f:
            content = f.read()
        self.assertTrue(content.startswith(PNG_MAGIC), f"{name} is not a PNG")
        self.assertGreater(len(content), 5000, f"{name} is nearly empty")

    def results_of(self, png, *args):
        """Runs make_figures with args into self.out, checks that it drew png, and
        returns the results.md it wrote."""
        run = make_figures("--out", self.out, *args)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        self.assertPng(png)
        with open(os.path.join(self.out, "results.md")) as f:
            return f.read()

    def results_of_gr_spead_alone(self, png, name, rows):
        """results_of() a csv `name` of gr-spead's `rows` alone: spead2 is never named."""
        text = self.results_of(png, self.write(name, HEADER + rows))
        self.assertNotIn("spead2", text)
        return text

    def test_figures_with_data_are_written_as_pngs(self):
        run = make_figures("--out", self.out, self.write("compare.csv", HEADER + COMPARE_RECV),
                           self.write("bench.csv", HEADER + MEM))
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        self.assertPng("receive_vs_spead2.png")
        self.assertPng("mem_vs_memcpy.png")
        self.assertIn(f"wrote {os.path.join(self.out, 'receive_vs_spead2.png')}", run.stdout)

    def test_spead_bench_rows_draw_the_loss_and_rate_figures(self):
        # As spead_bench --csv writes them: trials at each rate tried, the highest
        # lossless rate as a median row, and an empty offered rate for "as fast as
        # possible".
        rows = "".join(f"recv,gr-spead,{packet},{rate},{trial},loss_fraction,{loss}\n"
                       for packet in (1472, 8972)
                       for rate, loss in ((2, 0), (4, 0), (6, 0.002))
                       for trial in (1, 2, 3))
        rows += "recv,gr-spead,1472,4,median,lossless_gbps,4\n"
        rows += "".join(f"send,gr-spead,8972,,{trial},gbps,{20 + trial}\n"
                        for trial in (1, 2, 3))
        run = make_figures("--out", self.out, self.write("bench.csv", HEADER + rows))
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        self.assertPng("loss_vs_rate.png")
        self.assertPng("blocks.png")
        with open(os.path.join(self.out, "results.md")) as f:
            text = f.read()
        self.assertIn("| 8972 | unlimited | gr-spead | 22 |", text)
        self.assertIn("| 1472 | 4 | gr-spead | 4 | 0 |\n| 1472 | 6 | gr-spead |  | 0.002 |", text)

    def test_a_sender_limited_search_is_a_lower_bound_in_the_table_and_the_figure(self):
        # spead_bench --csv of a search whose sender reached 1.89 of the 2 Gb/s asked
        # without loss: lossless at >= 1.89 Gb/s, never a rate of 0.
        rows = "".join(f"recv,gr-spead,1472,2,1,{metric},{value}\n"
                       for metric, value in (("gbps", 1.89), ("loss_fraction", 0)))
        rows += ("recv,gr-spead,1472,2,median,lossless_gbps,1.89\n"
                 "recv,gr-spead,1472,2,median,sender_limited,1\n"
                 "recv,gr-spead,8972,6,median,lossless_gbps,6\n"
                 "recv,gr-spead,8972,6,median,sender_limited,0\n")
        run = make_figures("--out", self.out, self.write("bench.csv", HEADER + rows))
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        self.assertPng("blocks.png")
        self.assertIn("note: blocks.png: recv at 1472 B is a lower bound (sender-limited)",
                      run.stdout)
        self.assertNotIn("recv at 8972 B is a lower bound", run.stdout)
        with open(os.path.join(self.out, "results.md")) as f:
            text = f.read()
        self.assertIn("| 1472 | 2 | gr-spead | 1.89 | ≥ 1.89 | 1 |", text)
        self.assertIn("| 8972 | 6 | gr-spead |  | 6 | 0 |", text)

    def test_a_figure_without_its_rows_is_skipped_with_a_note(self):
        run = make_figures("--out", self.out, self.write("compare.csv", HEADER + COMPARE_RECV))
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        self.assertIn("note: skipped loss_vs_rate.png: no loss_fraction rows from "
                      "spead_bench recv or loopback", run.stdout)
        self.assertIn("note: skipped send_vs_spead2.png: no compare_send rows", run.stdout)
        self.assertIn("note: skipped mem_vs_memcpy.png", run.stdout)
        self.assertEqual(sorted(os.listdir(self.out)), ["receive_vs_spead2.png", "results.md"])

    def test_results_md_holds_the_median_rows(self):
        run = make_figures("--out", self.out, self.write("compare.csv", HEADER + COMPARE_RECV),
                           self.write("bench.csv", HEADER + MEM))
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        with open(os.path.join(self.out, "results.md")) as f:
            text = f.read()
        self.assertIn("| packet (B) | offered (Gb/s) | impl | cpu_ratio | cpu_s_per_gib | "
                      "gbps | heaps_received |", text)
        self.assertIn("| 1472 | 3 | gr-spead |  | 0.5 | 2.94 | 1500 |", text)
        self.assertIn("| 8972 | 5 | ratio | 0.5 |  |  |  |", text)
        # No median row for mem: the median of the three trials.
        self.assertIn("| 8972 |  | gr-spead | 0.62 |", text)

    def test_doc_blocks_are_filled_with_medians_or_say_the_data_is_absent(self):
        doc = self.write("performance.md",
                         "# P\n<!-- generated: headline_recv -->\nold\n<!-- end generated -->\n"
                         "text\n<!-- generated: loopback -->\nold\n<!-- end generated -->\n")
        run = make_figures("--out", self.out, "--doc", doc,
                           self.write("compare.csv", HEADER + COMPARE_RECV))
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        with open(doc) as f:
            text = f.read()
        self.assertNotIn("old", text)
        self.assertIn("| 1472 | 3 Gb/s | 1 | 0.5 | 0.500 | 2.94 | 2.94 |\n", text)
        self.assertIn("| 8972 | 5 Gb/s | 1 | 0.5 | 0.500 | 4.9 | 4.9 |\n", text)
        self.assertIn("<!-- generated: loopback -->\n*No `loopback` data in this run", text)
        self.assertTrue(text.startswith("# P\n") and "\ntext\n" in text)

    def test_ibv_figure_and_tables_show_spead2_beside_gr_spead_with_the_ratio(self):
        doc = self.write("performance.md",
                         "<!-- generated: ibv_recv_mprq -->\nold\n<!-- end generated -->\n")
        run = make_figures("--out", self.out, "--doc", doc,
                           self.write("ibv.csv", HEADER + IBV_GR_SPEAD + IBV_SPEAD2))
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        self.assertPng("ibv_instructions.png")
        with open(os.path.join(self.out, "results.md")) as f:
            text = f.read()
        # Medians 450 and 540 (slots), 440 and 580 (mprq); 9400 / 9450 with the copy.
        self.assertIn("| 8972 |  | gr-spead | 450 | 9400 | 2000 | 4.5 |\n"
                      "| 8972 |  | spead2 | 540 | 9450 | 2002 |  |\n"
                      "| 8972 |  | gr-spead/spead2 | 0.833 | 0.995 |  |  |\n", text)
        self.assertIn("| 8972 |  | gr-spead/spead2 | 0.759 | 0.995 |  |  |\n", text)
        with open(doc) as f:
            filled = f.read()
        self.assertIn("| 8972 |  | spead2 | 580 | 9450 | 2002 |  |\n"
                      "| 8972 |  | gr-spead/spead2 | 0.759 | 0.995 |  |  |\n"
                      "<!-- end generated -->", filled)

    def test_ibv_figure_and_tables_without_spead2_rows_show_gr_spead_alone(self):
        text = self.results_of_gr_spead_alone("ibv_instructions.png", "ibv.csv", IBV_GR_SPEAD)
        self.assertIn("| 8972 |  | gr-spead | 440 | 9400 | 2000 | 4.5 |\n", text)

    def test_mem_figure_and_tables_show_spead2_beside_gr_spead_with_the_ratio(self):
        doc = self.write("performance.md",
                         "<!-- generated: mem -->\nold\n<!-- end generated -->\n")
        text = self.results_of("mem_vs_memcpy.png", "--doc", doc,
                               self.write("bench.csv", HEADER + MEM_GR_SPEAD),
                               self.write("spead2_mem.csv", HEADER + MEM_SPEAD2))
        # Per packet size: each side's medians, then gr-spead/spead2 of the rate
        # (40/50, 90/60) and of its fraction of memcpy (0.5/0.625, 0.9/0.6).
        table = ("| packet (B) | offered (Gb/s) | impl | gbps | ratio_to_memcpy | memcpy_gbps |\n"
                 "|---:|---:|---|---:|---:|---:|\n"
                 "| 1472 |  | gr-spead | 40 | 0.5 | 80 |\n"
                 "| 1472 |  | spead2 | 50 | 0.625 | 80 |\n"
                 "| 1472 |  | gr-spead/spead2 | 0.800 | 0.800 |  |\n"
                 "| 8972 |  | gr-spead | 90 | 0.9 | 100 |\n"
                 "| 8972 |  | spead2 | 60 | 0.6 | 100 |\n"
                 "| 8972 |  | gr-spead/spead2 | 1.500 | 1.500 |  |\n")
        self.assertIn("## mem\n\nMedians of 3 trial(s) per row.\n\n" + table, text)
        with open(doc) as f:
            self.assertEqual(f.read(), "<!-- generated: mem -->\nMedians of 3 trial(s) per "
                             "row.\n\n" + table + "<!-- end generated -->\n")

    def test_mem_figure_and_tables_without_spead2_rows_show_gr_spead_alone(self):
        text = self.results_of_gr_spead_alone("mem_vs_memcpy.png", "bench.csv", MEM_GR_SPEAD)
        self.assertIn("| 1472 |  | gr-spead | 40 | 0.5 | 80 |\n"
                      "| 8972 |  | gr-spead | 90 | 0.9 | 100 |\n", text)

    def test_mem_pairs_table_says_in_which_pairs_gr_spead_is_at_least_spead2(self):
        doc = self.write("performance.md",
                         "<!-- generated: mem_pair -->\nold\n<!-- end generated -->\n")
        text = self.results_of("mem_vs_memcpy.png", "--doc", doc,
                               self.write("bench.csv", HEADER + PAIRS_GR_SPEAD),
                               self.write("spead2_mem.csv", HEADER + PAIRS_SPEAD2))
        table = ("| pair | packet (B) | gr-spead ratio to memcpy | spead2 ratio to memcpy | "
                 "gr-spead ≥ spead2 |\n"
                 "|---:|---:|---:|---:|---|\n"
                 "| 1 | 1472 | 0.800 | 0.750 | yes |\n"
                 "| 1 | 8972 | 0.990 | 0.970 | yes |\n"
                 "| 2 | 1472 | 0.820 | 0.760 | yes |\n"
                 "| 2 | 8972 | 0.930 | 0.950 | **no** |\n"
                 "| 3 | 1472 | 0.790 |  | (one side missing) |\n"
                 "| 3 | 8972 | 0.960 | 0.960 | yes |\n"
                 "\n"
                 "gr-spead ≥ spead2 in 4 of 5 pairs and sizes: 1472 B 2 of 2, "
                 "8972 B 2 of 3.\n")
        self.assertIn("## mem_pair\n\n", text)
        self.assertIn(table, text)
        with open(doc) as f:
            filled = f.read()
        self.assertTrue(filled.startswith("<!-- generated: mem_pair -->\nEach pair: "))
        self.assertTrue(filled.endswith(table + "<!-- end generated -->\n"), filled)

    def test_mem_table_of_paired_rounds_takes_the_median_over_every_round(self):
        # gr-spead at 1472 B: runs 0.79-0.81, 0.81-0.83, 0.78-0.80: median 0.80 of nine,
        # where the pairs' own medians are 0.80, 0.82 and 0.79.
        text = self.results_of("mem_vs_memcpy.png",
                               self.write("bench.csv", HEADER + PAIRS_GR_SPEAD),
                               self.write("spead2_mem.csv", HEADER + PAIRS_SPEAD2))
        self.assertIn("## mem\n\nMedians of 9 trial(s) per row.\n", text)
        self.assertIn("| 1472 |  | gr-spead | 80 | 0.8 | 100 |\n"
                      "| 1472 |  | spead2 | 75.5 | 0.755 | 100 |\n", text)
        self.assertIn("| 8972 |  | gr-spead | 96 | 0.96 | 100 |\n", text)

    def test_without_pairs_the_pairs_block_says_the_data_is_absent(self):
        doc = self.write("performance.md",
                         "<!-- generated: mem_pair -->\nold\n<!-- end generated -->\n")
        text = self.results_of("mem_vs_memcpy.png", "--doc", doc,
                               self.write("bench.csv", HEADER + MEM_GR_SPEAD),
                               self.write("spead2_mem.csv", HEADER + MEM_SPEAD2))
        self.assertNotIn("mem_pair", text)
        with open(doc) as f:
            self.assertIn("*No `mem_pair` data in this run", f.read())

    def test_mem_figure_with_spead2_rows_alone_is_drawn_without_a_ratio(self):
        text = self.results_of("mem_vs_memcpy.png",
                               self.write("spead2_mem.csv", HEADER + MEM_SPEAD2))
        self.assertIn("| 1472 |  | spead2 | 50 | 0.625 | 80 |\n", text)
        self.assertNotIn("gr-spead", text)

    def test_a_bad_value_names_the_file_and_line(self):
        path = self.write("bad.csv", HEADER + COMPARE_RECV.splitlines(True)[0] +
                          "compare_recv,gr-spead,1472,3,1,gbps,fast\n")
        run = make_figures("--out", self.out, path)
        self.assertEqual(run.returncode, 2)
        self.assertEqual(run.stderr,
                         f"make_figures: {path}:3: value 'fast' is not a number\n")
        self.assertFalse(os.path.exists(self.out))

    def test_a_row_with_missing_fields_names_the_file_and_line(self):
        path = self.write("short.csv", HEADER + "compare_recv,gr-spead,1472,3,1,gbps\n")
        run = make_figures("--out", self.out, path)
        self.assertEqual(run.returncode, 2)
        self.assertIn(f"make_figures: {path}:2: 6 fields, expected 7", run.stderr)

    def test_a_wrong_header_names_the_file_and_line_one(self):
        path = self.write("header.csv", "bench,impl,packet,value\n")
        run = make_figures("--out", self.out, path)
        self.assertEqual(run.returncode, 2)
        self.assertIn(f"make_figures: {path}:1: the header is 'bench,impl,packet,value'",
                      run.stderr)

    def test_a_trial_that_is_neither_a_number_nor_median_is_refused(self):
        path = self.write("trial.csv", HEADER + "mem,gr-spead,1472,0,best,ratio_to_memcpy,1\n")
        run = make_figures("--out", self.out, path)
        self.assertEqual(run.returncode, 2)
        self.assertIn(f"{path}:2: trial 'best' is neither a number nor 'median'", run.stderr)


if __name__ == "__main__":
    unittest.main()
