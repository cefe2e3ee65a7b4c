#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""A host's share of a sender's substreams (spead.source first_substream, or
substream_ids as a list or range): a continuous spead.sink sends 4 substreams to one
port, a continuous spead.source takes two of them on its two outputs, bit-exact and in
the order given, and counts the heaps of the other two in heaps_other_substream, apart
from malformed ones."""

import numpy as np
from gnuradio import blocks, gr_unittest

import spead_qa_support as qa
from spead_qa_support import spead

TIMESTAMP_ITEM = 0x1600
SUBSTREAM_ITEM = 0x3101
HEAP_ITEMS = 256    # int32: 1024-byte heaps, one packet each
HEAPS = 200         # per substream
SENT = 4            # substreams the sink sends
FIRST, TAKEN = 2, 2  # the source takes substreams 2 and 3


class qa_first_substream(qa.FlowgraphTestCase):

    def take(self, taken, **choice):
        """Runs the flowgraph with a source given choice (first_substream=... or
        substream_ids=...); output i must carry substream taken[i]."""
        rx, (port,) = qa.make_source_on_free_ports(
            1, item_type="int32", timestamp_item=TIMESTAMP_ITEM, output_mode="continuous",
            substreams=TAKEN, substream_item=SUBSTREAM_ITEM, window_heaps=64,
            sample_rate=1e6, **choice)
        # input i goes to endpoint i mod 4: every substream to the source's port
        tx = spead.sink(endpoints=",".join([f"127.0.0.1:{port}"] * SENT),
                        item_type="int32", heap_items=HEAP_ITEMS, rate_gbps=0.05,
                        input_mode="continuous", timestamp_item=TIMESTAMP_ITEM,
                        start_timestamp=1_000_000, sample_rate=1e6, substreams=SENT,
                        substream_item=SUBSTREAM_ITEM)
        n = HEAPS * HEAP_ITEMS
        sent = [np.arange(1, n + 1, dtype=np.int32) + 10_000_000 * s for s in range(SENT)]
        outs = [blocks.vector_sink_i() for _ in range(TAKEN)]
        for s in range(SENT):
            self.tb.connect(blocks.vector_source_i(sent[s].tolist(), False), (tx, s))
        for i in range(TAKEN):
            self.tb.connect((rx, i), outs[i])
        qa.run_to_completion(self.tb, timeout=90)

        stats = rx.stats()
        for i in range(TAKEN):
            got = np.array(outs[i].data(), dtype=np.int32)
            self.assertEqual(got.size, n, f"output {i}")
            self.assertTrue(np.array_equal(got, sent[taken[i]]),
                            f"output {i} is not substream {taken[i]}")
            self.assertEqual([t for t in qa.sorted_tags(outs[i]) if t[1] == "rx_time"],
                             [(0, "rx_time", (1, 0.0))])
        self.assertEqual(stats["heaps"], HEAPS * TAKEN)
        self.assertEqual(stats["heaps_other_substream"], HEAPS * (SENT - TAKEN))
        self.assertEqual(stats["heaps_bad_substream"], 0)
        self.assertEqual(stats["heaps_missing"], 0)
        self.assertEqual(stats["positions_released"], HEAPS)
        # one packet per heap: every data packet is a placed heap's or another's
        self.assertEqual(stats["packets_refused_heap"], HEAPS * (SENT - TAKEN))
        self.assertEqual(tx.stats()["data_heaps"], HEAPS * SENT)

    def test_outputs_carry_first_substream_on_and_count_the_others(self):
        self.take([FIRST, FIRST + 1], first_substream=FIRST)

    def test_substream_ids_as_a_range_take_what_first_substream_takes(self):
        self.take([FIRST, FIRST + 1], substream_ids=range(FIRST, FIRST + TAKEN))

    def test_substream_ids_as_a_list_go_to_the_outputs_in_the_order_given(self):
        self.take([3, 1], substream_ids=[3, 1])

    def test_substream_ids_as_text_as_spead_recv_takes_them(self):
        self.take([3, 0], substream_ids="3,0")

    def test_first_substream_is_refused_where_it_means_nothing(self):
        with self.assertRaisesRegex(ValueError, "first_substream: 3 needs output_mode"):
            spead.source(endpoints="127.0.0.1:7148", first_substream=3)
        with self.assertRaisesRegex(ValueError,
                                    "first_substream: 3 with no substream_item"):
            spead.source(endpoints="127.0.0.1:7148", output_mode="continuous",
                         timestamp_item=TIMESTAMP_ITEM, first_substream=3)

    def test_substream_ids_are_checked_as_first_substream_is(self):
        continuous = dict(endpoints="127.0.0.1:7148", output_mode="continuous",
                          timestamp_item=TIMESTAMP_ITEM, substream_item=SUBSTREAM_ITEM)
        with self.assertRaisesRegex(ValueError, "substream_ids: 2 ids need output_mode"):
            spead.source(endpoints="127.0.0.1:7148", substream_ids=[8, 9])
        with self.assertRaisesRegex(ValueError, "substream_ids: 3 ids for 2 substreams"):
            spead.source(substreams=2, substream_ids=[8, 9, 10], **continuous)
        with self.assertRaisesRegex(ValueError, "substream_ids: 9 is given twice"):
            spead.source(substreams=2, substream_ids=[9, 9], **continuous)
        with self.assertRaisesRegex(ValueError, "substream_ids: '8-' in '8-' is not a"):
            spead.source(substreams=2, substream_ids="8-", **continuous)
        with self.assertRaisesRegex(ValueError,
                                    "substream_ids: \\[8, -1\\] is not a list"):
            spead.source(substreams=2, substream_ids=[8, -1], **continuous)
        with self.assertRaisesRegex(ValueError,
                                    "first_substream: 4 with substream_ids: give one"):
            spead.source(substreams=2, substream_ids=[8, 9], first_substream=4,
                         **continuous)


if __name__ == "__main__":
    gr_unittest.run(qa_first_substream)
