#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""gnuradio.spead.recv.asyncio and gnuradio.spead.send.asyncio as spead2's: heaps sent
with `await async_send_heap` and received with `async for`, on one event loop, with
no Python thread."""

import asyncio
import gc
import threading

import numpy as np
from gnuradio import gr_unittest

import gnuradio.spead.recv.asyncio  # noqa: F401  (the submodules spead2 scripts import)
import gnuradio.spead.send.asyncio  # noqa: F401
import spead_qa_support as qa
from spead_qa_support import spead as spead2


def item_group(shape, dtype, value=None):
    """A send ItemGroup of one item, "x" (id 0x1000)."""
    ig = spead2.send.ItemGroup()
    ig.add_item(0x1000, "x", "", shape, dtype=dtype, value=value)
    return ig


class qa_api_asyncio(qa.ApiTestCase):

    def pair(self):
        """An asyncio receive stream on a free port and an asyncio sender towards it."""
        # a ring that holds every heap of a test: the sender may run ahead of the
        # receiving task (a full ring drops heaps, counted in heaps_dropped_queue_full)
        rx = spead2.recv.asyncio.Stream(self.pool,
                                        ring_config=spead2.recv.RingStreamConfig(heaps=16))
        port = qa.free_udp_port()
        rx.add_udp_reader(port, bind_hostname="127.0.0.1")
        tx = spead2.send.asyncio.UdpStream(self.pool, [("127.0.0.1", port)],
                                           spead2.send.StreamConfig(rate=2e8))
        return rx, tx

    def test_send_and_receive_on_one_event_loop(self):
        async def main():
            rx, tx = self.pair()
            ig = item_group((1000,), np.int32)
            threads_before = threading.active_count()

            async def sender():
                sizes = []
                for i in range(10):
                    ig["x"].value = np.full(1000, i, np.int32)
                    sizes.append(await tx.async_send_heap(ig.get_heap()))
                await tx.async_send_heap(ig.get_end())
                return sizes

            async def receiver():
                recv_ig = spead2.ItemGroup()
                got = []
                async for heap in rx:
                    got.append(int(recv_ig.update(heap)["x"].value[0]))
                return got

            sizes, got = await asyncio.wait_for(asyncio.gather(sender(), receiver()), 20)
            self.assertEqual(got, list(range(10)), rx.stats)
            self.assertTrue(all(s > 4000 for s in sizes))
            # no Python thread polls on the stream's behalf
            self.assertEqual(threading.active_count(), threads_before)
            rx.stop()
        asyncio.run(main())

    def test_await_get_and_stopped_at_the_end(self):
        async def main():
            rx, tx = self.pair()
            ig = item_group((), np.int64, 42)
            futures = [tx.async_send_heap(ig.get_heap(data="all")) for _ in range(3)]
            futures.append(tx.async_send_heap(ig.get_end()))
            await asyncio.gather(*futures)
            await tx.async_flush()
            heaps = [await asyncio.wait_for(rx.get(), 5) for _ in range(3)]
            self.assertEqual([h.cnt for h in heaps], [1, 2, 3])
            with self.assertRaises(spead2.Stopped):
                await asyncio.wait_for(rx.get(), 5)
        asyncio.run(main())

    def test_get_waits_without_blocking_the_loop(self):
        async def main():
            rx, tx = self.pair()
            ticks = 0

            async def ticker():
                nonlocal ticks
                while True:
                    ticks += 1
                    await asyncio.sleep(0.01)
            task = asyncio.ensure_future(ticker())
            waiting = asyncio.ensure_future(rx.get())
            await asyncio.sleep(0.3)
            self.assertFalse(waiting.done())
            self.assertGreater(ticks, 10)
            ig = item_group((), np.int64, 1)
            await tx.async_send_heap(ig.get_heap())
            heap = await asyncio.wait_for(waiting, 5)
            self.assertEqual(heap.cnt, 1)
            task.cancel()
            rx.stop()
        asyncio.run(main())

    def test_heap_and_item_group_may_go_before_the_send_completes(self):
        async def main():
            rx, tx = self.pair()
            ig = item_group((50000,), np.uint8, np.full(50000, 9, np.uint8))
            future = tx.async_send_heap(ig.get_heap())
            del ig  # the heap, its item and the array: only the stream holds them now
            gc.collect()
            await future
            values = spead2.ItemGroup().update(await asyncio.wait_for(rx.get(), 5))
            self.assertTrue((values["x"].value == 9).all())
            rx.stop()
        asyncio.run(main())

    def test_async_send_heaps_and_bad_substream(self):
        async def main():
            rx, tx = self.pair()
            ig = item_group((8,), np.int8, np.zeros(8, np.int8))
            # more heaps than max_heaps (4): none is queued, as spead2 (BlockingIOError)
            refs = [spead2.send.HeapReference(ig.get_heap(data="all")) for _ in range(6)]
            future = tx.async_send_heaps(refs)  # a future, not a coroutine
            self.assertIsInstance(future, asyncio.Future)
            with self.assertRaises(BlockingIOError):
                await future
            sent = await tx.async_send_heaps(spead2.send.HeapReferenceList(refs[:4]))
            self.assertGreater(sent, 4 * 8)
            got = [await asyncio.wait_for(rx.get(), 5) for _ in range(4)]
            self.assertEqual([h.cnt for h in got], list(range(1, 5)))
            with self.assertRaises(ValueError):
                tx.async_send_heap(ig.get_heap(), substream_index=3)
            rx.stop()
        asyncio.run(main())


if __name__ == "__main__":
    gr_unittest.run(qa_api_asyncio)
