#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""What spead2's own test suite found the compatible API doing differently (issue 22's
findings), each as spead2 does it, and every refusal naming what to use instead
(docs/python.md; tests/compat runs spead2's suite itself)."""

import asyncio
import errno
import socket
import struct
import warnings

import numpy as np
from gnuradio import gr_unittest

import gnuradio.spead.recv.asyncio  # noqa: F401
import gnuradio.spead.send.asyncio  # noqa: F401
import spead_qa_support as qa
from spead_qa_support import spead as spead2

MASK48 = (1 << 48) - 1


def heap_cnt(packet):
    """HEAP_CNT of a SPEAD-64-48 packet: the first item pointer after the header."""
    return struct.unpack(">Q", packet[8:16])[0] & MASK48


class qa_api_spead2_semantics(qa.ApiTestCase):

    def raw_receiver(self):
        """A plain UDP socket on a free port of 127.0.0.1: (socket, port)."""
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.addCleanup(s.close)
        s.bind(("127.0.0.1", 0))
        s.settimeout(10)
        return s, s.getsockname()[1]

    def item_group(self, value=None):
        ig = spead2.send.ItemGroup(flavour=spead2.Flavour(heap_address_bits=48))
        ig.add_item(0x1000, "x", "", (16,), dtype=np.uint8,
                    value=np.arange(16, dtype=np.uint8) if value is None else value)
        return ig

    # ---- 1: a recv.asyncio.Stream still iterates blocking ---------------------------
    def test_asyncio_stream_iterates_blocking(self):
        rx = spead2.recv.asyncio.Stream(self.pool)
        self.addCleanup(rx.stop)
        port = qa.free_udp_port()
        rx.add_udp_reader(port, bind_hostname="127.0.0.1")
        tx = spead2.send.UdpStream(self.pool, [("127.0.0.1", port)],
                                   spead2.send.StreamConfig(rate=1e8))
        ig = self.item_group()
        for _ in range(3):
            tx.send_heap(ig.get_heap(data="all"))
        tx.send_heap(ig.get_end())
        self.assertEqual([heap.cnt for heap in rx], [1, 2, 3])

    # ---- 2, 3: HeapReferenceList and PacketGenerator ---------------------------------
    def test_heap_reference_list_slices_and_sends(self):
        s, port = self.raw_receiver()
        tx = spead2.send.UdpStream(self.pool, [("127.0.0.1", port)])
        ig = self.item_group()
        refs = spead2.send.HeapReferenceList(
            [spead2.send.HeapReference(ig.get_heap(data="all"), cnt=10 + i)
             for i in range(3)])
        self.assertEqual(len(refs), 3)
        self.assertIsInstance(refs[1:], spead2.send.HeapReferenceList)
        tx.send_heaps(refs[:1])
        tx.send_heaps(refs[1:])
        self.assertEqual([heap_cnt(s.recv(2048)) for _ in range(3)], [10, 11, 12])
        with self.assertRaises(TypeError):
            spead2.send.HeapReferenceList(["not a heap reference"])
        with self.assertRaises(ValueError):
            refs[1:2:0]

    def test_packet_generator_gives_the_bytes_a_stream_sends(self):
        s, port = self.raw_receiver()
        ig = spead2.send.ItemGroup(flavour=spead2.Flavour(heap_address_bits=48))
        ig.add_item(0x1000, "x", "", (3000,), dtype=np.uint8,
                    value=(np.arange(3000) % 251).astype(np.uint8))
        heap = ig.get_heap()
        packets = list(spead2.send.PacketGenerator(heap, 0x123456, 1472))
        self.assertGreater(len(packets), 2)
        self.assertTrue(all(len(p) <= 1472 and p[:2] == b"\x53\x04" for p in packets))
        tx = spead2.send.UdpStream(self.pool, [("127.0.0.1", port)],
                                   spead2.send.StreamConfig(max_packet_size=1472))
        tx.send_heap(heap, cnt=0x123456)
        self.assertEqual([s.recv(2048) for _ in packets], packets)

    # ---- 4: a 0-d '>u8' immediate value is referenced, not copied ----------------------
    def test_immediate_numpy_scalar_is_referenced(self):
        ig = spead2.send.ItemGroup(flavour=spead2.Flavour(heap_address_bits=48))
        timestamp = np.array(5, dtype=">u8")
        ig.add_item(0x1600, "timestamp", "", (), format=[("u", 48)], value=timestamp)
        heap = ig.get_heap(descriptors="none")
        timestamp[()] = 0x123456789A  # updated in place after the heap was built
        (packet,) = list(spead2.send.PacketGenerator(heap, 1, 1472))
        self.assertIn(struct.pack(">Q", (0x8000 | 0x1600) << 48 | 0x123456789A), packet)

    # ---- 5: async_send_heap before the loop runs; async_send_heaps gives a future -------
    def test_async_send_heap_before_the_loop_runs(self):
        s, port = self.raw_receiver()
        loop = asyncio.new_event_loop()
        self.addCleanup(loop.close)
        asyncio.set_event_loop(loop)
        self.addCleanup(asyncio.set_event_loop, None)
        tx = spead2.send.asyncio.UdpStream(self.pool, [("127.0.0.1", port)])
        ig = self.item_group()
        future = tx.async_send_heap(ig.get_heap(data="all"))  # no loop is running
        self.assertGreater(loop.run_until_complete(future), 16)
        many = tx.async_send_heaps([spead2.send.HeapReference(ig.get_heap(data="all"))])
        self.assertIsInstance(many, asyncio.Future)
        self.assertGreater(loop.run_until_complete(many), 16)
        self.assertEqual(len([s.recv(2048) for _ in range(2)]), 2)

    # ---- 6: the heap cnt sequence wraps; an explicit cnt too wide is an OSError ---------
    def test_heap_cnt_wraps_and_too_wide_is_an_os_error(self):
        s, port = self.raw_receiver()
        tx = spead2.send.UdpStream(self.pool, [("127.0.0.1", port)])
        ig = self.item_group()
        tx.set_cnt_sequence(MASK48, 1)
        tx.send_heap(ig.get_heap(data="all"))
        tx.send_heap(ig.get_heap(data="all"))
        self.assertEqual([heap_cnt(s.recv(2048)) for _ in range(2)], [MASK48, 0])
        with self.assertRaises(OSError) as cm:
            tx.send_heap(ig.get_heap(data="all"), cnt=MASK48 + 1)
        self.assertEqual(cm.exception.errno, errno.EINVAL)
        self.assertNotIsInstance(cm.exception, ValueError)

    # ---- 7: send_heap on a full queue raises at once -------------------------------------
    def test_send_heap_on_a_full_queue_raises(self):
        _, port = self.raw_receiver()
        loop = asyncio.new_event_loop()
        self.addCleanup(loop.close)
        tx = spead2.send.asyncio.UdpStream(
            self.pool, [("127.0.0.1", port)],
            spead2.send.StreamConfig(rate=1e5, max_heaps=2))  # 64 KiB heaps: 0.6 s each
        ig = spead2.send.ItemGroup(flavour=spead2.Flavour(heap_address_bits=48))
        ig.add_item(0x1000, "x", "", (65536,), dtype=np.uint8, value=np.zeros(65536, np.uint8))
        heap = ig.get_heap()
        asyncio.set_event_loop(loop)
        self.addCleanup(asyncio.set_event_loop, None)
        futures = [tx.async_send_heap(heap) for _ in range(2)]  # queued synchronously
        with self.assertRaises(BlockingIOError):
            tx.send_heap(heap)
        loop.run_until_complete(asyncio.gather(*futures))

    # ---- 8: IncompleteHeap.get_items() gives the immediates only -------------------------
    def test_incomplete_heap_items_are_the_immediates(self):
        stream, port = self.udp_recv_stream(
            config=spead2.recv.StreamConfig(max_heaps=1),
            ring_config=spead2.recv.RingStreamConfig(contiguous_only=False))
        items = [(0x1000, 0, False), (0x1001, 7, True)]
        qa.send_datagrams(port, [qa.spead_packet(1, bytes(64), heap_size=128, items=items),
                                 qa.spead_packet(2, bytes(8))])
        first = stream.get(timeout=5)
        self.assertIsInstance(first, spead2.recv.IncompleteHeap)
        self.assertEqual([(i.id, i.is_immediate) for i in first.get_items()],
                         [(0x1001, True)])

    # ---- 9: a heap with an item addressed past its length is dropped -------------------
    def test_heap_with_an_item_past_its_length_is_dropped(self):
        stream, port = self.udp_recv_stream()
        items = [(0x1000, 65, False)]  # spead2's test_bad_offset
        qa.send_datagrams(port, [qa.spead_packet(1, bytes(64), items=items),
                                 qa.spead_packet(2, bytes(8), items=[(0x1000, 0, False)])])
        self.assertEqual(stream.get(timeout=5).cnt, 2)
        self.assertEqual(stream.stats["incomplete_heaps_evicted"], 1)
        self.assertEqual(stream.stats["heaps"], 1)

    # ---- 10: StreamStats set by name and added --------------------------------------------
    def test_stream_stats_assign_and_add(self):
        stats = self.recv_stream().stats
        stats["heaps"] = 10
        stats.packets = 40
        stats["max_batch"] = 15
        other = self.recv_stream().stats
        other.heaps = 5
        other["max_batch"] = 20
        total = stats + other
        self.assertEqual((total.heaps, total.packets, total["max_batch"]), (15, 40, 20))
        stats += other
        self.assertEqual((stats["heaps"], stats.max_batch), (15, 20))
        with self.assertRaises(AttributeError):
            stats.no_such_counter = 1
        with self.assertRaises(KeyError):
            stats["no_such_counter"] = 1

    def test_stream_stats_hold_extra_counters(self):
        a = spead2.recv.StreamStats([("heaps", 1), ("custom", 2), ("peak", 3)],
                                    maximum=("peak",))
        b = spead2.recv.StreamStats([("heaps", 4), ("custom", 5), ("peak", 1)],
                                    maximum=("peak",))
        self.assertEqual(list((a + b).items()), [("heaps", 5), ("custom", 7), ("peak", 3)])
        with self.assertRaises(ValueError):
            a + spead2.recv.StreamStats([("heaps", 1)])

    # ---- 11: ThreadPool affinity with a core that does not exist warns ---------------------
    def test_thread_pool_warns_for_a_missing_core(self):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            pool = spead2.ThreadPool(1, [1, 0, 4096])
        pool.stop()
        self.assertTrue(any("core 4096" in str(w.message) for w in caught))

    # ---- 12: send.StreamConfig checked in every setter ---------------------------------------
    def test_send_stream_config_setters_are_checked(self):
        config = spead2.send.StreamConfig()
        self.assertEqual(config.rate_method, spead2.send.StreamConfig.DEFAULT_RATE_METHOD)
        config.rate = 1e9
        self.assertEqual(config.burst_rate, 1e9 * config.burst_rate_ratio)
        self.assertEqual(config.burst_rate_ratio, 1.05)  # spead2's default
        config.burst_rate_ratio = 1.5  # the limiter catches up at up to 1.5 x rate
        self.assertEqual(config.burst_rate, 1.5e9)
        for name, value, error in (("rate", float("nan"), ValueError),
                                   ("rate", -1.0, ValueError),
                                   ("max_heaps", 0, ValueError),
                                   ("max_heaps", -1, TypeError),
                                   ("burst_size", -1, TypeError),
                                   ("burst_rate_ratio", 0.5, ValueError)):
            with self.assertRaises(error, msg=name):
                setattr(config, name, value)
            with self.assertRaises(error, msg=name):
                spead2.send.StreamConfig(**{name: value})
        self.assertEqual(config.rate, 1e9)

    # ---- 13: UdpIbvConfig setters checked; buffer_size 0 is the default ----------------------
    def test_udp_ibv_config_setters_are_checked(self):
        for cls in (spead2.recv.UdpIbvConfig, spead2.send.UdpIbvConfig):
            config = cls()
            config.buffer_size = 0
            self.assertEqual(config.buffer_size, cls.DEFAULT_BUFFER_SIZE, cls)
            for value in (0, -1):
                with self.assertRaises(ValueError, msg=cls):
                    config.max_poll = value
            with self.assertRaises(TypeError, msg=cls):
                config.buffer_size = -1
        config = spead2.recv.UdpIbvConfig()
        with self.assertRaises(ValueError):
            config.max_size = 0
        with self.assertRaises(TypeError):
            spead2.send.UdpIbvConfig(ttl=256)

    # ---- refusals name what to use instead -------------------------------------------------
    def test_refusals_name_what_to_use_instead(self):
        stream = self.recv_stream()
        tx = spead2.send.UdpStream(self.pool, [("127.0.0.1", qa.free_udp_port())])
        with socket.socket() as sock:
            # the socket forms exist for UDP and TCP (qa_api_socket_forms), not RDMA
            cases = (
                (lambda: stream.add_rdma_reader(sock), "add_rdma_reader(port"),
                (lambda: spead2.send.RdmaStream(self.pool, sock), "[(host, port)]"),
            )
            for call, alternative in cases:
                with self.assertRaises(NotImplementedError) as cm:
                    call()
                self.assertIn("not supported", str(cm.exception))
                self.assertIn(alternative, str(cm.exception))
        for call, alternative in (
                (lambda: spead2.send.StreamConfig(rate_method=spead2.send.RateMethod.HW),
                 "RateMethod.SW"),
                (lambda: stream.add_udp_pcap_file_reader("x.pcap", "tcp"),
                 "udp dst port"),
                (lambda: tx.send_heap(spead2.send.Heap(), rate=1e6), "StreamConfig(rate="),
                (lambda: spead2.send.HeapReference(spead2.send.Heap(), rate=1e6),
                 "StreamConfig(rate=")):
            with self.assertRaises(ValueError) as cm:
                call()
            self.assertIn("not supported", str(cm.exception))
            self.assertIn(alternative, str(cm.exception))
        # BUG_COMPAT_SHAPE_BIT_1 alone is a flavour as in spead2; unknown bits are not
        shape_bit_1 = spead2.Flavour(4, 64, 40, spead2.BUG_COMPAT_SHAPE_BIT_1)
        self.assertEqual(shape_bit_1.bug_compat, spead2.BUG_COMPAT_SHAPE_BIT_1)
        self.assertNotEqual(shape_bit_1, spead2.Flavour(4, 64, 40, 0))
        with self.assertRaises(ValueError) as cm:
            spead2.Flavour(4, 64, 40, 64)
        self.assertIn("unknown bits", str(cm.exception))


if __name__ == "__main__":
    gr_unittest.run(qa_api_spead2_semantics)
