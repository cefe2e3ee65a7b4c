#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""What the blocks' `stats` messages and their summary at stop show.

Only the counters the transport in use counts, and of those only the non-zero ones;
GNU Radio's preference [spead] stats_zero_counters (GR_CONF_SPEAD_STATS_ZERO_COUNTERS)
asks for the zeros too. stats() always returns every counter.
"""

import os
import subprocess
import sys
import unittest

import pmt
from gnuradio import blocks, gr, spead

VECTORS = os.environ.get("GR_SPEAD_VECTORS_DIR",
                         os.path.join(os.path.dirname(__file__), "..", "vectors"))
CAPTURE = os.path.join(VECTORS, "spead64-40_multipacket_1472.pcap")
ZEROS = "GR_CONF_SPEAD_STATS_ZERO_COUNTERS"

UDP_ONLY = {"packets_dropped_socket_overflow", "runs_dropped_socket_overflow"}
IBVERBS_ONLY = {"frames_dropped_no_buffer", "packets_zero_copy", "packets_copied"}
CONTINUOUS_ONLY = {"positions_released", "heaps_missing", "heaps_late", "items_zero_filled"}


def replay_messages():
    """Stats dicts a pcap source sends while replaying the capture, and the source."""
    tb = gr.top_block()
    src = spead.source(transport="pcap", endpoints="", item_type="int32",
                       capture_file=CAPTURE, stats_interval=1e-6)
    debug = blocks.message_debug()
    tb.connect(src, blocks.null_sink(gr.sizeof_int))
    tb.msg_connect(src, "stats", debug, "store")
    tb.run()
    messages = [pmt.to_python(debug.get_message(i)) for i in range(debug.num_messages())]
    return messages, src


class test_stats_message(unittest.TestCase):

    def setUp(self):
        os.environ.pop(ZEROS, None)

    def tearDown(self):
        os.environ.pop(ZEROS, None)

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
        tb = gr.top_block()
        items = 1024
        data = blocks.vector_source_c([1j] * items * 4)
        tagger = blocks.stream_to_tagged_stream(gr.sizeof_gr_complex, 1, items,
                                                "packet_len")
        sink = spead.sink(transport="udp", endpoints="127.0.0.1:9", stats_interval=1e-6)
        debug = blocks.message_debug()
        tb.connect(data, tagger, sink)
        tb.msg_connect(sink, "stats", debug, "store")
        os.environ[ZEROS] = "1"
        tb.run()
        messages = [pmt.to_python(debug.get_message(i)) for i in range(debug.num_messages())]
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
    unittest.main()
