#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The in-process transports of the spead2-compatible API: InprocQueue with
send.InprocStream and recv.Stream.add_inproc_reader, and send.BytesStream with
recv.Stream.add_buffer_reader."""

import asyncio

import numpy as np
from gnuradio import gr_unittest

import spead_qa_support as qa
from spead_qa_support import spead as spead2

import gnuradio.spead.send.asyncio as send_asyncio


item_group = qa.uint32_item_group
received_values = qa.received_values


class qa_api_inproc(qa.ApiTestCase):

    def send_three_heaps(self, tx):
        ig = item_group([0, 0, 0, 0])
        for i in range(3):
            ig["x"].value = np.arange(4, dtype=np.uint32) + 10 * i
            tx.send_heap(ig.get_heap())
        tx.send_heap(ig.get_end())

    def test_inproc_stream_to_inproc_reader(self):
        queue = spead2.InprocQueue()
        rx = self.recv_stream()
        rx.add_inproc_reader(queue)
        tx = spead2.send.InprocStream(self.pool, [queue])
        self.assertEqual(tx.queues, [queue])
        self.send_three_heaps(tx)
        self.assertEqual(received_values(rx),
                         [[0, 1, 2, 3], [10, 11, 12, 13], [20, 21, 22, 23]])
        self.assertEqual(rx.stats["stop_heaps"], 1)

    def test_inproc_substreams_go_to_their_queues(self):
        queues = [spead2.InprocQueue(), spead2.InprocQueue()]
        streams = []
        for q in queues:
            streams.append(self.recv_stream())
            streams[-1].add_inproc_reader(q)
        tx = spead2.send.InprocStream(self.pool, queues)
        self.assertEqual(tx.num_substreams, 2)
        ig = item_group([1, 2])
        tx.send_heap(ig.get_heap(), substream_index=1)
        tx.send_heap(ig.get_end(), substream_index=1)
        tx.send_heap(ig.get_end(), substream_index=0)
        self.assertEqual(received_values(streams[0]), [])
        self.assertEqual(received_values(streams[1]), [[1, 2]])

    def test_stopping_the_queue_ends_the_reader_after_what_is_queued(self):
        queue = spead2.InprocQueue()
        tx = spead2.send.InprocStream(self.pool, [queue])
        ig = item_group([7, 8])
        tx.send_heap(ig.get_heap())
        queue.stop()
        rx = self.recv_stream()
        rx.add_inproc_reader(queue)
        self.assertEqual(received_values(rx), [[7, 8]])
        with self.assertRaises(spead2.Stopped):
            queue.add_packet(b"\x53\x04\x02\x06\x00\x00\x00\x00")
        with self.assertRaises(OSError):
            tx.send_heap(ig.get_heap())

    def test_add_packet_feeds_a_reader(self):
        queue = spead2.InprocQueue()
        rx = self.recv_stream()
        rx.add_inproc_reader(queue)
        queue.add_packet(qa.spead_packet(1, bytes(range(8))))
        queue.add_packet(np.frombuffer(qa.spead_packet(2, b"", items=[(0x06, 2, True)]),
                                       dtype=np.uint8))
        heaps = list(rx)
        self.assertEqual([h.cnt for h in heaps], [1])
        self.assertEqual(rx.stats["packets"], 2)

    def test_asyncio_inproc_stream(self):
        queue = spead2.InprocQueue()
        rx = self.recv_stream()
        rx.add_inproc_reader(queue)

        async def send():
            tx = send_asyncio.InprocStream(self.pool, [queue])
            ig = item_group([5, 6, 7])
            await tx.async_send_heap(ig.get_heap())
            await tx.async_send_heap(ig.get_end())

        asyncio.run(send())
        self.assertEqual(received_values(rx), [[5, 6, 7]])

    def test_bytes_stream_to_buffer_reader(self):
        tx = spead2.send.BytesStream(self.pool)
        self.send_three_heaps(tx)
        data = tx.getvalue()
        self.assertIsInstance(data, bytes)
        self.assertEqual(data[:4], b"\x53\x04\x03\x05")  # SPEAD-64-40 header
        for buffer in (data, bytearray(data), np.frombuffer(data, dtype=np.uint8)):
            rx = self.recv_stream()
            rx.add_buffer_reader(buffer)
            self.assertEqual(received_values(rx),
                             [[0, 1, 2, 3], [10, 11, 12, 13], [20, 21, 22, 23]])

    def test_buffer_reader_ends_without_a_stop_heap(self):
        tx = spead2.send.BytesStream(self.pool)
        tx.send_heap(item_group([3]).get_heap())
        rx = self.recv_stream()
        rx.add_buffer_reader(tx.getvalue())
        self.assertEqual(received_values(rx), [[3]])
        self.assertEqual(rx.stats["stop_heaps"], 0)

    def test_bad_arguments_name_the_parameter(self):
        rx = self.recv_stream()
        with self.assertRaisesRegex(ValueError, "buffer: .* has no buffer"):
            rx.add_buffer_reader(7148)
        with self.assertRaisesRegex(ValueError, "buffer: .*not C-contiguous"):
            rx.add_buffer_reader(np.zeros((4, 4), dtype=np.uint8)[:, ::2])
        with self.assertRaisesRegex(ValueError, "queue"):
            rx.add_inproc_reader(None)
        with self.assertRaisesRegex(ValueError, "queue"):
            spead2.send.InprocStream(self.pool, [])
        with self.assertRaisesRegex(ValueError, "packet: .* has no buffer"):
            spead2.InprocQueue().add_packet(3)


if __name__ == "__main__":
    gr_unittest.run(qa_api_inproc)
