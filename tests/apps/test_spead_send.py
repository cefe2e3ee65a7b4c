#!/usr/bin/env python3
# Copyright 2026 gr-spead authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""spead_send as users run it: heaps over 127.0.0.1 and into capture files that
spead_recv reads back item for item, the --verify pattern checked end to end, counters
that reconcile, and clear errors with the right exit codes."""

import os
import struct
import subprocess
import tempfile
import unittest

from app_support import free_udp_port, receiver, stats, tool

APPS = os.environ["GR_SPEAD_APPS_DIR"]


def send_to_receiver(test, recv_args, *send_args, ports=1):
    """spead_send SEND_ARGS to a spead_recv RECV_ARGS on `ports` free ports of 127.0.0.1,
    both ending well; (spead_send's stdout, spead_recv's stdout)."""
    ports = [free_udp_port() for _ in range(ports)]
    with receiver(ports, *recv_args) as recv:
        sent = tool("spead_send", *send_args, *("127.0.0.1:%d" % port for port in ports))
        test.assertEqual(sent.returncode, 0, sent.stderr)
        code, out, err = recv.result()
    test.assertEqual(code, 0, err)
    return sent.stdout, out


def capture_packets(path):
    """(UDP destination port, heap cnt, SPEAD packet) for every frame of a capture that
    spead_send wrote (Ethernet, IPv4 without options, UDP)."""
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack_from("<I", data)[0]
    endian = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
    pos, out = 24, []
    while pos + 16 <= len(data):
        incl = struct.unpack_from(endian + "IIII", data, pos)[2]
        frame = data[pos + 16:pos + 16 + incl]
        pos += 16 + incl
        port = struct.unpack_from(">H", frame, 14 + 20 + 2)[0]
        spead = frame[14 + 20 + 8:]
        addr_bits = spead[3] * 8
        first_pointer = struct.unpack_from(">Q", spead, 8)[0]
        cnt = first_pointer & ((1 << addr_bits) - 1)
        out.append((port, cnt, spead))
    return out


class spead_send_over_udp(unittest.TestCase):
    def test_heaps_and_items_arrive_intact_and_counters_reconcile(self):
        sent_out, out = send_to_receiver(self, ["--verify", "--quiet"], "--heaps", 20,
                                         "--heap-size", 65536, "--items", 2, "--verify",
                                         "--rate", 0.5)
        s, r = stats(sent_out), stats(out)
        self.assertEqual((s["data_heaps"], s["control_heaps"], s["heaps"]), (20, 1, 21))
        self.assertEqual((r["heaps"], r["stop_heaps"]), (20, 1))
        self.assertEqual((r["verify_heaps"], r["verify_heaps_mismatched"],
                          r["verify_elements_mismatched"]), (20, 0, 0))
        # every packet sent was received or counted as dropped
        self.assertEqual((r["packets_dropped_socket_overflow"],
                          r["runs_dropped_socket_overflow"]), (0, 0))
        self.assertEqual(s["packets"], r["packets"] + r["packets_after_stop"])
        self.assertRegex(sent_out, r"^Sent \d+ bytes in [0-9.e-]+ seconds, [0-9.e-]+ Gb/s")

    def test_a_sender_run_again_without_a_stop_heap_loses_no_heaps(self):
        # The second run numbers its heaps from 1 again; the receiver must not take
        # them for duplicates of the first run's (spead2_recv delivers all 80).
        port = free_udp_port()
        with receiver(port, "--quiet") as recv:
            first = tool("spead_send", "--heaps", 30, "--heap-size", 1048576, "--rate", 1,
                         "--no-stop", "127.0.0.1:%d" % port)
            self.assertEqual(first.returncode, 0, first.stderr)
            second = tool("spead_send", "--heaps", 50, "--heap-size", 1048576, "--rate", 1,
                          "127.0.0.1:%d" % port)
            self.assertEqual(second.returncode, 0, second.stderr)
            code, out, err = recv.result()
        self.assertEqual(code, 0, err)
        r = stats(out)
        self.assertEqual((r["packets_dropped_socket_overflow"],
                          r["runs_dropped_socket_overflow"]), (0, 0), out)
        self.assertEqual(r["packets_duplicate"], 0, out)
        self.assertEqual(r["heaps"], 80, out)

    def test_two_receive_threads_share_a_joint_streams_ports(self):
        _, out = send_to_receiver(self, ["--quiet", "--joint", "--threads", 2,
                                         "--ignore-stop", "--heaps", 22],
                                  "--heaps", 20, "--heap-size", 65536, "--rate", 0.5,
                                  ports=2)
        r = stats(out)
        # 20 data heaps, and the stop heap each port got (delivered: --ignore-stop)
        self.assertEqual((r["heaps"], r["stop_heaps"]), (22, 2), out)
        self.assertIn("Received 22 heaps", out)

    def test_items_and_descriptors_are_those_of_spead2_send(self):
        _, out = send_to_receiver(self, ["--descriptors"], "--heaps", 2, "--heap-size", 4096,
                                  "--items", 2, "--descriptors", "--rate", 0.1)
        lines = out.splitlines()
        # cnt 1: the descriptor heap; cnts 2 and 3: data heaps of two 2048-byte items
        self.assertIn("  descriptor 0x1000 'Test item 0'", lines)
        self.assertIn("  descriptor 0x1001 'Test item 1'", lines)
        self.assertIn("    dtype:       {'shape': (512,), 'fortran_order': False, "
                      "'descr': '>u4'}", lines)
        self.assertIn("heap 2: 4096 bytes in 3 packets, SPEAD-64-40", lines)
        heap3 = lines.index("heap 3: 4096 bytes in 3 packets, SPEAD-64-40")
        self.assertEqual(lines[heap3 + 1:heap3 + 3],
                         ["  0x1000 [2048 bytes]", "  0x1001 [2048 bytes]"])
        self.assertEqual(stats(out)["heaps"], 3)

    def test_addr_bits_48_sends_spead_64_48(self):
        _, out = send_to_receiver(self, ["--verify"], "--heaps", 3, "--heap-size", 20000,
                                  "--addr-bits", 48, "--packet", 8972, "--verify",
                                  "--rate", 0.1)
        self.assertIn("heap 3: 20000 bytes in 3 packets, SPEAD-64-48", out.splitlines())
        r = stats(out)
        self.assertEqual((r["heaps"], r["verify_heaps"], r["verify_elements_mismatched"]),
                         (3, 3, 0))


class spead_send_to_capture_file(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def test_capture_replays_with_every_heap_and_the_pattern_intact(self):
        path = os.path.join(self.dir.name, "heaps.pcap")
        sent = tool("spead_send", "--heaps", 5, "--heap-size", 100000, "--items", 3,
                    "--verify", "--descriptors", path)
        self.assertEqual(sent.returncode, 0, sent.stderr)
        # 100000 is not a whole number of 3 uint32 arrays: spead2 rounds down, and says so
        self.assertIn("using 99996 instead of 100000", sent.stderr)
        got = tool("spead_recv", "--verify", "--quiet", path)
        self.assertEqual(got.returncode, 0, got.stderr)
        s, r = stats(sent.stdout), stats(got.stdout)
        self.assertEqual((r["heaps"], r["stop_heaps"]), (6, 1))  # descriptors + 5 data
        self.assertEqual((r["verify_heaps"], r["verify_heaps_mismatched"]), (5, 0))
        self.assertEqual(s["packets"], r["packets"])
        self.assertEqual(len(capture_packets(path)), s["packets"])

    def test_timestamp_item_is_k_times_the_heap_in_every_packet(self):
        path = os.path.join(self.dir.name, "timestamped.pcap")
        sent = tool("spead_send", "--heaps", 4, "--heap-size", 65536, "--packet", 1472,
                    "--timestamp-item", 0x1600, path)
        self.assertEqual(sent.returncode, 0, sent.stderr)
        packets = capture_packets(path)
        seen = {}
        for _, cnt, spead in packets:
            n = struct.unpack_from(">H", spead, 6)[0]
            pointers = struct.unpack_from(">%dQ" % n, spead, 8)
            stamps = [p & ((1 << 40) - 1) for p in pointers
                      if p >> 63 and (p >> 40) & 0x7FFFFF == 0x1600]
            if cnt <= 4:  # data heaps 1..4; the last cnt is the stop heap
                self.assertEqual(stamps, [(cnt - 1) * 65536], "heap %d" % cnt)
                seen[cnt] = seen.get(cnt, 0) + 1
            else:
                self.assertEqual(stamps, [])
        self.assertEqual(sorted(seen), [1, 2, 3, 4])
        self.assertTrue(all(v > 40 for v in seen.values()), seen)

    def test_verify_counts_a_corrupted_byte(self):
        path = os.path.join(self.dir.name, "heaps.pcap")
        sent = tool("spead_send", "--heaps", 3, "--heap-size", 8192, "--verify", path)
        self.assertEqual(sent.returncode, 0, sent.stderr)
        with open(path, "r+b") as f:
            data = bytearray(f.read())
            data[-200] ^= 0xFF  # payload of the last data packet (the stop heap is short)
            packets = capture_packets(path)
            self.assertGreater(len(packets[-2][2]), 400)
            f.seek(0)
            f.write(data)
        # the byte flipped lies in the last data packet, not in the stop heap's frame
        self.assertLess(len(packets[-1][2]) + 58, 200)
        got = tool("spead_recv", "--verify", "--quiet", path)
        self.assertEqual(got.returncode, 1, got.stderr)  # a mismatch fails, as spead2's
        r = stats(got.stdout)
        self.assertEqual((r["verify_heaps"], r["verify_heaps_mismatched"],
                          r["verify_elements_mismatched"]), (3, 1, 1))
        self.assertRegex(got.stderr, r"Verification mismatch in heap 3, item 0x1000 "
                                     r"offset \d+\nexpected 0x[0-9a-f]+, actual 0x")

    def test_several_destinations_take_data_heaps_round_robin(self):
        path = os.path.join(self.dir.name, "two.pcap")
        sent = tool("spead_send", "--heaps", 4, "--heap-size", 2048, "--descriptors",
                    "--pcap", path, "127.0.0.1:7148", "127.0.0.1:7149")
        self.assertEqual(sent.returncode, 0, sent.stderr)
        first_packet_of_heap = {}
        for port, cnt, _ in capture_packets(path):
            first_packet_of_heap.setdefault((port, cnt), True)
        # descriptors (cnts 1, 2) to both, data heaps 3..6 alternate, stop heaps to both
        self.assertEqual(sorted(first_packet_of_heap),
                         [(7148, 1), (7148, 3), (7148, 5), (7148, 7),
                          (7149, 2), (7149, 4), (7149, 6), (7149, 8)])
        got = tool("spead_recv", "--quiet", "--ignore-stop", path)
        r = stats(got.stdout)
        # with --ignore-stop the stop heaps are delivered too, as by spead2_recv
        self.assertEqual((r["heaps"], r["stop_heaps"]), (8, 2))


class spead_send_errors(unittest.TestCase):
    def assert_usage_error(self, flag, *args):
        r = tool("spead_send", *args)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn(flag, r.stderr.splitlines()[0])

    def test_bad_flags_are_usage_errors_naming_the_flag(self):
        for flag, args in [("--heap-size", ["--heap-size", "big"]),
                           ("--heap-size", ["--heap-size", 7, "--items", 2]),
                           ("--items", ["--items", 0]),
                           ("--rate", ["--rate", -1]),
                           ("--ttl", ["--ttl", 300]),
                           ("--packet", ["--packet", 10]),
                           ("--addr-bits", ["--addr-bits", 41]),
                           ("--burst", ["--burst", 0]),
                           ("--max-heaps", ["--max-heaps", 0]),
                           ("--heaps", ["--heaps", -2]),
                           ("--bind", ["--bind", "no-such-interface0"]),
                           ("--frobnicate", ["--frobnicate"])]:
            with self.subTest(flag=flag, args=args):
                self.assert_usage_error(flag, *args, "127.0.0.1:7148")

    def test_no_destination_and_a_malformed_one_are_usage_errors(self):
        self.assert_usage_error("DESTINATION")
        self.assert_usage_error("not-a-destination", "not-a-destination")

    def test_a_host_that_does_not_resolve_is_a_runtime_error(self):
        r = tool("spead_send", "--heaps", 1, "nosuchhost.invalid:7148")
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("nosuchhost.invalid", r.stderr)

    def test_the_broadcast_address_is_refused_before_anything_is_sent(self):
        # the kernel would refuse every send (no SO_BROADCAST): said at once instead
        r = tool("spead_send", "--heaps", 2, "--heap-size", 4096, "255.255.255.255:7148")
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn('"255.255.255.255:7148" includes 255.255.255.255, the broadcast '
                      "address, which is not supported", r.stderr)
        self.assertNotIn("Sent ", r.stdout)

    def test_an_unreachable_network_is_a_runtime_error(self):
        # a private network namespace has no route anywhere (needs CAP_SYS_ADMIN)
        probe = subprocess.run(["unshare", "-n", "true"], capture_output=True)
        if probe.returncode != 0:
            self.skipTest("cannot create a network namespace here")
        r = subprocess.run(["unshare", "-n", os.path.join(APPS, "spead_send"), "--heaps", "2",
                            "--heap-size", "4096", "10.1.2.3:7148"],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("sending to 10.1.2.3:7148 failed: Network is unreachable", r.stderr)

    def test_an_unwritable_capture_file_is_a_runtime_error(self):
        r = tool("spead_send", "--heaps", 1, "/nonexistent/dir/out.pcap")
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("/nonexistent/dir/out.pcap", r.stderr)


if __name__ == "__main__":
    unittest.main()
