#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""spead2's receive stream modes through recv.StreamConfig: explicit_start with
Stream.start(), substreams, allow_out_of_order (False by default, as spead2),
allow_unsized_heaps, memcpy=MEMCPY_NONTEMPORAL and memory_allocator (MmapAllocator,
a MemoryPool over one)."""

import struct

import numpy as np
from gnuradio import gr_unittest

import spead_qa_support as qa
from spead_qa_support import spead as spead2

STOP = qa.spead_packet(99, b"", items=[(0x06, 2, True)])


def unsized_packet(heap_cnt, payload, offset=0):
    """A SPEAD-64-40 packet without HEAP_SIZE."""
    pointers = [qa.item_pointer(0x01, heap_cnt), qa.item_pointer(0x03, offset),
                qa.item_pointer(0x04, len(payload))]
    header = struct.pack(">BBBBHH", 0x53, 4, 3, 5, 0, len(pointers))
    return header + b"".join(struct.pack(">Q", p) for p in pointers) + payload


class qa_api_stream_modes(qa.ApiTestCase):

    def heaps(self, packets, **config):
        stream = self.recv_stream(
            config=spead2.recv.StreamConfig(**config),
            ring_config=spead2.recv.RingStreamConfig(contiguous_only=False))
        stream.add_buffer_reader(b"".join(packets) + STOP)
        return stream, list(stream)

    def test_explicit_start_readers_wait_for_start(self):
        queue = spead2.InprocQueue()
        stream = self.recv_stream(config=spead2.recv.StreamConfig(explicit_start=True))
        stream.add_inproc_reader(queue)
        queue.add_packet(qa.spead_packet(1, bytes(8)))
        queue.add_packet(STOP)
        queue.stop()
        with self.assertRaises(spead2.Empty):  # nothing read before start()
            stream.get_nowait()
        self.assertEqual(stream.stats["packets"], 0)
        stream.start()
        self.assertEqual([h.cnt for h in stream], [1])
        with self.assertRaisesRegex(RuntimeError, "explicit_start"):
            stream.add_buffer_reader(b"")
        stream.start()  # idempotent

    def test_start_without_explicit_start_changes_nothing(self):
        stream = self.recv_stream()
        stream.start()
        stream.add_buffer_reader(qa.spead_packet(1, bytes(8)) + STOP)
        self.assertEqual([h.cnt for h in stream], [1])

    def test_in_order_only_by_default_as_spead2(self):
        self.assertFalse(spead2.recv.StreamConfig().allow_out_of_order)
        payload = bytes(range(64))
        second_first = [qa.spead_packet(1, payload[32:], heap_size=64, offset=32),
                        qa.spead_packet(1, payload[:32], heap_size=64, offset=0)]
        stream, heaps = self.heaps(second_first)
        # the heap's first packet is refused; the second starts it and it is incomplete
        self.assertEqual([type(h).__name__ for h in heaps], ["IncompleteHeap"])
        self.assertEqual(stream.stats["packets_out_of_order"], 1)
        stream, heaps = self.heaps(second_first, allow_out_of_order=True)
        self.assertEqual([type(h).__name__ for h in heaps], ["Heap"])
        self.assertEqual(stream.stats["packets_out_of_order"], 0)

    def test_substreams_keep_interleaved_heaps_apart(self):
        # heaps 1 and 2 interleaved, half by half: with one window of one heap, heap 2
        # evicts heap 1; with two windows (cnt modulo 2) both complete
        packets = []
        for half in range(2):
            for cnt in (1, 2):
                packets.append(qa.spead_packet(cnt, bytes(16), heap_size=32,
                                               offset=16 * half))
        _, heaps = self.heaps(packets, max_heaps=1)
        self.assertEqual([(h.cnt, type(h).__name__) for h in heaps],
                         [(1, "IncompleteHeap"), (2, "Heap")])
        stream, heaps = self.heaps(packets, max_heaps=1, substreams=2)
        self.assertEqual(sorted(h.cnt for h in heaps), [1, 2])
        self.assertTrue(all(type(h).__name__ == "Heap" for h in heaps))
        self.assertEqual(stream.config.substreams, 2)

    def test_unsized_heaps_refused_when_asked(self):
        packet = unsized_packet(1, bytes(8))
        _, heaps = self.heaps([packet])
        self.assertEqual([h.cnt for h in heaps], [1])
        stream, heaps = self.heaps([packet], allow_unsized_heaps=False)
        self.assertEqual(heaps, [])
        self.assertEqual(stream.stats["packets_unsized"], 1)

    def test_nontemporal_copies_into_mmap_buffers(self):
        data = np.arange(20000, dtype=np.uint32)
        tx = spead2.send.BytesStream(self.pool)
        ig = spead2.send.ItemGroup()
        ig.add_item(0x1000, "x", "values", shape=data.shape, dtype=data.dtype, value=data)
        tx.send_heap(ig.get_heap())
        for allocator in (spead2.MmapAllocator(),
                          spead2.MemoryPool(1, 1 << 20, 4, 4, spead2.MmapAllocator())):
            config = spead2.recv.StreamConfig(memcpy=spead2.MEMCPY_NONTEMPORAL,
                                              memory_allocator=allocator)
            self.assertIs(config.memory_allocator, allocator)
            self.assertEqual(config.memcpy, spead2.MEMCPY_NONTEMPORAL)
            stream = self.recv_stream(config=config)
            stream.add_buffer_reader(tx.getvalue())
            received = spead2.ItemGroup()
            for heap in stream:
                received.update(heap)
            np.testing.assert_array_equal(received["x"].value, data)

    def test_stats_list_spead2s_nine_and_give_the_rest_by_name(self):
        nine = ["heaps", "incomplete_heaps_evicted", "incomplete_heaps_flushed",
                "packets", "batches", "max_batch", "single_packet_heaps", "search_dist",
                "worker_blocked"]
        config = spead2.recv.StreamConfig()
        self.assertEqual([s.name for s in config.stats], nine)
        index = config.add_stat("mine")
        self.assertEqual(config.get_stat_index("mine"), index)
        with self.assertRaisesRegex(ValueError, "packets_late"):
            config.add_stat("packets_late")  # a gr-spead counter's name is taken too
        # a lossless reader waiting for the consumer: worker_blocked, once per wait
        tx = spead2.send.BytesStream(self.pool)
        for _ in range(10):
            tx.send_heap(spead2.send.ItemGroup().get_start())
        stream = self.recv_stream(config=config,
                                  ring_config=spead2.recv.RingStreamConfig(heaps=4))
        stream.add_buffer_reader(tx.getvalue())
        self.assertTrue(qa.wait_for(lambda: stream.stats.worker_blocked == 1))
        stats = stream.stats
        self.assertEqual(list(stats), nine + ["mine"])
        self.assertEqual(len(stats), 10)
        self.assertEqual(stats[index], 0)
        self.assertEqual(stats[spead2.recv.stream_stat_indices.WORKER_BLOCKED], 1)
        with self.assertRaises(IndexError):
            stats[len(stats)]
        # every other counter by name, as before
        self.assertEqual(stats["reader_waits_queue_full"], 1)
        self.assertEqual(stats.packets_late, 0)
        self.assertIn("stop_heaps", stats)
        self.assertEqual([h.cnt for h in stream], list(range(1, 11)))


if __name__ == "__main__":
    gr_unittest.run(qa_api_stream_modes)
