#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""spead.sink(transport="tcp") -> spead.source(transport="tcp") over loopback: every
item type arrives bit-exact with every heap, a slow consumer slows the sender instead
of losing heaps, continuous mode carries a substream per connection, and a sink whose
receiver is not there ends its flowgraph saying so."""

import socket
import time
import unittest

import numpy as np
from gnuradio import blocks, gr, gr_unittest

import spead_qa_support as qa
from spead_qa_support import spead
from qa_item_types import TYPES, components, stream_blocks


def free_tcp_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_tcp_source(**kwargs):
    """A tcp spead.source listening on a free port of 127.0.0.1: (block, port)."""
    for attempt in range(20):
        port = free_tcp_port()
        try:
            src = spead.source(transport="tcp", endpoints=f"127.0.0.1:{port}", **kwargs)
        except RuntimeError:  # taken in the meantime
            continue
        assert src.bound_endpoints() == [f"127.0.0.1:{port}"], src.bound_endpoints()
        assert src.active_transport() == "tcp"
        return src, port
    raise AssertionError("no free TCP port found")


class slow_sink(gr.sync_block):
    """Takes at most `per_call` items per work() and sleeps `pause` seconds each time:
    a flowgraph slower than the link."""

    def __init__(self, per_call, pause):
        gr.sync_block.__init__(self, "slow_sink", [np.complex64], [])
        self.per_call, self.pause, self.items = per_call, pause, 0

    def work(self, input_items, output_items):
        n = min(len(input_items[0]), self.per_call)
        time.sleep(self.pause)
        self.items += n
        return n


class qa_tcp(qa.FlowgraphTestCase):

    seed = 26

    def test_every_item_type_arrives_bit_exact_with_every_heap(self):
        lengths = [1, 100, 3000, 4096, 777, 20000, 5, 1500]
        pairs = []
        for item_type, (dtype, is_complex, _) in TYPES.items():
            per_item = 2 if is_complex else 1
            n = sum(lengths) * per_item
            if np.issubdtype(dtype, np.floating):
                values = self.rng.standard_normal(n).astype(dtype)
            else:
                info = np.iinfo(dtype)
                values = self.rng.integers(info.min, info.max, n, endpoint=True,
                                           dtype=dtype)
            src, out = stream_blocks(item_type, 1, values, qa.packet_tags(lengths))
            src.set_min_output_buffer(2 * max(lengths))
            rx, port = make_tcp_source(item_type=item_type, max_heap_size=1 << 20)
            tx = spead.sink(transport="tcp", endpoints=f"127.0.0.1:{port}",
                            item_type=item_type)
            self.tb.connect(src, tx)
            self.tb.connect(rx, out)
            pairs.append((item_type, values, rx, tx, out))
        qa.run_to_completion(self.tb, timeout=60)
        for item_type, values, rx, tx, out in pairs:
            with self.subTest(item_type=item_type):
                self.assertEqual(components(out, item_type).tobytes(), values.tobytes())
                self.assertEqual(qa.heap_starts(out.tags()),
                                 list(zip(np.cumsum([0] + lengths[:-1]).tolist(),
                                          lengths)))
                rs, ts = rx.stats(), tx.stats()
                self.assertEqual(ts["data_heaps"], len(lengths))
                self.assertEqual(rs["heaps_output"], len(lengths))
                # heaps sent = heaps received, exactly: data, control and the stop heap
                self.assertEqual(rs["heaps"] + rs["stop_heaps"], ts["heaps"])
                self.assertEqual(ts["heaps_failed"], 0)

    def test_a_slow_consumer_slows_the_sender_and_nothing_is_lost(self):
        heap_items, heaps = 4096, 400  # 32 KiB heaps, 12.8 MiB: far beyond the buffers
        data = (self.rng.standard_normal(heap_items * heaps) +
                1j * self.rng.standard_normal(heap_items * heaps)).astype(np.complex64)
        src = blocks.vector_source_c(data.tolist(), False)
        # Eight heaps of buffer: the sink, sending in place from it, then has as many
        # heaps in flight as it can, more than the sockets hold, and so must wait.
        src.set_min_output_buffer(8 * heap_items)
        rx, port = make_tcp_source(max_heap_size=heap_items * 8, queue_heaps=4,
                                   buffer_size=64 * 1024)
        tx = spead.sink(transport="tcp", endpoints=f"127.0.0.1:{port}", len_tag_key="",
                        heap_items=heap_items, buffer_size=64 * 1024)
        slow = slow_sink(per_call=heap_items, pause=0.004)  # about 1 M items/s at most
        out = blocks.vector_sink_c()
        self.tb.connect(src, tx)
        self.tb.connect(rx, slow)
        self.tb.connect(rx, out)
        qa.run_to_completion(self.tb, timeout=90)
        self.assertEqual(np.asarray(out.data(), dtype=np.complex64).tobytes(),
                         data.tobytes())
        rs, ts = rx.stats(), tx.stats()
        self.assertEqual(rs["heaps_output"], heaps)
        self.assertEqual(rs["heaps_dropped_queue_full"], 0)
        self.assertEqual(ts["data_heaps"], heaps)
        self.assertEqual(rs["heaps"] + rs["stop_heaps"], ts["heaps"])
        # the link pushed back: the sender waited for the receiver
        self.assertGreater(ts.get("send_waits", 0), 0, ts)

    def test_continuous_flowgraph_pair_two_substreams_on_two_connections(self):
        heap_items, heaps, substream_item = 1024, 300, 0x3101
        n = heap_items * heaps
        sent = [np.arange(1, n + 1, dtype=np.int32) + 10_000_000 * s for s in range(2)]
        # the receiving flowgraph: two senders at most, ended when both have left
        rx, port = make_tcp_source(
            item_type="int32", output_mode="continuous", timestamp_item=0x1600,
            sample_rate=1e6, substreams=2, substream_item=substream_item,
            max_connections=2, stop_on_stop_heap=False, max_packet_size=65536)
        outs = [blocks.vector_sink_i() for _ in range(2)]
        for s in range(2):
            self.tb.connect((rx, s), outs[s])
        # the sending flowgraph: a connection per substream
        tb_tx = gr.top_block()
        tx = spead.sink(transport="tcp", endpoints=f"127.0.0.1:{port},127.0.0.1:{port}",
                        item_type="int32", max_packet_size=8972, heap_items=heap_items,
                        input_mode="continuous", timestamp_item=0x1600,
                        start_timestamp=1_000_000, sample_rate=1e6, substreams=2,
                        substream_item=substream_item)
        for s in range(2):
            tb_tx.connect(blocks.vector_source_i(sent[s].tolist(), False), (tx, s))
        self.tb.start()
        qa.run_to_completion(tb_tx, timeout=60)
        qa.wait_to_end(self.tb, timeout=60, what="the receiving flowgraph")
        for s in range(2):
            with self.subTest(output=s):
                got = np.asarray(outs[s].data(), dtype=np.int32)
                self.assertEqual(got.tobytes(), sent[s].tobytes())
        rs, ts = rx.stats(), tx.stats()
        self.assertEqual(rs["connections_accepted"], 2)
        self.assertEqual(rs["heaps"], 2 * heaps)
        self.assertEqual(rs["heaps_missing"], 0)
        self.assertEqual(ts["data_heaps"], 2 * heaps)
        self.assertEqual(ts["connections_established"], 2)

    def test_eight_sinks_with_the_same_cnts_into_one_source_lose_nothing(self):
        # Every spead.sink numbers its heaps from 1: each connection is assembled as
        # the sender it is, so the default max_heaps is enough and no heap collides.
        senders, heap_items, heaps = 8, 2048, 60
        sent = [np.arange(heap_items * heaps, dtype=np.int32) + 10_000_000 * s
                for s in range(senders)]
        rx, port = make_tcp_source(item_type="int32", max_connections=senders,
                                   stop_on_stop_heap=False)
        out = blocks.vector_sink_i()
        self.tb.connect(rx, out)
        txs = []
        for s in range(senders):
            tx = spead.sink(transport="tcp", endpoints=f"127.0.0.1:{port}",
                            item_type="int32", len_tag_key="", heap_items=heap_items)
            self.tb.connect(blocks.vector_source_i(sent[s].tolist(), False), tx)
            txs.append(tx)
        qa.run_to_completion(self.tb, timeout=90)  # ends once every sender has gone
        got = np.asarray(out.data(), dtype=np.int32)
        for s in range(senders):
            with self.subTest(sender=s):  # every heap, each sender's in order
                mine = got[got // 10_000_000 == s]
                self.assertEqual(mine.tobytes(), sent[s].tobytes())
        rs = rx.stats()
        self.assertEqual(rs["connections_accepted"], senders)
        self.assertEqual(rs["heaps_output"], senders * heaps)
        self.assertEqual(rs.get("incomplete_heaps_evicted", 0), 0, rs)
        self.assertEqual(sum(tx.stats()["data_heaps"] for tx in txs), senders * heaps)

    def test_a_receiver_that_is_not_there_ends_the_flowgraph(self):
        port = free_tcp_port()  # nobody listens
        src = blocks.vector_source_c([0j] * 4096, False, 1, qa.packet_tags([4096]))
        tx = spead.sink(transport="tcp", endpoints=f"127.0.0.1:{port}",
                        connect_timeout=2.0)
        self.tb.connect(src, tx)
        start = time.monotonic()
        qa.run_to_completion(self.tb, timeout=30)
        self.assertLess(time.monotonic() - start, 20)
        self.assertEqual(tx.stats()["heaps"], 0)

    def test_a_reconnecting_sink_waits_for_its_receiver_and_stops_promptly(self):
        port = free_tcp_port()  # nobody listens yet
        src = blocks.vector_source_c([0j] * 4096, True, 1, qa.packet_tags([4096]))
        tx = spead.sink(transport="tcp", endpoints=f"127.0.0.1:{port}", reconnect=True,
                        connect_timeout=1.0)
        self.tb.connect(src, tx)
        self.tb.start()
        time.sleep(1.5)  # attempts fail and back off; work() waits, nothing is lost
        stats = tx.stats()
        self.assertGreater(stats["connect_failures"], 0, stats)
        self.assertEqual(stats["connections_established"], 0)
        self.assertEqual(stats["heaps"], 0)
        # the receiver comes up: the sink connects in the background and sends
        tb_rx = gr.top_block()
        rx = spead.source(transport="tcp", endpoints=f"127.0.0.1:{port}")
        tb_rx.connect(rx, blocks.null_sink(gr.sizeof_gr_complex))
        tb_rx.start()
        try:
            deadline = time.monotonic() + 20  # 4 x the back-off's 5 s ceiling
            while time.monotonic() < deadline and rx.stats().get("heaps", 0) < 3:
                time.sleep(0.05)
            self.assertEqual(tx.stats()["connections_established"], 1, tx.stats())
            self.assertGreaterEqual(rx.stats()["heaps"], 3, rx.stats())
            self.assertLess(qa.stop_and_wait(self.tb, timeout=15), 15)
        finally:
            tb_rx.stop()
            tb_rx.wait()
        self.assertEqual(tx.stats()["heaps_failed"], 0, tx.stats())

    def test_a_reconnecting_sink_stops_promptly_while_its_receiver_is_absent(self):
        port = free_tcp_port()  # nobody listens, ever
        src = blocks.vector_source_c([0j] * 4096, True, 1, qa.packet_tags([4096]))
        tx = spead.sink(transport="tcp", endpoints=f"127.0.0.1:{port}", reconnect=True,
                        connect_timeout=1.0)
        self.tb.connect(src, tx)
        self.tb.start()
        time.sleep(1.0)
        self.assertLess(qa.stop_and_wait(self.tb, timeout=15), 15)
        stats = tx.stats()
        self.assertGreater(stats["connect_failures"], 1, stats)  # kept trying (0.1 s, 0.2 s...)
        self.assertEqual(stats["heaps"] + stats["heaps_failed"], 0, stats)

if __name__ == "__main__":
    gr_unittest.run(qa_tcp)
