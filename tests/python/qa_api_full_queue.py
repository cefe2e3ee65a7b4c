#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""RingStreamConfig.full_queue_policy: a capture replayed into a slow Python consumer
loses nothing (spead2's semantics, the default); a live UDP stream with 'block' loses
datagrams only at the socket, with 'drop' only whole heaps at the queue, and the
counters say which and reconcile."""

import os
import socket
import struct
import tempfile
import time

from gnuradio import gr_unittest

import spead_qa_support as qa
from spead_qa_support import spead as spead2


def write_capture(path, datagrams, port=7148):
    """A pcap of IPv4/UDP frames carrying datagrams, to 127.0.0.1:port."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for i, payload in enumerate(datagrams):
            udp = struct.pack(">HHHH", port, port, 8 + len(payload), 0) + payload
            ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), i & 0xffff, 0,
                             64, 17, 0, socket.inet_aton("127.0.0.1"),
                             socket.inet_aton("127.0.0.1"))
            frame = b"\x02" * 6 + b"\x04" * 6 + b"\x08\x00" + ip + udp
            f.write(struct.pack("<IIII", i, 0, len(frame), len(frame)) + frame)


def heaps(n, first=1, size=64):
    return [qa.spead_packet(cnt, bytes([cnt & 0xff]) * size)
            for cnt in range(first, first + n)]


class qa_api_full_queue(qa.ApiTestCase):

    def test_block_is_the_default_and_an_unknown_policy_names_the_choices(self):
        self.assertEqual(spead2.recv.RingStreamConfig().full_queue_policy, "block")
        with self.assertRaises(ValueError) as cm:
            spead2.recv.RingStreamConfig(full_queue_policy="wait")
        self.assertIn("full_queue_policy: 'wait'", str(cm.exception))
        # the words of the block parameter and spead_recv --full-queue-policy: one check
        self.assertIn("use drop (", str(cm.exception))
        self.assertIn("or block (", str(cm.exception))

    def test_a_capture_replayed_into_a_slow_consumer_loses_nothing(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "heaps.pcap")
            write_capture(path, heaps(300))
            stream = self.recv_stream(ring_config=spead2.recv.RingStreamConfig(heaps=2))
            stream.add_udp_pcap_file_reader(path)
            got = []
            for heap in stream:
                got.append(heap.cnt)
                time.sleep(0.002)  # the slow consumer
        self.assertEqual(got, list(range(1, 301)))
        self.assertEqual(stream.stats["heaps_dropped_queue_full"], 0)

    def run_live(self, policy, n=300):
        """n single-packet heaps over UDP into a 2-heap ring and a small socket buffer,
        taken by a consumer slower than the sender. Returns (heaps taken, stats)."""
        os.environ["GR_SPEAD_UDP_GRO"] = "0"  # kernel drops counted per datagram
        self.addCleanup(os.environ.pop, "GR_SPEAD_UDP_GRO", None)
        stream = self.recv_stream(
            ring_config=spead2.recv.RingStreamConfig(heaps=2, full_queue_policy=policy))
        port = qa.free_udp_port()
        stream.add_udp_reader(port, buffer_size=32 * 1024, bind_hostname="127.0.0.1")
        qa.send_datagrams(port, heaps(n), pause_every=0)
        taken = 0
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                stream.get(timeout=0.5)
                taken += 1
                time.sleep(0.002)
            except spead2.Empty:
                break  # the sender is long done: everything there was has been taken
        stats = stream.stats
        return taken, stats

    def test_live_block_loses_datagrams_at_the_socket_only(self):
        n = 300
        taken, stats = self.run_live("block", n)
        self.assertEqual(stats["heaps_dropped_queue_full"], 0)
        self.assertGreater(stats["reader_waits_queue_full"], 0)
        self.assertGreater(stats["packets_dropped_socket_overflow"], 0)
        self.assertEqual(taken, stats["heaps"])
        self.assertEqual(n, stats["heaps"] + stats["packets_dropped_socket_overflow"])

    def test_live_drop_loses_whole_heaps_at_the_queue_only(self):
        n = 300
        taken, stats = self.run_live("drop", n)
        self.assertEqual(stats["reader_waits_queue_full"], 0)
        self.assertGreater(stats["heaps_dropped_queue_full"], 0)
        self.assertEqual(taken, stats["heaps"] - stats["heaps_dropped_queue_full"])
        self.assertEqual(n, stats["heaps"] + stats["packets_dropped_socket_overflow"])


if __name__ == "__main__":
    gr_unittest.run(qa_api_full_queue)
