#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Counters reconcile: what the sink sent = what the source delivered + what it counted
as dropped. A deliberately slow flowgraph makes the source drop heaps."""

import time

import numpy as np
from gnuradio import blocks, gr, gr_unittest

import spead_qa_support as qa
from spead_qa_support import spead

ITEMS = 4096


class slow_consumer(gr.sync_block):
    """Takes a while over every call, like a heavy DSP block on a busy machine."""

    def __init__(self, delay):
        gr.sync_block.__init__(self, "slow_consumer", [np.int16], [])
        self.delay = delay
        self.items = 0

    def work(self, input_items, output_items):
        time.sleep(self.delay)
        n = min(len(input_items[0]), ITEMS)
        self.items += n
        return n


class qa_reconcile(qa.FlowgraphTestCase):

    def run_loop(self, heaps, source_kwargs, consumer):
        data = np.tile(np.arange(ITEMS, dtype=np.int16), heaps)
        src = blocks.vector_source_s(data.tolist(), False, 1, qa.packet_tags([ITEMS] * heaps))
        src.set_min_output_buffer(2 * ITEMS)
        rx, port = qa.make_source(item_type="int16", **source_kwargs)
        tx = spead.sink(endpoints=f"127.0.0.1:{port}", item_type="int16",
                        max_packet_size=8972, rate_gbps=qa.TEST_RATE_GBPS)
        self.tb.connect(src, tx)
        self.tb.connect(rx, consumer)
        qa.run_to_completion(self.tb, timeout=60)
        return rx.stats(), tx.stats()

    def check_reconciles(self, rx, tx):
        # packets: every packet sent was received or dropped by the kernel
        qa.assert_packets_reconcile(self, tx["packets"], rx)
        if rx["packets_dropped_socket_overflow"] + rx["runs_dropped_socket_overflow"] == 0:
            # heaps: every heap sent ended in exactly one receive counter
            self.assertEqual(tx["heaps"],
                             rx["heaps"] + rx["stop_heaps"] + rx["incomplete_heaps_evicted"]
                             + rx["incomplete_heaps_flushed"] + rx["heaps_too_large"])
        # heaps handed on: output, or counted by the queue or the block
        self.assertEqual(rx["heaps"] + rx["incomplete_heaps_delivered"],
                         rx["heaps_output"] + rx["heaps_dropped_queue_full"]
                         + rx["heaps_without_payload"] + rx["heaps_dropped_partial_item"]
                         + rx["heaps_dropped_too_large_for_output"])
        self.assertEqual(rx["bytes_output"], rx["heaps_output"] * ITEMS * 2)

    def test_counters_reconcile_when_the_flowgraph_keeps_up(self):
        # The queue holds the whole burst, so a flowgraph thread starved for the few
        # milliseconds the sender takes still loses nothing (a full queue drops by
        # design; the next test covers that).
        rx, tx = self.run_loop(100, {"queue_heaps": 256}, blocks.null_sink(gr.sizeof_short))
        self.check_reconciles(rx, tx)
        self.assertEqual(rx["heaps_output"], 100)
        self.assertEqual(tx["data_heaps"], 100)

    def test_counters_reconcile_when_a_slow_flowgraph_makes_the_queue_overflow(self):
        consumer = slow_consumer(0.02)
        rx, tx = self.run_loop(200, {"queue_heaps": 2, "max_heap_size": 64 * 1024},
                               consumer)
        self.check_reconciles(rx, tx)
        self.assertGreater(rx["heaps_dropped_queue_full"], 0)
        self.assertEqual(consumer.items, rx["heaps_output"] * ITEMS)
        self.assertEqual(tx["data_heaps"], 200)

    def test_with_full_queue_policy_block_the_socket_absorbs_what_drop_would_lose(self):
        # Ten 8 KiB heaps fit in any socket buffer (even Linux's default rmem_max):
        # the receiver waits for the slow flowgraph instead of dropping, and nothing
        # is lost.
        consumer = slow_consumer(0.05)
        rx, tx = self.run_loop(10, {"queue_heaps": 2, "max_heap_size": 64 * 1024,
                                    "full_queue_policy": "block"}, consumer)
        self.check_reconciles(rx, tx)
        self.assertEqual(rx["heaps_dropped_queue_full"], 0)
        self.assertGreater(rx["reader_waits_queue_full"], 0)
        self.assertEqual(rx["heaps_output"], 10)
        self.assertEqual(consumer.items, 10 * ITEMS)

    def test_an_unknown_full_queue_policy_names_the_choices(self):
        with self.assertRaises(ValueError) as cm:
            qa.make_source(item_type="int16", full_queue_policy="wait")
        self.assertIn("full_queue_policy: 'wait'", str(cm.exception))


if __name__ == "__main__":
    gr_unittest.run(qa_reconcile)
