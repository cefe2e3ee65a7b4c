#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The message ports: stats (source and sink), descriptors and heaps; and the summary
a block logs when it stops.

A stats message holds only the counters the transport in use counts, and of those only
the non-zero ones; GNU Radio's preference [spead] stats_zero_counters
(GR_CONF_SPEAD_STATS_ZERO_COUNTERS) asks for the zeros too. stats() always returns
every counter.
"""

import os
import subprocess
import sys

import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest

import spead_qa_support as qa
from spead_qa_support import spead

CAPTURE = qa.vector("spead64-40_multipacket_1472.pcap")
ZEROS = "GR_CONF_SPEAD_STATS_ZERO_COUNTERS"

UDP_ONLY = {"packets_dropped_socket_overflow", "runs_dropped_socket_overflow"}
IBVERBS_ONLY = {"frames_dropped_no_buffer", "packets_zero_copy", "packets_copied"}
CONTINUOUS_ONLY = {"positions_released", "heaps_missing", "heaps_late", "items_zero_filled"}


def stored_messages(debug):
    return [pmt.to_python(debug.get_message(i)) for i in range(debug.num_messages())]


def replay_messages():
    """Stats dicts a pcap source sends while replaying the capture, and the source."""
    tb = gr.top_block()
    src = spead.source(transport="pcap", endpoints="", item_type="int32",
                       capture_file=CAPTURE, stats_interval=1e-6)
    debug = blocks.message_debug()
    tb.connect(src, blocks.null_sink(gr.sizeof_int))
    tb.msg_connect(src, "stats", debug, "store")
    qa.run_to_completion(tb)
    return stored_messages(debug), src


class qa_messages(qa.FlowgraphTestCase):

    def setUp(self):
        super().setUp()
        os.environ.pop(ZEROS, None)

    def tearDown(self):
        os.environ.pop(ZEROS, None)
        super().tearDown()

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
        progress = stored_messages(debug)
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
        got = sorted((d["id"], d["name"], d["description"])
                     for d in stored_messages(debug))
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

    def test_pcap_source_shows_its_non_zero_counters_only(self):
        messages, src = replay_messages()
        self.assertGreater(len(messages), 0)
        last = messages[-1]
        for message in messages:
            self.assertEqual([k for k, v in message.items() if v == 0], [], message)
            self.assertEqual(set(message) & (UDP_ONLY | IBVERBS_ONLY | CONTINUOUS_ONLY),
                             set(), message)
        self.assertEqual(last["heaps"], 3)
        # every counter stays available
        everything = src.stats()
        self.assertLessEqual(UDP_ONLY | {"frames_dropped_no_buffer", "positions_released"},
                             set(everything))
        self.assertEqual(everything["packets_duplicate"], 0)

    def test_zero_counters_on_request(self):
        os.environ[ZEROS] = "1"
        messages, _ = replay_messages()
        last = messages[-1]
        self.assertEqual(last["packets_duplicate"], 0)
        self.assertIn("frames_filtered", last)  # a pcap counter, at zero
        self.assertEqual(set(last) & (UDP_ONLY | IBVERBS_ONLY | CONTINUOUS_ONLY), set())

    def test_udp_sink_hides_ibverbs_counters(self):
        items = 1024
        data = blocks.vector_source_c([1j] * items * 4)
        tagger = blocks.stream_to_tagged_stream(gr.sizeof_gr_complex, 1, items,
                                                "packet_len")
        sink = spead.sink(transport="udp", endpoints="127.0.0.1:9", stats_interval=1e-6)
        debug = blocks.message_debug()
        self.tb.connect(data, tagger, sink)
        self.tb.msg_connect(sink, "stats", debug, "store")
        os.environ[ZEROS] = "1"
        qa.run_to_completion(self.tb)
        messages = stored_messages(debug)
        self.assertGreater(len(messages), 0)
        for message in messages:
            self.assertEqual(set(message) & IBVERBS_ONLY, set(), message)
            self.assertIn("rate_limit_waits", message)
        self.assertLessEqual(IBVERBS_ONLY - {"frames_dropped_no_buffer"}, set(sink.stats()))

    def test_source_says_what_it_did_when_it_stops(self):
        script = (
            "import sys\n"
            "from gnuradio import blocks, gr, spead\n"
            "tb = gr.top_block()\n"
            "src = spead.source(transport='pcap', endpoints='', item_type='int32',\n"
            "                   capture_file=sys.argv[1])\n"
            "tb.connect(src, blocks.null_sink(gr.sizeof_int))\n"
            "tb.run()\n")
        ran = subprocess.run([sys.executable, "-c", script, CAPTURE], capture_output=True,
                             text=True, timeout=60)
        output = ran.stdout + ran.stderr
        self.assertEqual(ran.returncode, 0, output)
        lines = [line for line in output.splitlines() if "stopped: " in line]
        self.assertEqual(len(lines), 1, output)
        self.assertRegex(lines[0], r"heaps_output: 3\b")
        self.assertNotIn("socket_overflow", lines[0])
        self.assertNotIn(": 0,", lines[0] + ",")


if __name__ == "__main__":
    gr_unittest.run(qa_messages)
