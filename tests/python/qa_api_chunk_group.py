#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""recv.ChunkStreamRingGroup as spead2's: member streams, one per UDP port (each its
own reader thread), fill shared chunks that leave once every member is past them;
LOSSY moves on without an idle member; the sequence protocol; errors."""

import collections.abc
import gc
import threading
import time

import numpy as np
from gnuradio import gr_unittest

import spead_qa_support as qa
from spead_qa_support import spead as spead2

recv = spead2.recv
TS_ITEM = 0x1600
HEAP_SIZE = 64
HEAPS = 4  # per chunk


def heap(position, cnt=None):
    return qa.spead_packet(position + 1 if cnt is None else cnt,
                           bytes([position % 256]) * HEAP_SIZE,
                           items=[(TS_ITEM, position, True)])


def stop_heap(cnt):
    return qa.spead_packet(cnt, b"", items=[(0x06, 2, True)])


class qa_api_chunk_group(qa.ApiTestCase):

    def group(self, members, mode, free=8):
        """A group of members on free UDP ports, with free chunks (at least 4 fit)."""
        place = recv.ChunkPlacement(timestamp_item=TS_ITEM, timestamp_step=1,
                                    heap_size=HEAP_SIZE, heaps_per_chunk=HEAPS)
        group = recv.ChunkStreamRingGroup(
            recv.ChunkStreamGroupConfig(max_chunks=2, eviction_mode=mode),
            recv.ChunkRingbuffer(max(free, 4)), recv.ChunkRingbuffer(max(free, 4)))
        self.addCleanup(group.stop)
        ports = []
        for _ in range(members):
            member = group.emplace_back(self.pool, recv.StreamConfig(),
                                        recv.ChunkStreamConfig(place=place, max_chunks=2))
            ports.append(qa.free_udp_port())
            member.add_udp_reader(ports[-1], bind_hostname="127.0.0.1")
        for _ in range(free):
            group.add_free_chunk(place.make_chunk())
        return group, ports

    def test_chunks_left_in_a_destroyed_group_are_freed(self):
        group, ports = self.group(2, recv.ChunkStreamGroupConfig.EvictionMode.LOSSLESS,
                                  free=0)
        refs = qa.add_traced_chunks(group.add_free_chunk, 4, HEAPS * HEAP_SIZE, HEAPS)
        # member 0 fills chunks 0 and 1; member 1 sends nothing, so they stay in the
        # group's window, and two stay in the free ring
        qa.send_datagrams(ports[0], [heap(p) for p in range(2 * HEAPS)])
        deadline = time.monotonic() + 10
        while group.free_ringbuffer.qsize() > 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        self.assertEqual(group.free_ringbuffer.qsize(), 2)
        group.stop()
        del group
        self.doCleanups()
        gc.collect()
        self.assertEqual([ref() for ref in refs], [None] * 4)

    def test_members_fill_shared_chunks(self):
        group, ports = self.group(2, recv.ChunkStreamGroupConfig.EvictionMode.LOSSLESS)
        n = 6 * HEAPS
        senders = [threading.Thread(target=qa.send_datagrams, args=(
            ports[m], [heap(p) for p in range(m, n, 2)] + [stop_heap(1000 + m)]))
            for m in range(2)]
        for s in senders:
            s.start()
        ids = []
        for chunk in group.data_ringbuffer:  # ends when both members stopped
            ids.append(chunk.chunk_id)
            np.testing.assert_array_equal(chunk.present.ravel(), [1] * HEAPS)
            np.testing.assert_array_equal(chunk.data[:, 0, 0],
                                          HEAPS * chunk.chunk_id + np.arange(HEAPS))
            group.add_free_chunk(chunk)
        for s in senders:
            s.join()
        self.assertEqual(ids, list(range(6)))
        self.assertEqual(group[0].stats["heaps"], n // 2)
        self.assertEqual(group[1].stats["heaps"], n // 2)

    def test_lossy_moves_on_without_an_idle_member(self):
        group, ports = self.group(2, recv.ChunkStreamGroupConfig.EvictionMode.LOSSY)
        qa.send_datagrams(ports[0], [heap(p) for p in range(6 * HEAPS)])
        ids = []
        deadline = time.monotonic() + 20
        while len(ids) < 4 and time.monotonic() < deadline:
            try:
                chunk = group.data_ringbuffer.get_nowait()
            except spead2.Empty:
                time.sleep(0.01)
                continue
            ids.append(chunk.chunk_id)
            group.add_free_chunk(chunk)
        self.assertEqual(ids, [0, 1, 2, 3])
        start = time.monotonic()
        group[1].stop()  # a member's stop() stops the group, as spead2's
        self.assertLess(time.monotonic() - start, 5)

    def test_sequence_and_errors(self):
        group, _ = self.group(3, recv.ChunkStreamGroupConfig.EvictionMode.LOSSY)
        self.assertIsInstance(group, collections.abc.Sequence)
        self.assertEqual(len(group), 3)
        self.assertIs(group[-1], group[2])
        self.assertEqual(len(group[0:2]), 2)
        self.assertIn(group[1], group)
        self.assertEqual(group.index(group[1]), 1)
        with self.assertRaises(IndexError):
            group[3]
        with self.assertRaisesRegex(ValueError, "max_chunks"):
            recv.ChunkStreamGroupConfig(max_chunks=0)
        place = recv.ChunkPlacement(timestamp_item=TS_ITEM, timestamp_step=1,
                                    heap_size=HEAP_SIZE, heaps_per_chunk=HEAPS)
        with self.assertRaisesRegex(ValueError, "group's"):
            group.emplace_back(self.pool, recv.StreamConfig(),
                               recv.ChunkStreamConfig(place=place, max_chunks=3))


if __name__ == "__main__":
    gr_unittest.run(qa_api_chunk_group)
