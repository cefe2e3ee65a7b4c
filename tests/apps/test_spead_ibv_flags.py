#!/usr/bin/env python3
# Copyright 2026 gr-spead authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The ibverbs flags of spead_recv and spead_send, and spead_ibv_check's usage: what
is refused before any device is touched (no NIC, no emulator, no privileges needed).
The transfers themselves are in test_spead_ibv_emulated.py."""

import os
import subprocess
import unittest

APPS = os.environ["GR_SPEAD_APPS_DIR"]


def tool(name, *args):
    return subprocess.run([os.path.join(APPS, name), *map(str, args)], capture_output=True,
                          text=True, timeout=30)


class ibv_flags(unittest.TestCase):
    def test_help_documents_the_ibv_flags(self):
        for name in ("spead_recv", "spead_send"):
            with self.subTest(name=name):
                r = tool(name, "--help")
                self.assertEqual(r.returncode, 0, r.stderr)
                text = " ".join(r.stdout.split())  # options wrap at 80 columns
                for flag in ("--ibv ", "--ibv-vector", "--ibv-max-poll"):
                    self.assertIn(flag, text)
                self.assertIn("negative: busy polling", text)
                self.assertIn("docs/ibverbs.md", text)

    def test_ibv_without_bind_is_a_usage_error_that_says_so(self):
        for name, target in (("spead_recv", "7148"), ("spead_send", "127.0.0.1:7148")):
            with self.subTest(name=name):
                r = tool(name, "--ibv", target)
                self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                self.assertIn("--ibv needs --bind", r.stderr)

    def test_ibv_tuning_flags_without_ibv_are_a_usage_error(self):
        for name, target in (("spead_recv", "7148"), ("spead_send", "127.0.0.1:7148")):
            for flag in ("--ibv-vector", "--ibv-max-poll"):
                with self.subTest(name=name, flag=flag):
                    r = tool(name, flag, "1", target)
                    self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                    self.assertIn("apply only with --ibv", r.stderr)

    def test_max_poll_zero_names_the_flag(self):
        for name, target in (("spead_recv", "7148"), ("spead_send", "127.0.0.1:7148")):
            with self.subTest(name=name):
                r = tool(name, "--ibv", "--bind", "127.0.0.1", "--ibv-max-poll", "0", target)
                self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                self.assertRegex(r.stderr, r"^%s: --ibv-max-poll: 0 .* at least 1" % name)

    def test_an_unknown_bind_interface_names_the_flag_and_lists_the_interfaces(self):
        r = tool("spead_recv", "--ibv", "--bind", "no-such-if0", "7148")
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("--bind:", r.stderr)
        self.assertIn("lo (127.0.0.1)", r.stderr)

    def test_recv_with_ibv_needs_an_endpoint_not_only_files(self):
        r = tool("spead_recv", "--ibv", "--bind", "127.0.0.1", "capture.pcap")
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("--ibv receives UDP endpoints", r.stderr)

    def test_send_with_ibv_cannot_record_a_capture(self):
        r = tool("spead_send", "--ibv", "--bind", "127.0.0.1", "out.pcap")
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("cannot record to a capture file", r.stderr)
        self.assertFalse(os.path.exists("out.pcap"))


class spead_ibv_check_usage(unittest.TestCase):
    def test_without_an_interface_is_a_usage_error(self):
        r = tool("spead_ibv_check")
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("give the INTERFACE", r.stderr)

    def test_help_says_what_the_exit_status_means(self):
        r = tool("spead_ibv_check", "--help")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("Exit status: 0 usable, 1 not usable, 2 usage error", r.stdout)

    def test_an_unknown_interface_is_not_usable_and_lists_the_interfaces(self):
        r = tool("spead_ibv_check", "no-such-if0")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        flat = " ".join(r.stdout.split())
        self.assertIn("name: not found", flat)
        self.assertIn('"no-such-if0" is not a local interface', flat)
        self.assertIn("lo (127.0.0.1)", flat)
        self.assertIn("would fall back to udp", flat)


if __name__ == "__main__":
    unittest.main()
