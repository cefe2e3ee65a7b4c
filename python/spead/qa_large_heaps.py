#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""4 MiB heaps go through without stalling; heaps above max_heap_size are dropped and
counted without holding up the ones after them."""

import os
import tempfile

import numpy as np
from gnuradio import blocks, gr, gr_unittest

import spead_qa_support as qa
from spead_qa_support import spead

MIB = 1024 * 1024


class qa_large_heaps(gr_unittest.TestCase):

    def setUp(self):
        self.tb = gr.top_block()
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tb = None
        self.tmp.cleanup()

    def send_bytes(self, lengths, max_heap_size):
        """Sends int8 packets of `lengths`; returns (bytes received, source, sink)."""
        rng = np.random.default_rng(5)
        data = rng.integers(0, 256, sum(lengths), dtype=np.uint8)
        src = blocks.vector_source_b(data.tolist(), False, 1, qa.packet_tags(lengths))
        src.set_min_output_buffer(2 * max(lengths))
        rx, port = qa.make_source(item_type="int8", max_heap_size=max_heap_size)
        tx = spead.sink(endpoints=f"127.0.0.1:{port}", item_type="int8",
                        max_packet_size=8972, rate_gbps=qa.TEST_RATE_GBPS)
        path = os.path.join(self.tmp.name, "out.bin")
        out = blocks.file_sink(1, path)
        out.set_unbuffered(False)
        self.tb.connect(src, tx)
        self.tb.connect(rx, out)
        qa.run_to_completion(self.tb, timeout=60)
        out.close()
        return data, np.fromfile(path, dtype=np.uint8), rx, tx

    def test_4_mib_heaps_do_not_stall(self):
        lengths = [4 * MIB] * 8
        sent, got, rx, tx = self.send_bytes(lengths, 4 * MIB)
        self.assertEqual(len(got), len(sent))
        self.assertTrue(np.array_equal(got, sent))
        self.assertEqual(rx.stats()["heaps_output"], 8)
        self.assertEqual(rx.stats()["packets"], tx.stats()["packets"])

    def test_heap_above_max_heap_size_is_dropped_and_the_next_ones_arrive(self):
        lengths = [MIB, 2 * MIB, MIB]
        sent, got, rx, tx = self.send_bytes(lengths, MIB)
        self.assertTrue(np.array_equal(got, np.concatenate([sent[:MIB], sent[3 * MIB:]])))
        stats = rx.stats()
        self.assertEqual(stats["heaps_too_large"], 1)
        self.assertGreater(stats["packets_heap_too_large"], 2 * MIB // 8972)
        # every packet sent is either in a heap or counted as part of the dropped one
        self.assertEqual(stats["packets"], tx.stats()["packets"])
        self.assertEqual(stats["heaps_output"], 2)


if __name__ == "__main__":
    gr_unittest.run(qa_large_heaps)
