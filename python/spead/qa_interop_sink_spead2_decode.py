#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""What spead2's receiver makes of spead.sink(input_mode="continuous"), without spead2:
the sink records to a capture, and tests/interop/spead2_layout.py decodes it the way
spead2 does (its receiver reproduces spead2_recv's printout of every reference capture
in tests/vectors, see tests/interop/test_interop_layout.py). Every heap must decode,
complete, with the timestamp and substream as immediates of the flavour's width, the
samples as the one addressed item, and descriptors spead2 can read.

tests/interop/test_spead2_recv_continuous.py runs the same flowgraph into the real
spead2_recv when one is installed."""

import os
import sys

import numpy as np
from gnuradio import blocks, gr_unittest

import spead_qa_support as qa
from spead_qa_support import spead

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "interop"))
import spead2_layout as s2  # noqa: E402

HEAP_ITEMS = 1024
TIMESTAMP_ITEM = 0x1600
SUBSTREAM_ITEM = 0x3101
START = 5_000_000_000_000


def sink_inputs(substreams, heaps):
    return [np.arange(1, heaps * HEAP_ITEMS + 1, dtype=np.int32) + 10_000_000 * s
            for s in range(substreams)]


def run_sink(tb, inputs, **kwargs):
    tx = spead.sink(item_type="int32", max_packet_size=1472, heap_items=HEAP_ITEMS,
                    flavour="64-48", input_mode="continuous",
                    timestamp_item=TIMESTAMP_ITEM, start_timestamp=START,
                    substreams=len(inputs),
                    substream_item=SUBSTREAM_ITEM if len(inputs) > 1 else 0, **kwargs)
    for s, data in enumerate(inputs):
        tb.connect(blocks.vector_source_i(data.tolist(), False), (tx, s))
    qa.run_to_completion(tb, timeout=60)
    return tx


class qa_interop_sink_spead2_decode(qa.FlowgraphAndTempDirTestCase):

    def decode(self, path):
        """Heaps per destination port, as spead2 would deliver them (one stream per
        port, each ending at its stop heap)."""
        streams = {}
        for port, data in s2.read_pcap(path):
            streams.setdefault(port, s2.Receiver()).add(data)
        for port, rx in streams.items():
            self.assertEqual(rx.rejected, 0, f"port {port}: packets spead2 rejects")
            self.assertTrue(rx.stopped, f"port {port}: no stop heap")
            self.assertEqual(rx.live, {}, f"port {port}: incomplete heaps")
        return streams

    def check_data_heaps(self, streams, inputs, heaps):
        substreams = len(inputs)
        ports = sorted(streams)
        seen = 0
        for i, port in enumerate(ports):
            data = [h for h in streams[port].heaps if h.item(TIMESTAMP_ITEM)]
            self.assertEqual(len(data), heaps)
            for k, h in enumerate(data):
                # round k sends input 0 first: cnts 1, 2, ... round by round
                self.assertEqual(h.cnt, 1 + k * substreams + i)
                ts = h.item(TIMESTAMP_ITEM)
                self.assertTrue(ts.immediate)
                self.assertEqual(len(ts.value), 6)  # 64-48: 6-byte immediates
                self.assertEqual(ts.immediate_value, START + k * HEAP_ITEMS)
                if substreams > 1:
                    self.assertEqual(h.item(SUBSTREAM_ITEM).immediate_value, i)
                addressed = [it for it in h.items if not it.immediate]
                self.assertEqual([it.id for it in addressed], [0x1000])
                self.assertEqual(
                    addressed[0].value,
                    inputs[i][k * HEAP_ITEMS:(k + 1) * HEAP_ITEMS].tobytes())
                seen += 1
        self.assertEqual(seen, heaps * substreams)

    def test_two_substreams_decode_as_spead2_decodes_them(self):
        path = os.path.join(self.dir.name, "sink.pcap")
        inputs = sink_inputs(2, 12)
        tx = run_sink(self.tb, inputs, transport="pcap", capture_file=path,
                      endpoints="127.0.0.1:7148,127.0.0.1:7149")
        streams = self.decode(path)
        self.assertEqual(sorted(streams), [7148, 7149])
        self.check_data_heaps(streams, inputs, 12)
        self.assertEqual(tx.stats()["data_heaps"], 24)

        # descriptors: a heap of their own per port, before the data, readable by spead2
        for port, rx in streams.items():
            first = rx.heaps[0]
            self.assertIsNone(first.item(TIMESTAMP_ITEM))
            descriptors = {d["id"]: d for d in first.descriptors()}
            self.assertEqual(sorted(descriptors),
                             sorted([0x1000, TIMESTAMP_ITEM, SUBSTREAM_ITEM]))
            self.assertIn(b"'shape': (1024,)", descriptors[0x1000]["numpy_header"])
            self.assertIn(b"i4", descriptors[0x1000]["numpy_header"])

    def test_spead2_printout_of_a_single_substream(self):
        # What spead2_recv --descriptors would print, line for line, for the data heaps.
        path = os.path.join(self.dir.name, "sink.pcap")
        inputs = sink_inputs(1, 3)
        run_sink(self.tb, inputs, transport="pcap", capture_file=path,
                 endpoints="127.0.0.1:7148")
        (rx,) = self.decode(path).values()
        text = s2.render_like_spead2_recv([h for h in rx.heaps
                                           if h.item(TIMESTAMP_ITEM)])
        want = "".join(f"Received heap {k + 1}\n"
                       "0x1000 = [4096 bytes]\n"
                       f"0x1600 = [6 bytes] = {START + k * HEAP_ITEMS:#x}\n"
                       for k in range(3)) + "Received 3 heaps\n"
        self.assertEqual(text, want)


if __name__ == "__main__":
    gr_unittest.run(qa_interop_sink_spead2_decode)
