#!/usr/bin/env python3
# Copyright 2026 gr-spead authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""What a new user meets first in spead_recv and spead_send (issue 34): every endpoint
form of the one parser as a SOURCE, counters that say something and logs on stderr,
--verify as spead2's (against a capture spead2 made, and both ways with spead2's tools
where SPEAD2_BIN_DIR or PATH has them: skipped saying so otherwise), and the --tcp
listener's flags."""

import os
import socket
import subprocess
import time
import unittest

from app_support import (Background, counter_names, free_tcp_port, free_udp_port,
                         spead2_tool, stats, tool, udp_port_bound)

VECTORS = os.environ.get("GR_SPEAD_VECTORS_DIR",
                         os.path.join(os.path.dirname(__file__), "..", "vectors"))


def tcp_listening(port):
    """Some socket of this host listens on TCP port (found without connecting)."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                rows = f.read().splitlines()[1:]
        except OSError:
            continue
        if any(r.split()[1].endswith(f":{port:04X}") and r.split()[3] == "0A"
               for r in rows):
            return True
    return False


def stop_heap_to(destination, *args):
    """spead_send sends only a stop heap (no data heap) to `destination`."""
    sent = tool("spead_send", "--heaps", 0, *args, destination)
    assert sent.returncode == 0, sent.stderr


class endpoint_forms(unittest.TestCase):
    """The forms of tests/unit/test_endpoint_argument.cc's table, as SOURCEs."""

    def receive_stop_heap(self, source, destination, *args):
        port = int(source.rsplit(":", 1)[-1])
        with Background(["spead_recv", "-q", *args, source],
                        lambda: udp_port_bound(port)) as rx:
            stop_heap_to(destination, *args)
            code, out, err = rx.result()
        self.assertEqual(code, 0, err)
        self.assertEqual(stats(out)["stop_heaps"], 1, out)
        return err

    def test_a_port_alone_and_with_a_colon_and_an_address(self):
        for form in ("{}", ":{}", "127.0.0.1:{}"):
            with self.subTest(form=form):
                port = free_udp_port()
                self.receive_stop_heap(form.format(port), f"127.0.0.1:{port}")

    def test_a_multicast_range_is_joined_and_said_with_its_interface(self):
        port = free_udp_port()
        err = self.receive_stop_heap(f"239.255.5.1+1:{port}", f"239.255.5.2:{port}",
                                     "--bind", "lo")
        self.assertIn(f"listening on 0.0.0.0:{port}, joined 239.255.5.1, 239.255.5.2 "
                      "on interface lo", err)

    def test_an_ipv6_address_in_brackets(self):
        if not socket.has_ipv6 or not os.path.exists("/proc/net/if_inet6"):
            self.skipTest("no IPv6 on this host")
        port = free_udp_port()
        self.receive_stop_heap(f"[::1]:{port}", f"[::1]:{port}")

    def test_a_capture_with_tcp_or_rdma_names_the_fix(self):
        capture = os.path.join(VECTORS, "spead64-40_small_desc_stop.pcap")
        for flag in ("--tcp", "--rdma"):
            with self.subTest(flag=flag):
                r = tool("spead_recv", flag, capture)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn(f"is a capture file, which {flag} does not take: drop "
                              f"{flag} to replay it", r.stderr)

    def test_a_verbs_endpoint_needs_rdma_and_rdma_needs_one(self):
        r = tool("spead_recv", "verbs://:7150")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("give --rdma", r.stderr)
        r = tool("spead_send", "verbs://10.0.0.2:7150")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("give --rdma", r.stderr)
        r = tool("spead_recv", "--rdma", ":7150")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("write verbs://:7150", r.stderr)


