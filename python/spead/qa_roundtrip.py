#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""spead.sink -> 127.0.0.1 -> spead.source keeps payloads, heap cnts and tags."""

import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest

import spead_qa_support as qa
from spead_qa_support import spead


def gain_descriptor():
    return qa.descriptor_msg(0x1700, "gain", "receiver gain setting")


class qa_roundtrip(qa.FlowgraphTestCase):

    seed = 1234

    def complex_packets(self, lengths):
        n = sum(lengths)
        return (self.rng.standard_normal(n) + 1j * self.rng.standard_normal(n)).astype(
            np.complex64)

    def test_sink_to_source_payload_and_tags_bit_exact(self):
        lengths = [100, 3000, 1, 2048, 777, 4096, 5, 1500]
        data = self.complex_packets(lengths)
        cnts = [1, 2, 3, 1000, 1001, 5000, 7, 8]  # cnts from tags, small on purpose

        def extra(i, offset):
            return [("heap_cnt", pmt.from_uint64(cnts[i])),
                    ("0x1600", pmt.from_uint64(1_000_000 * i + 17)),
                    ("gain", pmt.from_long(20 + i))]

        src = blocks.vector_source_c(data.tolist(), False, 1,
                                     qa.packet_tags(lengths, extra=extra))
        src.set_min_output_buffer(2 * max(lengths))
        rx, port = qa.make_source(item_type="complex_float", payload_item=0x1000)
        tx = spead.sink(endpoints=f"127.0.0.1:{port}", item_type="complex_float",
                        max_packet_size=8972, payload_item=0x1000)
        qa.post(tx, "descriptors", gain_descriptor())
        out = blocks.vector_sink_c()
        self.tb.connect(src, tx)
        self.tb.connect(rx, out)
        qa.run_to_completion(self.tb)

        self.assertEqual(np.asarray(out.data(), dtype=np.complex64).tobytes(),
                         data.tobytes())
        self.assertEqual(qa.heap_starts(out.tags()),
                         list(zip(np.cumsum([0] + lengths[:-1]).tolist(), lengths)))
        by_offset = qa.tags_by_offset(out.tags())
        offsets = np.cumsum([0] + lengths[:-1]).tolist()
        for i, offset in enumerate(offsets):
            self.assertEqual(by_offset[offset],
                             {"heap_cnt": cnts[i], "0x1600": 1_000_000 * i + 17,
                              "gain": 20 + i})
        self.assertEqual(len(by_offset), len(lengths))
        stats = rx.stats()
        self.assertEqual(stats["heaps_output"], len(lengths))
        # the payload descriptor follows the packet length, so it is re-sent on change
        self.assertEqual(stats["heaps_without_payload"], tx.stats()["control_heaps"] - 1)
        self.assertEqual(stats["stop_heaps"], 1)
        self.assertEqual(tx.stats()["data_heaps"], len(lengths))

    def test_source_to_sink_to_source_round_trips_heaps_and_tags(self):
        lengths = [64, 1024, 333, 8000, 2, 4096, 4096, 10]
        data = self.complex_packets(lengths)

        def extra(i, offset):
            return [("heap_cnt", pmt.from_uint64(40 + 2 * i)),
                    ("0x1600", pmt.from_uint64(123456789 + i)),
                    ("gain", pmt.from_uint64(i))]

        src = blocks.vector_source_c(data.tolist(), False, 1,
                                     qa.packet_tags(lengths, extra=extra))
        src.set_min_output_buffer(2 * max(lengths))
        rx1, port1 = qa.make_source(item_type="complex_float", payload_item=0x1000)
        rx2, port2 = qa.make_source(item_type="complex_float", payload_item=0x1000)
        tx1 = spead.sink(endpoints=f"127.0.0.1:{port1}", item_type="complex_float",
                         max_packet_size=1472)
        tx2 = spead.sink(endpoints=f"127.0.0.1:{port2}", item_type="complex_float",
                         max_packet_size=8972, flavour="64-48")
        qa.post(tx1, "descriptors", gain_descriptor())
        out1 = blocks.vector_sink_c()
        out2 = blocks.vector_sink_c()
        self.tb.connect(src, tx1)
        self.tb.connect(rx1, out1)
        self.tb.connect(rx1, tx2)
        self.tb.msg_connect(rx1, "descriptors", tx2, "descriptors")
        self.tb.connect(rx2, out2)
        qa.run_to_completion(self.tb)

        first = np.asarray(out1.data(), dtype=np.complex64)
        second = np.asarray(out2.data(), dtype=np.complex64)
        self.assertEqual(first.tobytes(), data.tobytes())
        self.assertEqual(second.tobytes(), first.tobytes())
        tags1 = sorted((t.offset, pmt.symbol_to_string(t.key), pmt.to_python(t.value))
                       for t in out1.tags())
        tags2 = sorted((t.offset, pmt.symbol_to_string(t.key), pmt.to_python(t.value))
                       for t in out2.tags())
        self.assertEqual(tags2, tags1)
        self.assertIn((0, "gain", 0), tags2)
        self.assertIn((0, "heap_cnt", 40), tags2)
        self.assertEqual(rx2.stats()["heaps_output"], len(lengths))

    def test_fixed_heap_items_without_length_tag(self):
        data = np.arange(10 * 512, dtype=np.int16)
        src = blocks.vector_source_s(data.tolist(), False)
        rx, port = qa.make_source(item_type="int16")
        tx = spead.sink(endpoints=f"127.0.0.1:{port}", item_type="int16", len_tag_key="",
                        heap_items=512)
        out = blocks.vector_sink_s()
        self.tb.connect(src, tx)
        self.tb.connect(rx, out)
        qa.run_to_completion(self.tb)

        self.assertEqual(list(out.data()), data.tolist())
        self.assertEqual(qa.heap_starts(out.tags()), [(512 * i, 512) for i in range(10)])
        cnts = [v["heap_cnt"] for _, v in sorted(qa.tags_by_offset(out.tags()).items())]
        self.assertEqual(cnts, list(range(1, 11)))

    def test_heap_cnt_counter_starts_and_steps_as_configured(self):
        lengths = [256] * 6
        data = np.arange(sum(lengths), dtype=np.float32)
        src = blocks.vector_source_f(data.tolist(), False, 1, qa.packet_tags(lengths))
        rx, port = qa.make_source(item_type="float")
        tx = spead.sink(endpoints=f"127.0.0.1:{port}", item_type="float",
                        heap_cnt_start=100, heap_cnt_step=3)
        out = blocks.vector_sink_f()
        self.tb.connect(src, tx)
        self.tb.connect(rx, out)
        qa.run_to_completion(self.tb)

        cnts = [v["heap_cnt"] for _, v in sorted(qa.tags_by_offset(out.tags()).items())]
        self.assertEqual(cnts, [100, 103, 106, 109, 112, 115])
        self.assertEqual(list(out.data()), data.tolist())

    def test_values_wider_than_the_flavour_are_counted_not_sent(self):
        for flavour, arrives in (("64-40", False), ("64-48", True)):
            with self.subTest(flavour=flavour):
                self.tb = gr.top_block()
                lengths = [16, 16]
                data = np.arange(32, dtype=np.float32)
                wide = 1 << 45

                def extra(i, offset):
                    return [("0x1600", pmt.from_uint64(wide + i)),
                            ("0x1601", pmt.from_uint64(i))]

                src = blocks.vector_source_f(data.tolist(), False, 1,
                                             qa.packet_tags(lengths, extra=extra))
                rx, port = qa.make_source(item_type="float")
                tx = spead.sink(endpoints=f"127.0.0.1:{port}", item_type="float",
                                flavour=flavour)
                out = blocks.vector_sink_f()
                self.tb.connect(src, tx)
                self.tb.connect(rx, out)
                qa.run_to_completion(self.tb)

                self.assertEqual(list(out.data()), data.tolist())  # payload untouched
                tags = qa.tags_by_offset(out.tags())
                self.assertEqual(tags[16]["0x1601"], 1)
                self.assertEqual("0x1600" in tags[16], arrives)
                if arrives:
                    self.assertEqual(tags[16]["0x1600"], wide + 1)
                self.assertEqual(tx.stats()["tags_too_wide"], 0 if arrives else 2)

    def test_several_destinations_take_heaps_in_turn(self):
        lengths = [128] * 9
        data = np.arange(sum(lengths), dtype=np.int32)
        src = blocks.vector_source_i(data.tolist(), False, 1, qa.packet_tags(lengths))
        rx_a, port_a = qa.make_source(item_type="int32")
        rx_b, port_b = qa.make_source(item_type="int32")
        tx = spead.sink(endpoints=f"127.0.0.1:{port_a},127.0.0.1:{port_b}",
                        item_type="int32")
        out_a = blocks.vector_sink_i()
        out_b = blocks.vector_sink_i()
        self.tb.connect(src, tx)
        self.tb.connect(rx_a, out_a)
        self.tb.connect(rx_b, out_b)
        qa.run_to_completion(self.tb)

        cnts_a = [v["heap_cnt"] for _, v in sorted(qa.tags_by_offset(out_a.tags()).items())]
        cnts_b = [v["heap_cnt"] for _, v in sorted(qa.tags_by_offset(out_b.tags()).items())]
        self.assertEqual(cnts_a, [1, 3, 5, 7, 9])
        self.assertEqual(cnts_b, [2, 4, 6, 8])
        # each destination got the descriptors and a stop heap
        self.assertEqual(rx_a.stats()["stop_heaps"], 1)
        self.assertEqual(rx_b.stats()["stop_heaps"], 1)
        self.assertEqual(rx_a.stats()["heaps_without_payload"], 1)
        self.assertEqual(rx_b.stats()["heaps_without_payload"], 1)


if __name__ == "__main__":
    gr_unittest.run(qa_roundtrip)
