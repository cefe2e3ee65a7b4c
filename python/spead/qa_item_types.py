#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Item types, vector lengths, byte order and rx_time through sink -> source."""

import sys

import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest

import spead_qa_support as qa
from spead_qa_support import spead

# item type -> (numpy dtype of one real component, complex?, GNU Radio source/sink maker)
TYPES = {
    "complex_float": (np.float32, True, "c"),
    "complex_int16": (np.int16, True, "s"),
    "complex_int8": (np.int8, True, "b"),
    "float": (np.float32, False, "f"),
    "int32": (np.int32, False, "i"),
    "int16": (np.int16, False, "s"),
    "int8": (np.int8, False, "b"),
}


def stream_blocks(item_type, vlen, values, tags):
    """A vector source and sink carrying `values` (components) as item_type x vlen."""
    dtype, is_complex, suffix = TYPES[item_type]
    if suffix == "c":
        data = values.view(np.complex64)
        return (blocks.vector_source_c(data.tolist(), False, vlen, tags),
                blocks.vector_sink_c(vlen))
    per_item = vlen * (2 if is_complex else 1)
    data = values.tolist()
    if suffix == "b":
        # GNU Radio's byte blocks carry unsigned chars
        data = values.view(np.uint8).tolist()
    src = getattr(blocks, "vector_source_" + suffix)(data, False, per_item, tags)
    return src, getattr(blocks, "vector_sink_" + suffix)(per_item)


def components(sink, item_type):
    dtype = TYPES[item_type][0]
    if TYPES[item_type][2] == "c":
        return np.asarray(sink.data(), dtype=np.complex64).view(np.float32)
    if np.issubdtype(dtype, np.floating):
        return np.asarray(sink.data(), dtype=dtype)
    # byte sinks hold unsigned chars: wrap them back into the signed type
    return np.asarray(sink.data()).astype(np.int64).astype(dtype)