class output(unittest.TestCase):

    def test_only_the_counters_that_are_not_zero_unless_all_stats(self):
        capture = os.path.join(VECTORS, "spead64-40_multipacket_1472.pcap")
        quiet = tool("spead_recv", "-q", capture)
        self.assertEqual(quiet.returncode, 0, quiet.stderr)
        shown = stats(quiet.stdout)
        self.assertEqual(shown["heaps"], 3)
        self.assertNotIn(0, shown.values(), quiet.stdout)
        every = stats(tool("spead_recv", "-q", "--all-stats", capture).stdout)
        self.assertEqual(every["packets_late"], 0)
        self.assertIn("packets_late", every)  # printed, at 0
        self.assertLessEqual(set(every), counter_names())
        sent = tool("spead_send", "--heaps", 2, "--heap-size", 4096,
                    os.path.join(self.tmp(), "out.pcap"))
        self.assertEqual(sent.returncode, 0, sent.stderr)
        self.assertNotIn("packets_failed", sent.stdout)
        sent = tool("spead_send", "--heaps", 2, "--heap-size", 4096, "--all-stats",
                    os.path.join(self.tmp(), "out.pcap"))
        self.assertIn("packets_failed: 0", sent.stdout)

    def tmp(self):
        if not hasattr(self, "_tmp"):
            import tempfile
            self._tmp = tempfile.TemporaryDirectory()
            self.addCleanup(self._tmp.cleanup)
        return self._tmp.name

    def test_log_lines_go_to_stderr(self):
        # A socket buffer the kernel does not grant: the reader warns.
        port = free_udp_port()
        with Background(["spead_recv", "-q", "--buffer", 1 << 30, port],
                        lambda: udp_port_bound(port)) as rx:
            stop_heap_to(f"127.0.0.1:{port}")
            code, out, err = rx.result()
        self.assertEqual(code, 0, err)
        self.assertIn("warning", err)
        self.assertNotIn("warning", out)
        for line in out.splitlines():  # results only: the heap count and counters
            self.assertRegex(line, r"^(Received \d+ heaps|[a-z_0-9]+: \d+)$")

    def test_a_hint_names_only_flags_the_tool_has(self):
        help_text = tool("spead_send", "--help").stdout
        self.assertIn("--reconnect", help_text)  # the library says "set reconnect"
        r = tool("spead_send", "--reconnect", "127.0.0.1:7148")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--reconnect applies to connections: give --tcp or --rdma",
                      r.stderr)


class verify(unittest.TestCase):
    """--verify is spead2's: the same pattern, and a mismatch is an exit status."""

    def test_a_capture_spead2_send_verify_made_verifies(self):
        # tests/vectors: spead2_send --verify's heaps, as spead2 4.4.1 sent them.
        for name in ("spead64-40_multipacket_1472", "spead64-48_multipacket_8972"):
            with self.subTest(name=name):
                r = tool("spead_recv", "-q", "--verify",
                         os.path.join(VECTORS, name + ".pcap"))
                self.assertEqual(r.returncode, 0, r.stderr)
                s = stats(r.stdout)
                self.assertGreater(s["verify_heaps"], 0)
                self.assertEqual(s["verify_heaps_mismatched"], 0, r.stdout)

    def test_a_mismatch_exits_1_saying_what_spead2_recv_says(self):
        # spead2_recv --verify on this capture of two substreams says exactly this:
        # the first heap to the second destination carries a descriptor, which
        # spead2's count of items includes.
        r = tool("spead_recv", "-q", "--verify", "--joint",
                 os.path.join(VECTORS, "spead64-40_two_substreams.pcap"))
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("Verification mismatch in heap 2, item 0x1000 offset 0\n"
                      "expected 0x4e1060ff, actual 0x46d47fb0", r.stderr)

    def spead2(self, name):
        path = spead2_tool(name)
        if not path:
            self.skipTest(f"{name} not found (set SPEAD2_BIN_DIR to spead2's tools)")
        return path

    def test_spead2_send_verify_to_spead_recv_verify(self):
        sender = self.spead2("spead2_send")
        port = free_udp_port()
        with Background(["spead_recv", "-q", "--verify", f"127.0.0.1:{port}"],
                        lambda: udp_port_bound(port)) as rx:
            sent = subprocess.run([sender, "--verify", "--heaps", "8", "--heap-size",
                                   "100000", "--items", "3", "--rate", "0.5",
                                   f"127.0.0.1:{port}"], capture_output=True, text=True,
                                  timeout=60)
            self.assertEqual(sent.returncode, 0, sent.stderr)
            code, out, err = rx.result()
        self.assertEqual(code, 0, err)
        s = stats(out)
        self.assertEqual((s["verify_heaps"], s["verify_heaps_mismatched"]), (8, 0), out)

    def test_spead_send_verify_to_spead2_recv_verify(self):
        receiver = self.spead2("spead2_recv")
        port = free_udp_port()
        with Background([receiver, "--verify", "--quiet", f"127.0.0.1:{port}"],
                        lambda: udp_port_bound(port)) as rx:
            sent = tool("spead_send", "--verify", "--descriptors", "--heaps", 8,
                        "--heap-size", 100000, "--items", 3, "--rate", 0.5,
                        f"127.0.0.1:{port}")
            self.assertEqual(sent.returncode, 0, sent.stderr)
            code, out, err = rx.result()
        self.assertEqual(code, 0, out + err)
        self.assertNotIn("mismatch", out + err)
        self.assertIn("Received 9 heaps", out)  # the descriptor heap and 8 data heaps


