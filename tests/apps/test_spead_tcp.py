#!/usr/bin/env python3
# Copyright 2026 gr-spead authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""spead_recv --tcp and spead_send --tcp as spead2's tools do it: ours to ours, and
both ways with spead2_send --tcp / spead2_recv --tcp (SPEAD2_BIN_DIR; skipped saying
so without them). Every heap sent arrives; between our tools its payload is checked
(--verify: spead2's tools verify another pattern, so with them the heaps and bytes are
counted instead)."""

import os
import subprocess
import sys
import time
import unittest

from app_support import APPS, Background, free_tcp_port, spead2_tool, stats, tool

HEAPS = 40
HEAP_SIZE = 1 << 20


# The check spead_compare --tcp uses: listening, found without connecting (a
# connection would be a sender to the receiver).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "apps"))
from spead_compare_tcp import tcp_port_listening as listening  # noqa: E402


def spead_recv_tcp(port, *extra):
    return [os.path.join(APPS, "spead_recv"), "--tcp", "--quiet", *extra,
            f"127.0.0.1:{port}"]


class spead_tcp(unittest.TestCase):

    def receive(self, command, port):
        rx = Background(command, lambda: listening(port), timeout=30)
        self.addCleanup(rx.__exit__)
        return rx

    def check_ours_received(self, rx, heaps, verified=True):
        code, out, err = rx.result(timeout=90)
        self.assertEqual(code, 0, err)
        s = stats(out)
        self.assertIn(f"Received {heaps} heaps", out)
        self.assertEqual(s["stop_heaps"], 1, out)
        self.assertEqual(s["connections_accepted"], 1, out)
        self.assertEqual(s["connections_lost"] + s["connections_partial_frame"] +
                         s["connections_framing_errors"], 0, out)
        if verified:
            self.assertEqual(s["verify_heaps"], heaps, out)
            self.assertEqual(s["verify_elements_mismatched"], 0, out)
        return s

    def test_ours_to_ours_every_heap_arrives_verified(self):
        port = free_tcp_port()
        rx = self.receive(spead_recv_tcp(port, "--verify"), port)
        r = tool("spead_send", "--tcp", "--verify", "--heaps", HEAPS, "--heap-size",
                 HEAP_SIZE, "--packet", 9000, f"127.0.0.1:{port}")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(stats(r.stdout)["data_heaps"], HEAPS)
        self.check_ours_received(rx, HEAPS)

    def test_spead2_send_tcp_to_spead_recv_tcp(self):
        sender = spead2_tool("spead2_send")
        if not sender:
            self.skipTest("spead2_send not found (set SPEAD2_BIN_DIR to spead2's tools)")
        port = free_tcp_port()
        rx = self.receive(spead_recv_tcp(port), port)
        r = subprocess.run([sender, "--tcp", "--heaps", str(HEAPS),
                            "--heap-size", str(HEAP_SIZE), f"127.0.0.1:{port}"],
                           capture_output=True, text=True, timeout=90)
        self.assertEqual(r.returncode, 0, r.stderr)
        s = self.check_ours_received(rx, HEAPS, verified=False)
        self.assertEqual(s["incomplete_heaps_evicted"] + s["incomplete_heaps_flushed"], 0)

    def test_spead_send_tcp_to_spead2_recv_tcp(self):
        receiver = spead2_tool("spead2_recv")
        if not receiver:
            self.skipTest("spead2_recv not found (set SPEAD2_BIN_DIR to spead2's tools)")
        port = free_tcp_port()
        rx = self.receive([receiver, "--tcp", "--quiet", f"127.0.0.1:{port}"], port)
        r = tool("spead_send", "--tcp", "--heaps", HEAPS, "--heap-size", HEAP_SIZE,
                 f"127.0.0.1:{port}")
        self.assertEqual(r.returncode, 0, r.stderr)
        code, out, err = rx.result(timeout=90)
        self.assertEqual(code, 0, err)
        self.assertIn(f"Received {HEAPS} heaps", out)
        s = stats(out)
        self.assertEqual(s["incomplete_heaps_evicted"] + s["incomplete_heaps_flushed"], 0)

    def test_a_port_nobody_listens_on_fails_at_once_saying_so(self):
        port = free_tcp_port()
        start = time.monotonic()
        r = tool("spead_send", "--tcp", "--heaps", 1, f"127.0.0.1:{port}", timeout=30)
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("refused", r.stderr.lower())
        self.assertIn(f"127.0.0.1:{port}", r.stderr)
        self.assertLess(time.monotonic() - start, 20)

    def test_tcp_with_another_transport_is_a_usage_error(self):
        r = tool("spead_send", "--tcp", "--pcap", "/tmp/x.pcap", "127.0.0.1:7148")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--tcp and --pcap", r.stderr)
        r = tool("spead_send", "--tcp", "127.0.0.1:7148", "127.0.0.1:7149")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--tcp connects to one DESTINATION", r.stderr)
        r = tool("spead_recv", "--tcp", "--ibv", "--bind", "lo", "7148")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--tcp and --ibv", r.stderr)


if __name__ == "__main__":
    unittest.main()
