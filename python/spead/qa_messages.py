#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The message ports: stats (source and sink), descriptors and heaps."""


import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest

import spead_qa_support as qa
from spead_qa_support import spead


class qa_messages(gr_unittest.TestCase):

    def setUp(self):
        self.tb = gr.top_block()

    def tearDown(self):
        self.tb = None

    def loop(self, lengths, extra=None, source_kwargs=None, sink_kwargs=None, run=True):
        data = np.arange(sum(lengths), dtype=np.float32)
        src = blocks.vector_source_f(data.tolist(), False, 1,
                                     qa.packet_tags(lengths, extra=extra))
        src.set_min_output_buffer(2 * max(lengths))
        rx, port = qa.make_source(item_type="float", **(source_kwargs or {}))
        tx = spead.sink(endpoints=f"127.0.0.1:{port}", item_type="float",
                        **(sink_kwargs or {}))
        self.tb.connect(src, tx)
        self.tb.connect(rx, blocks.null_sink(gr.sizeof_float))
        return rx, tx

    def test_stats_messages_carry_the_non_zero_counters_of_the_transport(self):
        rx, port = qa.make_source(item_type="float", stats_interval=0.05)
        self.tb.connect(rx, blocks.null_sink(gr.sizeof_float))
        debug = blocks.message_debug()
        self.tb.msg_connect(rx, "stats", debug, "store")
        self.tb.start()
        qa.send_datagrams(port, [b"junk"] * 3)
        self.assertTrue(qa.wait_for(lambda: debug.num_messages() >= 4, timeout=5))
        qa.stop_and_wait(self.tb)
        last = pmt.to_python(debug.get_message(debug.num_messages() - 1))
        # stats() has every counter; the message the udp source's non-zero ones
        # (tests/flowgraph/test_stats_message.py covers the other transports)
        everything = rx.stats()
        self.assertLessEqual(set(last), set(everything))
        self.assertNotIn(0, last.values())
        for other_transports in ("frames_dropped_no_buffer", "frames_filtered"):
            self.assertIn(other_transports, everything)
            self.assertNotIn(other_transports, last)
        self.assertEqual(last["packets_truncated"], 3)

    def test_sink_stats_messages_while_data_flows(self):
        # 50 heaps of 8 KiB at 10 Mb/s take about 0.3 s
        rx, tx = self.loop([2048] * 50, sink_kwargs={"stats_interval": 0.05,
                                                     "rate_gbps": 0.01})
        debug = blocks.message_debug()
        self.tb.msg_connect(tx, "stats", debug, "store")
        qa.run_to_completion(self.tb)
        self.assertGreaterEqual(debug.num_messages(), 2)
        progress = [pmt.to_python(debug.get_message(i))
                    for i in range(debug.num_messages())]
        self.assertLessEqual(set(progress[-1]), set(tx.stats()))
        self.assertNotIn(0, progress[-1].values())
        heaps = [m["data_heaps"] for m in progress]
        self.assertEqual(heaps, sorted(heaps))
        self.assertLess(heaps[0], heaps[-1])
        self.assertEqual(tx.stats()["data_heaps"], 50)

    def test_descriptors_are_announced_once_each(self):
        rx, tx = self.loop([128] * 5, sink_kwargs={"payload_name": "samples",
                                                   "payload_description": "test data",
                                                   "descriptor_interval": 2})
        qa.post(tx, "descriptors", qa.descriptor_msg(0x1600, "timestamp", "ADC count"))
        debug = blocks.message_debug()
        self.tb.msg_connect(rx, "descriptors", debug, "store")
        qa.run_to_completion(self.tb)
        got = sorted((d["id"], d["name"], d["description"]) for d in
                     (pmt.to_python(debug.get_message(i))
                      for i in range(debug.num_messages())))
        # repeated every 2 heaps, but each announced once: nothing changed
        self.assertEqual(got, [(0x1000, "samples", "test data"),
                               (0x1600, "timestamp", "ADC count")])
        self.assertGreaterEqual(tx.stats()["control_heaps"], 3)

    def test_heaps_port_emits_metadata_and_payload(self):
        rx, tx = self.loop([4, 4], extra=lambda i, o: [("timestamp", pmt.from_uint64(77 + i)),
                                                       ("heap_cnt", pmt.from_uint64(9 + i))])
        qa.post(tx, "descriptors", qa.descriptor_msg(0x1600, "timestamp"))
        debug = blocks.message_debug()
        self.tb.msg_connect(rx, "heaps", debug, "store")
        qa.run_to_completion(self.tb)
        pdus = [debug.get_message(i) for i in range(debug.num_messages())]
        data = [p for p in pdus if pmt.length(pmt.cdr(p)) > 0]
        self.assertEqual(len(data), 2)
        meta = pmt.to_python(pmt.car(data[1]))
        self.assertEqual(meta["heap_cnt"], 10)
        self.assertEqual(meta["timestamp"], 78)
        self.assertEqual(meta["heap_size"], 16)
        payload = np.asarray(pmt.to_python(pmt.cdr(data[1])), dtype=np.uint8)
        np.testing.assert_array_equal(payload.view(np.float32), [4, 5, 6, 7])


if __name__ == "__main__":
    gr_unittest.run(qa_messages)
