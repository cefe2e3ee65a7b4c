#!/usr/bin/env python3
# Copyright 2026 gr-spead authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""spead_recv and spead_send watched while they run (docs/monitoring.md): --progress
prints a line per interval whose heaps add up to what the tool counted at the end,
--metrics serves the stream's counters to Prometheus, and bad values name the flag."""

import os
import re
import signal
import subprocess
import time
import unittest
import urllib.request

from app_support import free_udp_port, receiver, stats, tool

APPS = os.environ["GR_SPEAD_APPS_DIR"]
LINE = re.compile(r"^(spead_recv|spead_send): (\d+\.\d\d) s: (\d+) heaps, "
                  r"(\d+\.\d{3}) Gb/s, (\d+) dropped, (\d+) lost$")


def progress_lines(stderr, tool_name):
    return [m.groups() for m in map(LINE.match, stderr.splitlines())
            if m and m.group(1) == tool_name]


def metrics_address(stderr_line):
    m = re.search(r"metrics at http://(127\.0\.0\.1:\d+)/metrics", stderr_line)
    return m.group(1) if m else None


class progress(unittest.TestCase):
    def test_the_lines_add_up_to_the_heaps_each_tool_counted(self):
        port = free_udp_port()
        with receiver(port, "--quiet", "--progress", "0.2") as recv:
            sent = tool("spead_send", "--progress", "0.2", "--heaps", 300,
                        "--heap-size", 65536, "--rate", 0.2, "127.0.0.1:%d" % port)
            self.assertEqual(sent.returncode, 0, sent.stderr)
            code, out, err = recv.result()
        self.assertEqual(code, 0, err)
        sent_lines = progress_lines(sent.stderr, "spead_send")
        recv_lines = progress_lines(err, "spead_recv")
        self.assertGreaterEqual(len(sent_lines), 2, sent.stderr)
        self.assertGreaterEqual(len(recv_lines), 2, err)
        self.assertEqual(sum(int(line[2]) for line in sent_lines), stats(sent.stdout)["heaps"])
        taken = int(re.search(r"Received (\d+) heaps", out).group(1))
        self.assertEqual(sum(int(line[2]) for line in recv_lines), taken)
        self.assertEqual(sum(int(line[4]) + int(line[5]) for line in recv_lines), 0)
        # about 0.2 Gb/s while it sent
        self.assertTrue(any(0.05 < float(line[3]) < 0.5 for line in recv_lines), err)

    def test_an_interval_that_is_not_a_number_of_seconds_names_the_flag(self):
        for name in ("spead_recv", "spead_send"):
            result = tool(name, "--progress", "-1", "127.0.0.1:%d" % free_udp_port())
            self.assertEqual(result.returncode, 2, result.stderr)
            self.assertIn("--progress: ", result.stderr)


class metrics(unittest.TestCase):
    def test_spead_send_serves_its_counters_while_it_sends(self):
        sender = subprocess.Popen(
            [os.path.join(APPS, "spead_send"), "--metrics", "127.0.0.1:0", "--heaps",
             "-1", "--heap-size", "8192", "--rate", "0.01",
             "127.0.0.1:%d" % free_udp_port()],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            address = metrics_address(sender.stderr.readline())
            self.assertIsNotNone(address)
            time.sleep(0.5)
            with urllib.request.urlopen(f"http://{address}/metrics", timeout=10) as r:
                text = r.read().decode()
        finally:
            sender.send_signal(signal.SIGINT)
            out, err = sender.communicate(timeout=30)
        m = re.search(r'spead_send_heaps_total\{stream="spead_send",transport="udp",'
                      r'endpoint="127\.0\.0\.1:\d+"\} (\d+)', text)
        self.assertIsNotNone(m, text)
        self.assertGreater(int(m.group(1)), 0)
        self.assertLessEqual(int(m.group(1)), stats(out)["heaps"])
        self.assertIn("# TYPE spead_send_queue_heaps gauge", text)

    def test_a_metrics_address_that_is_not_host_port_names_the_flag(self):
        for name in ("spead_recv", "spead_send"):
            result = tool(name, "--metrics", "localhost:9148",
                          "127.0.0.1:%d" % free_udp_port())
            self.assertEqual(result.returncode, 2, result.stderr)
            self.assertIn("--metrics: 'localhost:9148' does not start with a numeric "
                          "address", result.stderr)


if __name__ == "__main__":
    unittest.main()