class qa_item_types(qa.FlowgraphTestCase):

    seed = 7

    def random_components(self, item_type, n):
        dtype = TYPES[item_type][0]
        if np.issubdtype(dtype, np.floating):
            return self.rng.standard_normal(n).astype(dtype)
        info = np.iinfo(dtype)
        return self.rng.integers(info.min, info.max, n, endpoint=True).astype(dtype)

    def loop(self, item_type, vlen, lengths, sink_kwargs=None, source_kwargs=None,
             values=None, extra=None):
        """Sends packets of `lengths` items; returns (received components, source,
        sink block, vector sink, sent components)."""
        per_item = vlen * (2 if TYPES[item_type][1] else 1)
        if values is None:
            values = self.random_components(item_type, sum(lengths) * per_item)
        src, out = stream_blocks(item_type, vlen, values, qa.packet_tags(lengths, extra=extra))
        src.set_min_output_buffer(2 * max(lengths))
        rx, port = qa.make_source(item_type=item_type, vlen=vlen, **(source_kwargs or {}))
        tx = spead.sink(endpoints=f"127.0.0.1:{port}", item_type=item_type, vlen=vlen,
                        max_packet_size=8972, **(sink_kwargs or {}))
        self.tb.connect(src, tx)
        self.tb.connect(rx, out)
        qa.run_to_completion(self.tb)
        return components(out, item_type), rx, tx, out, values

    def test_every_item_type_and_vector_length(self):
        for item_type in TYPES:
            for vlen in (1, 3):
                with self.subTest(item_type=item_type, vlen=vlen):
                    self.tb = gr.top_block()
                    got, rx, _, out, sent = self.loop(item_type, vlen, [100, 1, 2000, 37])
                    np.testing.assert_array_equal(got, sent)
                    self.assertEqual(qa.heap_starts(out.tags()),
                                     [(0, 100), (100, 1), (101, 2000), (2101, 37)])
                    self.assertEqual(rx.stats()["heaps_dropped_partial_item"], 0)

    def test_swapped_payload_is_restored_by_auto_byte_order(self):
        for item_type in ("complex_float", "complex_int16", "float", "int32", "int16"):
            with self.subTest(item_type=item_type):
                self.tb = gr.top_block()
                got, _, _, _, sent = self.loop(item_type, 1, [512, 512],
                                               sink_kwargs={"byte_order": "swap"},
                                               source_kwargs={"byte_order": "auto"})
                np.testing.assert_array_equal(got, sent)

    def test_swapped_payload_read_as_is_stays_swapped(self):
        got, _, _, _, sent = self.loop("int16", 1, [256], sink_kwargs={"byte_order": "swap"},
                                       source_kwargs={"byte_order": "as-is"})
        np.testing.assert_array_equal(got, sent.byteswap())

    def test_source_swap_reverses_each_component(self):
        got, _, _, _, sent = self.loop("complex_int16", 2, [64],
                                       source_kwargs={"byte_order": "swap"})
        np.testing.assert_array_equal(got, sent.byteswap())

    def test_sink_describes_its_payload_with_a_numpy_dtype(self):
        rx, port = qa.make_source(item_type="complex_int16", vlen=2)
        descriptors = blocks.message_debug()
        self.tb.msg_connect(rx, "descriptors", descriptors, "store")
        values = np.arange(4 * 100, dtype=np.int16)
        src, out = stream_blocks("complex_int16", 2, values, qa.packet_tags([100]))
        tx = spead.sink(endpoints=f"127.0.0.1:{port}", item_type="complex_int16", vlen=2,
                        byte_order="swap", payload_name="adc", payload_description="ADC")
        self.tb.connect(src, tx)
        self.tb.connect(rx, out)
        qa.run_to_completion(self.tb)

        self.assertEqual(descriptors.num_messages(), 1)
        d = pmt.to_python(descriptors.get_message(0))
        self.assertEqual((d["id"], d["name"], d["description"]), (0x1000, "adc", "ADC"))
        order = ">" if sys.byteorder == "little" else "<"
        self.assertEqual(d["dtype"], order + "i2")
        self.assertIn("'shape': (100, 2, 2)", d["numpy_header"])
        np.testing.assert_array_equal(components(out, "complex_int16"), values)

    def test_payload_that_is_not_whole_items_is_dropped_and_counted(self):
        # int8 packets of 6, 7 and 8 bytes read as complex_int16 (4-byte items)
        values = np.arange(21, dtype=np.int8)
        src, _ = stream_blocks("int8", 1, values, qa.packet_tags([6, 7, 8]))
        rx, port = qa.make_source(item_type="complex_int16")
        tx = spead.sink(endpoints=f"127.0.0.1:{port}", item_type="int8")
        out = blocks.vector_sink_s(2)
        self.tb.connect(src, tx)
        self.tb.connect(rx, out)
        qa.run_to_completion(self.tb)

        self.assertEqual(rx.stats()["heaps_dropped_partial_item"], 2)
        self.assertEqual(rx.stats()["heaps_output"], 1)
        self.assertEqual(len(out.data()), 2 * 2)

    def test_rx_time_from_a_timestamp_item(self):
        stamps = [0, 2_500_000, 10**12 + 1]
        got, _, _, out, _ = self.loop(
            "float", 1, [16, 16, 16],
            source_kwargs={"timestamp_item": 0x1600, "sample_rate": 1e6,
                           "sync_time": 1_700_000_000.25},
            extra=lambda i, offset: [("0x1600", pmt.from_uint64(stamps[i]))])
        times = {t.offset: pmt.to_python(t.value) for t in out.tags()
                 if pmt.symbol_to_string(t.key) == "rx_time"}
        self.assertEqual(sorted(times), [0, 16, 32])
        self.assertEqual(times[0][0], 1_700_000_000)
        self.assertAlmostEqual(times[0][1], 0.25, places=12)
        self.assertEqual(times[16][0], 1_700_000_002)
        self.assertAlmostEqual(times[16][1], 0.75, places=12)
        self.assertEqual(times[32][0], 1_700_000_000 + 10**6)
        self.assertAlmostEqual(times[32][1], 0.250001, places=9)

    def test_rx_time_with_a_fractional_sample_rate(self):
        _, _, _, out, _ = self.loop(
            "float", 1, [8],
            source_kwargs={"timestamp_item": 0x1600, "sample_rate": 1712e6 / 3},
            extra=lambda i, offset: [("0x1600", pmt.from_uint64(1712 * 10**6))])
        times = [pmt.to_python(t.value) for t in out.tags()
                 if pmt.symbol_to_string(t.key) == "rx_time"]
        self.assertEqual(times[0][0], 3)
        self.assertAlmostEqual(times[0][1], 0.0, places=9)


if __name__ == "__main__":
    gr_unittest.run(qa_item_types)