class tcp_listener(unittest.TestCase):
    """spead_recv --tcp's --max-connections, --allowed-peers, --keep-listening and
    --idle-timeout (listen_config_base's settings)."""

    def listen(self, port, *args):
        return Background(["spead_recv", "-q", "--tcp", *args, port],
                          lambda: tcp_listening(port))

    def send(self, port, heaps=3):
        sent = tool("spead_send", "--tcp", "--heaps", heaps, "--heap-size", 8192,
                    f"127.0.0.1:{port}")
        self.assertEqual(sent.returncode, 0, sent.stderr)

    def test_keep_listening_outlives_a_stray_connection(self):
        port = free_tcp_port()
        # With --keep-listening a stop heap ends only its sender's connection: --heaps
        # ends the receiver.
        with self.listen(port, "--keep-listening", "--heaps", 3) as rx:
            with socket.create_connection(("127.0.0.1", port)) as stray:
                stray.sendall(os.urandom(64))
            time.sleep(0.3)
            self.assertIsNone(rx.proc.poll(), "the stray connection ended the receiver")
            self.send(port)
            code, out, err = rx.result()
        self.assertEqual(code, 0, err)
        self.assertIn("Received 3 heaps", out)
        self.assertEqual(stats(out)["connections_accepted"], 2, out)

    def test_without_keep_listening_a_stray_connection_ends_it_saying_how_not_to(self):
        port = free_tcp_port()
        with self.listen(port) as rx:
            with socket.create_connection(("127.0.0.1", port)) as stray:
                stray.sendall(os.urandom(64))
            code, out, err = rx.result()
        self.assertEqual(code, 0, err)  # as spead2_recv --tcp
        self.assertIn("Received 0 heaps", out)
        self.assertIn("--keep-listening waits for the next sender", err)

    def test_max_connections_takes_a_second_sender_at_once(self):
        port = free_tcp_port()
        with self.listen(port, "--max-connections", 2) as rx:
            with socket.create_connection(("127.0.0.1", port)):  # connected, silent
                time.sleep(0.2)
                self.send(port)  # its stop heap ends its own connection
            # the silent one leaves too: the last connection gone ends the stream
            code, out, err = rx.result()
        self.assertEqual(code, 0, err)
        self.assertIn("Received 3 heaps", out)
        counters = stats(out)
        self.assertEqual(counters["connections_refused"], 0, out)
        self.assertEqual(counters["connections_idle_timeout"], 0, out)  # not cut

    def test_allowed_peers_refuses_the_others(self):
        port = free_tcp_port()
        with self.listen(port, "--allowed-peers", "10.0.0.0/8") as rx:
            with socket.create_connection(("127.0.0.1", port)) as refused:
                refused.settimeout(10)
                self.assertEqual(refused.recv(1), b"")  # closed by the receiver
            code, out, err = rx.result(interrupt=True)
        self.assertEqual(code, 0, err)
        self.assertEqual(stats(out)["connections_refused"], 1, out)

    def test_idle_timeout_lets_a_silent_sender_go(self):
        port = free_tcp_port()
        with self.listen(port, "--idle-timeout", 0.5, "--keep-listening", "--heaps", 3) as rx:
            with socket.create_connection(("127.0.0.1", port)) as silent:
                silent.settimeout(10)  # 20 x the idle time
                self.assertEqual(silent.recv(1), b"")  # let go
            self.send(port)  # the one place is free again
            code, out, err = rx.result()
        self.assertEqual(code, 0, err)
        self.assertIn("Received 3 heaps", out)
        self.assertEqual(stats(out)["connections_idle_timeout"], 1, out)

    def test_the_flags_without_tcp_or_rdma_are_usage_errors(self):
        for args in (["--keep-listening"], ["--max-connections", 2],
                     ["--allowed-peers", "127.0.0.1"], ["--idle-timeout", 1]):
            with self.subTest(args=args):
                r = tool("spead_recv", *args, "127.0.0.1:7148")
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn("give --tcp or --rdma too", r.stderr)


if __name__ == "__main__":
    unittest.main()
