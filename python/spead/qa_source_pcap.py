#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""spead.source replaying the spead2 reference captures in tests/vectors."""

import os
import tempfile

import numpy as np
import pmt
from gnuradio import blocks, gr_unittest

import spead_qa_support as qa
from spead_qa_support import spead


class qa_source_pcap(qa.FlowgraphTestCase):

    def replay(self, name, item_type="int32", **kwargs):
        kwargs.setdefault("endpoints", "")
        src = spead.source(transport="pcap", capture_file=qa.vector(name),
                           item_type=item_type, **kwargs)
        sink = {"int32": blocks.vector_sink_i, "int16": blocks.vector_sink_s,
                "float": blocks.vector_sink_f}[item_type]()
        descriptors = blocks.message_debug()
        heaps = blocks.message_debug()
        self.tb.connect(src, sink)
        self.tb.msg_connect(src, "descriptors", descriptors, "store")
        self.tb.msg_connect(src, "heaps", heaps, "store")
        qa.run_to_completion(self.tb)
        return src, sink, descriptors, heaps

    def test_small_heaps_with_descriptor_and_stop(self):
        src, sink, descriptors, _ = self.replay("spead64-40_small_desc_stop.pcap")
        words = np.asarray(sink.data(), dtype=np.int32).view(np.uint32)
        np.testing.assert_array_equal(words, qa.minstd(768))
        self.assertEqual(qa.heap_starts(sink.tags()), [(0, 256), (256, 256), (512, 256)])
        self.assertEqual([v["heap_cnt"] for _, v in sorted(
            qa.tags_by_offset(sink.tags()).items())], [1, 2, 3])
        self.assertEqual(descriptors.num_messages(), 1)
        d = pmt.to_python(descriptors.get_message(0))
        self.assertEqual(d["id"], 0x1000)
        self.assertEqual(d["name"], "Test item 0")
        self.assertEqual(d["description"], "A test item with arbitrary value")
        self.assertEqual(d["dtype"], ">u4")
        stats = src.stats()
        self.assertEqual(stats["packets"], 4)
        self.assertEqual(stats["heaps"], 3)
        self.assertEqual(stats["stop_heaps"], 1)
        self.assertEqual(stats["heaps_output"], 3)
        self.assertEqual(stats["bytes_output"], 3 * 1024)

    def test_flavour_64_48_is_read_from_the_packets(self):
        _, sink, _, _ = self.replay("spead64-48_small_desc_stop.pcap")
        np.testing.assert_array_equal(
            np.asarray(sink.data(), dtype=np.int32).view(np.uint32), qa.minstd(768))

    def test_multipacket_heaps_concatenate_their_items(self):
        src, sink, descriptors, _ = self.replay("spead64-40_multipacket_1472.pcap")
        np.testing.assert_array_equal(
            np.asarray(sink.data(), dtype=np.int32).view(np.uint32), qa.minstd(3 * 4096))
        self.assertEqual(qa.heap_starts(sink.tags()),
                         [(0, 4096), (4096, 4096), (8192, 4096)])
        self.assertEqual(descriptors.num_messages(), 2)
        self.assertEqual(src.stats()["packets"], 37)

    def test_jumbo_multipacket_heaps(self):
        src, sink, _, _ = self.replay("spead64-48_multipacket_8972.pcap")
        np.testing.assert_array_equal(
            np.asarray(sink.data(), dtype=np.int32).view(np.uint32), qa.minstd(2 * 16384))
        self.assertEqual(src.stats()["packets"], 17)

    def test_payload_item_selects_one_item(self):
        _, sink, _, _ = self.replay("spead64-40_multipacket_1472.pcap",
                                    payload_item=0x1001)
        expected = qa.minstd(3 * 4096).reshape(3, 2, 2048)[:, 1, :].ravel()
        np.testing.assert_array_equal(
            np.asarray(sink.data(), dtype=np.int32).view(np.uint32), expected)
        self.assertEqual(qa.heap_starts(sink.tags()), [(0, 2048), (2048, 2048),
                                                       (4096, 2048)])

    def test_byte_order_as_is_keeps_the_wire_order(self):
        _, sink, _, _ = self.replay("spead64-40_small_desc_stop.pcap",
                                    byte_order="as-is")
        np.testing.assert_array_equal(
            np.asarray(sink.data(), dtype=np.int32).view(np.uint32),
            qa.minstd(768).byteswap())

    def test_immediate_only_heaps_go_to_the_heaps_port(self):
        src, sink, _, heaps = self.replay("spead64-40_immediate.pcap")
        self.assertEqual(len(sink.data()), 0)
        stats = src.stats()
        self.assertEqual(stats["heaps_without_payload"], 3)
        self.assertEqual(stats["heaps_output"], 0)
        self.assertEqual(heaps.num_messages(), 3)
        metas = [pmt.to_python(pmt.car(heaps.get_message(i))) for i in range(3)]
        self.assertEqual([m["heap_cnt"] for m in metas], [1, 2, 3])
        self.assertEqual(metas[0]["Test item 0"], 0xbc8f)
        self.assertEqual(metas[0]["Test item 1"], 0x0ae257e2)
        self.assertEqual(metas[1]["Test item 0"], 0x4cf91f46)
        self.assertEqual(metas[2]["Test item 1"], 0x1847c123)
        self.assertEqual(len(pmt.to_python(pmt.cdr(heaps.get_message(1)))), 0)

    def test_heaps_port_carries_the_payload_as_received(self):
        _, _, _, heaps = self.replay("spead64-40_small_desc_stop.pcap")
        self.assertEqual(heaps.num_messages(), 3)
        payload = np.concatenate([
            np.asarray(pmt.to_python(pmt.cdr(heaps.get_message(i))), dtype=np.uint8)
            for i in range(3)])
        np.testing.assert_array_equal(payload.view(">u4"), qa.minstd(768))

    def test_port_filter_replays_one_substream(self):
        src, sink, _, _ = self.replay("spead64-40_two_substreams.pcap",
                                      endpoints=":7163")
        self.assertEqual([v["heap_cnt"] for _, v in sorted(
            qa.tags_by_offset(sink.tags()).items())], [2, 4])
        self.assertEqual(src.stats()["frames_filtered"], 8)
        self.assertEqual(src.stats()["stop_heaps"], 1)

    def test_a_truncated_capture_ends_the_flowgraph_with_a_reader_error(self):
        # The flowgraph must end by itself (run_to_completion raises otherwise), with
        # the heaps before the damage output and the failure counted.
        with open(qa.vector("spead64-40_small_desc_stop.pcap"), "rb") as f:
            capture = f.read()
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "truncated.pcap")
            with open(path, "wb") as f:
                f.write(capture[:-20])  # the last record (the stop heap) cut short
            src = spead.source(transport="pcap", capture_file=path, endpoints="",
                               item_type="int32")
            sink = blocks.vector_sink_i()
            self.tb.connect(src, sink)
            qa.run_to_completion(self.tb)
        stats = src.stats()
        self.assertEqual(stats["reader_errors"], 1)
        self.assertEqual(stats["stop_heaps"], 0)
        self.assertEqual(stats["heaps_output"], 3)
        words = np.asarray(sink.data(), dtype=np.int32).view(np.uint32)
        np.testing.assert_array_equal(words, qa.minstd(768))

    def test_replay_runs_again_after_restart(self):
        src = spead.source(transport="pcap", endpoints="", item_type="int32",
                           capture_file=qa.vector("spead64-40_small_desc_stop.pcap"))
        sink = blocks.vector_sink_i()
        self.tb.connect(src, sink)
        qa.run_to_completion(self.tb)
        qa.run_to_completion(self.tb)
        np.testing.assert_array_equal(
            np.asarray(sink.data(), dtype=np.int32).view(np.uint32),
            np.concatenate([qa.minstd(768), qa.minstd(768)]))


if __name__ == "__main__":
    gr_unittest.run(qa_source_pcap)
