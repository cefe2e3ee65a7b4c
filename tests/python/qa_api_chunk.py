#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""gnuradio.spead.recv's chunk streams as spead2's: ChunkRingStream over UDP with the
declarative ChunkPlacement and with a numba cfunc placement (spead2's ABI), custom
statistics, ChunkRingbuffer semantics, stop() with a reader waiting, and errors."""

import asyncio
import ctypes
import gc
import time
import unittest

import numpy as np
from gnuradio import gr_unittest

import spead_qa_support as qa
from spead_qa_support import spead as spead2
import gnuradio.spead.recv.asyncio  # noqa: F401

recv = spead2.recv

try:
    import numba
    import scipy
    from numba import types
    from gnuradio.spead.numba import intp_to_voidptr
    from gnuradio.spead.recv.numba import chunk_place_data
except ImportError:  # .ci/install-deps installs python3-numba and python3-scipy
    numba = None

TS_ITEM = 0x1600
STEP = 100
HEAP_SIZE = 64
HEAPS = 4


def data_heaps(positions, first_cnt=1):
    """One single-packet heap per position (bytes = position), then a stop heap."""
    dgs = [qa.spead_packet(first_cnt + i, bytes([p % 256]) * HEAP_SIZE,
                           items=[(TS_ITEM, p * STEP, True)])
           for i, p in enumerate(positions)]
    dgs.append(qa.spead_packet(first_cnt + len(positions), b"", items=[(0x06, 2, True)]))
    return dgs


class qa_api_chunk(qa.ApiTestCase):

    def chunk_stream(self, place, config=None, items=(), free=4, max_chunks=2):
        data_ring, free_ring = recv.ChunkRingbuffer(4), recv.ChunkRingbuffer(free)
        stream = recv.ChunkRingStream(
            self.pool, config or recv.StreamConfig(),
            recv.ChunkStreamConfig(items=list(items), place=place, max_chunks=max_chunks),
            data_ring, free_ring)
        self.addCleanup(stream.stop)
        port = qa.free_udp_port()
        stream.add_udp_reader(port, bind_hostname="127.0.0.1")
        return stream, port

    def receive(self, stream, make_chunk, datagrams, port):
        for _ in range(stream.free_ringbuffer.maxsize):
            stream.add_free_chunk(make_chunk())
        qa.send_datagrams(port, datagrams)
        out = []
        for chunk in stream.data_ringbuffer:
            out.append((chunk.chunk_id, chunk.present.copy(), chunk.data.copy()))
            stream.add_free_chunk(chunk)
        return out

    def test_declarative_placement_fills_chunks_by_timestamp(self):
        place = recv.ChunkPlacement(timestamp_item=TS_ITEM, timestamp_step=STEP,
                                    heap_size=HEAP_SIZE, heaps_per_chunk=HEAPS)
        stream, port = self.chunk_stream(place)
        # position 5 missing; 3 out of order
        positions = [0, 1, 2, 4, 6, 7, 3]
        chunks = self.receive(stream, place.make_chunk, data_heaps(positions), port)
        self.assertEqual([c[0] for c in chunks], [0, 1])
        np.testing.assert_array_equal(chunks[0][1].ravel(), [1, 1, 1, 1])
        np.testing.assert_array_equal(chunks[1][1].ravel(), [1, 0, 1, 1])
        np.testing.assert_array_equal(chunks[0][2][:, 0, 0], [0, 1, 2, 3])
        np.testing.assert_array_equal(chunks[1][2][[0, 2, 3], 0, 0], [4, 6, 7])
        stats = stream.stats
        self.assertEqual(stats["heaps"], len(positions))
        # The stop heap is offered to the placement, which rejects it (as spead2:
        # its test_recv_chunk_stream.py counts "descriptors and stop heap").
        self.assertEqual(stats["rejected_heaps"], 1)
        self.assertEqual(stats["too_old_heaps"], 0)

    def test_declarative_placement_with_substreams_rejects_strays(self):
        self.place_substreams_10_and_11([[10, 11], [26, 27]], substreams=2,
                                        first_substream=10)

    def test_declarative_placement_substream_ids_as_a_range(self):
        self.place_substreams_10_and_11([[10, 11], [26, 27]],
                                        substream_ids=range(10, 12))

    def test_declarative_placement_substream_ids_in_the_order_given(self):
        self.place_substreams_10_and_11([[11, 10], [27, 26]], substream_ids=[11, 10])

    def test_packet_presence_setters_return_the_config(self):
        # spead2's tests chain them inside the ChunkRingStream(...) call
        config = recv.ChunkStreamConfig(items=[TS_ITEM], max_chunks=2)
        self.assertIs(config.enable_packet_presence(64), config)
        self.assertEqual(config.packet_presence_payload_size, 64)
        self.assertIs(config.disable_packet_presence(), config)
        self.assertEqual(config.packet_presence_payload_size, 0)

    def test_declarative_placement_substream_ids_checked_as_the_blocks(self):
        with self.assertRaisesRegex(ValueError, "substream_ids: 11 is given twice"):
            recv.ChunkPlacement(timestamp_item=TS_ITEM, timestamp_step=STEP,
                                heap_size=HEAP_SIZE, heaps_per_chunk=2,
                                substream_item=0x1601, substream_ids=[11, 11])
        with self.assertRaisesRegex(ValueError, "first_substream: 10 with substream_ids"):
            recv.ChunkPlacement(timestamp_item=TS_ITEM, timestamp_step=STEP,
                                heap_size=HEAP_SIZE, heaps_per_chunk=2,
                                substream_item=0x1601, first_substream=10,
                                substream_ids=[11, 12])

    def place_substreams_10_and_11(self, expected, **substreams):
        """Heaps of substreams 10, 11 and 12 at two positions into a placement that
        takes two of them (substreams): chunk bytes as expected, 12 rejected."""
        place = recv.ChunkPlacement(timestamp_item=TS_ITEM, timestamp_step=STEP,
                                    heap_size=HEAP_SIZE, heaps_per_chunk=2,
                                    substream_item=0x1601, **substreams)
        stream, port = self.chunk_stream(place)
        dgs = []
        cnt = 1
        for p in range(2):
            for s in (10, 11, 12):  # 12 is not this stream's
                dgs.append(qa.spead_packet(cnt, bytes([16 * p + s]) * HEAP_SIZE,
                                           items=[(TS_ITEM, p * STEP, True),
                                                  (0x1601, s, True)]))
                cnt += 1
        dgs.append(qa.spead_packet(cnt, bytes(HEAP_SIZE), items=[(TS_ITEM, 7, True)]))
        dgs.append(qa.spead_packet(cnt + 1, b"", items=[(0x06, 2, True)]))
        chunks = self.receive(stream, place.make_chunk, dgs, port)
        self.assertEqual(len(chunks), 1)
        _, present, data = chunks[0]
        np.testing.assert_array_equal(present, [[1, 1], [1, 1]])
        np.testing.assert_array_equal(data[:, :, 0], expected)
        # 2 strays, 1 misaligned, the stop heap (rejected by the placement, as spead2)
        self.assertEqual(stream.stats["rejected_heaps"], 4)

    @unittest.skipIf(numba is None, "python3-numba and python3-scipy are not installed")
    def test_numba_cfunc_placement_with_custom_stat_and_extra(self):
        config = recv.StreamConfig()
        odd = config.add_stat("odd_heaps")
        peak = config.add_stat("peak_position", recv.StreamStatConfig.Mode.MAXIMUM)
        self.assertEqual(config.get_stat_index("odd_heaps"), odd)

        @numba.cfunc(types.void(types.CPointer(chunk_place_data), types.size_t,
                                types.CPointer(types.int64)), nopython=True)
        def place(data_ptr, data_size, user):
            data = numba.carray(data_ptr, 1)
            items = numba.carray(intp_to_voidptr(data[0].items), 1, dtype=np.int64)
            stats = numba.carray(intp_to_voidptr(data[0].batch_stats), peak + 1,
                                 dtype=np.uint64)
            extra = numba.carray(intp_to_voidptr(data[0].extra), 8, dtype=np.uint8)
            ts = items[0]
            if ts >= 0:
                pos = ts // user[0]
                data[0].chunk_id = pos // HEAPS
                data[0].heap_index = pos % HEAPS
                data[0].heap_offset = (pos % HEAPS) * HEAP_SIZE
                extra[0] = pos + 100
                data[0].extra_offset = pos % HEAPS
                data[0].extra_size = 1
                if pos % 2 == 1:
                    stats[odd] += 1
                stats[peak] = max(stats[peak], pos)

        user = np.array([STEP], np.int64)
        llc = scipy.LowLevelCallable(place.ctypes, user.ctypes.data_as(ctypes.c_void_p),
                                     "void (void *, size_t, void *)")
        data_ring, free_ring = recv.ChunkRingbuffer(4), recv.ChunkRingbuffer(4)
        chunk_config = recv.ChunkStreamConfig(items=[TS_ITEM], place=llc, max_heap_extra=8)
        stream = recv.ChunkRingStream(self.pool, config, chunk_config, data_ring, free_ring)
        self.addCleanup(stream.stop)
        port = qa.free_udp_port()
        stream.add_udp_reader(port, bind_hostname="127.0.0.1")

        def make():
            return recv.Chunk(data=np.zeros(HEAPS * HEAP_SIZE, np.uint8),
                              present=np.zeros(HEAPS, np.uint8),
                              extra=np.zeros(HEAPS, np.uint8))
        for _ in range(4):
            stream.add_free_chunk(make())
        qa.send_datagrams(port, data_heaps(range(8)))
        seen = []
        for chunk in data_ring:
            seen.append(chunk.chunk_id)
            np.testing.assert_array_equal(chunk.present, [1] * HEAPS)
            np.testing.assert_array_equal(chunk.extra, 100 + 4 * chunk.chunk_id
                                          + np.arange(HEAPS))
            np.testing.assert_array_equal(chunk.data[::HEAP_SIZE],
                                          4 * chunk.chunk_id + np.arange(HEAPS))
            stream.add_free_chunk(chunk)
        self.assertEqual(seen, [0, 1])
        self.assertEqual(stream.stats["odd_heaps"], 4)
        self.assertEqual(stream.stats["peak_position"], 7)

    def test_ringbuffer_semantics(self):
        ring = recv.ChunkRingbuffer(2)
        chunk = recv.Chunk(data=np.zeros(4, np.uint8), present=np.zeros(1, np.uint8))
        self.assertTrue(ring.empty())
        ring.put(chunk)
        with self.assertRaises(ValueError):
            ring.put(chunk)  # already inside
        ring.put_nowait(recv.Chunk(data=np.zeros(4, np.uint8),
                                   present=np.zeros(1, np.uint8)))
        self.assertTrue(ring.full())
        with self.assertRaises(spead2.Full):
            ring.put_nowait(recv.Chunk(data=np.zeros(4, np.uint8),
                                       present=np.zeros(1, np.uint8)))
        self.assertIs(ring.get(), chunk)
        ring.get_nowait()
        with self.assertRaises(spead2.Empty):
            ring.get_nowait()
        ring.put(chunk)
        ring.stop()
        self.assertEqual([c is chunk for c in ring], [True])  # drained, then ends
        with self.assertRaises(spead2.Stopped):
            ring.get()
        with self.assertRaises(ValueError):
            recv.ChunkRingbuffer(1).put(recv.Chunk(data=np.zeros(4, np.uint8)))

    def test_asyncio_ringbuffer_takes_chunks_a_reader_thread_hands_on(self):
        place = recv.ChunkPlacement(timestamp_item=TS_ITEM, timestamp_step=STEP,
                                    heap_size=HEAP_SIZE, heaps_per_chunk=HEAPS)
        data_ring = recv.asyncio.ChunkRingbuffer(2)
        free_ring = recv.asyncio.ChunkRingbuffer(4)
        stream = recv.ChunkRingStream(self.pool, recv.StreamConfig(),
                                      recv.ChunkStreamConfig(place=place, max_chunks=2),
                                      data_ring, free_ring)
        self.addCleanup(stream.stop)
        port = qa.free_udp_port()
        stream.add_udp_reader(port, bind_hostname="127.0.0.1")
        self.assertIs(stream.data_ringbuffer, data_ring)

        async def main():
            for _ in range(4):
                await free_ring.put(place.make_chunk())
            # sent once the loop waits in `async for`: the reader thread wakes it
            asyncio.get_running_loop().call_later(
                0.1, qa.send_datagrams, port, data_heaps(range(12)))
            seen = []
            async for chunk in data_ring:
                seen.append((chunk.chunk_id, int(chunk.present.sum())))
                stream.add_free_chunk(chunk)
            return seen

        self.assertEqual(asyncio.run(main()), [(0, 4), (1, 4), (2, 4)])

    def test_chunks_left_in_a_destroyed_stream_and_its_rings_are_freed(self):
        place = recv.ChunkPlacement(timestamp_item=TS_ITEM, timestamp_step=STEP,
                                    heap_size=HEAP_SIZE, heaps_per_chunk=HEAPS)
        stream, port = self.chunk_stream(place, free=4, max_chunks=2)
        chunks = qa.add_traced_chunks(stream.add_free_chunk, 4, HEAPS * HEAP_SIZE, HEAPS)
        # chunks 0 and 1 go to the data ring, 2 and 3 are in the window (no stop heap)
        qa.send_datagrams(port, data_heaps(range(14))[:-1])
        deadline = time.monotonic() + 10
        while stream.data_ringbuffer.qsize() < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        self.assertEqual(stream.data_ringbuffer.qsize(), 2)
        stream.stop()  # the window's chunks meet a stopped data ring
        del stream
        self.doCleanups()
        gc.collect()
        self.assertEqual([ref() for ref in chunks], [None] * 4)

    def test_custom_stats_are_in_every_streams_stats(self):
        config = recv.StreamConfig()
        config.add_stat("mine")
        config.add_stat("peak", recv.StreamStatConfig.Mode.MAXIMUM)
        stats = recv.Stream(self.pool, config).stats
        self.assertEqual((stats["mine"], stats["peak"]), (0, 0))
        stats["mine"], stats["peak"] = 3, 5
        total = stats + stats
        self.assertEqual((total["mine"], total["peak"]), (6, 5))
        self.assertEqual(stats.config[-1], recv.StreamStatConfig(
            "peak", recv.StreamStatConfig.Mode.MAXIMUM))

    def test_stop_releases_a_reader_waiting_for_a_free_chunk(self):
        place = recv.ChunkPlacement(timestamp_item=TS_ITEM, timestamp_step=STEP,
                                    heap_size=HEAP_SIZE, heaps_per_chunk=HEAPS)
        stream, port = self.chunk_stream(place)
        qa.send_datagrams(port, data_heaps([0, 1])[:-1])  # no free chunk given
        time.sleep(0.2)
        start = time.monotonic()
        stream.stop()
        self.assertLess(time.monotonic() - start, 5.0)
        with self.assertRaises(spead2.Stopped):
            stream.data_ringbuffer.get()

    def test_errors_name_the_fix(self):
        with self.assertRaisesRegex(ValueError, "place: not set; give a placement"):
            recv.ChunkRingStream(self.pool, recv.StreamConfig(), recv.ChunkStreamConfig(),
                                 recv.ChunkRingbuffer(1), recv.ChunkRingbuffer(1))
        with self.assertRaisesRegex(TypeError, "LowLevelCallable"):
            recv.ChunkStreamConfig(place=1)
        with self.assertRaisesRegex(ValueError, "max_chunks"):
            recv.ChunkStreamConfig(max_chunks=0)
        with self.assertRaisesRegex(ValueError, "timestamp_step"):
            recv.ChunkPlacement(timestamp_item=TS_ITEM, timestamp_step=0,
                                heap_size=HEAP_SIZE, heaps_per_chunk=HEAPS)
        with self.assertRaisesRegex(ValueError, "data: not a writable"):
            recv.Chunk(data=b"read only")
        config = recv.StreamConfig()
        config.add_stat("mine")
        with self.assertRaisesRegex(ValueError, "exists"):
            config.add_stat("mine")
        with self.assertRaises(IndexError):
            config.get_stat_index("nothing")


if __name__ == "__main__":
    gr_unittest.run(qa_api_chunk)
