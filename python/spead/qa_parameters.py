#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Every invalid parameter of spead.source and spead.sink raises ValueError naming it."""

import os
import tempfile

from gnuradio import gr_unittest

import spead_qa_support as qa
from spead_qa_support import spead

SMALL_PCAP = qa.vector("spead64-40_small_desc_stop.pcap")

# (parameter named in the message, keyword arguments)
BAD_EITHER = [  # bad for both blocks
    ("transport", {"transport": "infiniband"}),
    ("interface", {"transport": "ibverbs"}),
    ("interface", {"transport": "ibverbs", "interface": "nosuch0"}),
    ("max_poll", {"max_poll": 0}),
    ("max_poll", {"transport": "ibverbs", "interface": "lo", "max_poll": -1}),
    ("endpoints", {"endpoints": ""}),
    ("buffer_size", {"buffer_size": 1 << 31}),
    ("max_packet_size", {"max_packet_size": 70000}),
    ("vlen", {"vlen": 0}),
]

BAD_SOURCE = BAD_EITHER + [
    ("endpoints", {"endpoints": "not an endpoint"}),
    ("endpoints", {"endpoints": "127.0.0.1:99999"}),
    ("endpoints", {"endpoints": "127.0.0.1+x:7148"}),
    ("interface", {"endpoints": "239.1.2.3:7148", "interface": "no-such-if0"}),
    ("max_packet_size", {"max_packet_size": 10}),
    ("item_type", {"item_type": "complex_double"}),
    ("payload_item", {"payload_item": 0x05}),
    ("max_heap_size", {"max_heap_size": 4, "item_type": "complex_float"}),
    ("max_heap_size", {"max_heap_size": 1 << 40}),
    ("max_heaps", {"max_heaps": 0}),
    ("incomplete_heaps", {"incomplete_heaps": "keep"}),
    ("timestamp_item", {"timestamp_item": 0x01, "sample_rate": 1e6}),
    ("sample_rate", {"timestamp_item": 0x1600}),
    ("sample_rate", {"timestamp_item": 0x1600, "sample_rate": -1.0}),
    ("sync_time", {"sync_time": -5.0}),
    ("byte_order", {"byte_order": "big"}),
    ("stats_interval", {"stats_interval": -1.0}),
    ("capture_file", {"transport": "pcap", "endpoints": ""}),
    ("capture_file", {"transport": "pcap", "endpoints": "",
                      "capture_file": "/nonexistent/x.pcap"}),
    ("endpoints", {"transport": "pcap", "capture_file": SMALL_PCAP,
                   "endpoints": ":7148,:7149"}),
    # tcp: bad input refused when the block is made, naming the parameter
    ("endpoints", {"transport": "tcp", "endpoints": "not an endpoint"}),
    ("endpoints", {"transport": "tcp", "endpoints": "127.0.0.1:99999"}),
    ("endpoints", {"transport": "tcp", "endpoints": "no.such.host.invalid:7148"}),
    ("max_connections", {"transport": "tcp", "max_connections": 0}),
    ("allowed_peers", {"transport": "tcp", "allowed_peers": "10.0.0.0/99"}),
    ("allowed_peers", {"transport": "tcp", "allowed_peers": "not-an-address"}),
    ("interface", {"transport": "tcp", "interface": "lo"}),
    ("threads", {"transport": "tcp", "threads": 2}),
]

BAD_SINK = BAD_EITHER + [
    ("endpoints", {"endpoints": "nowhere"}),
    ("endpoints", {"endpoints": "127.0.0.1:0"}),
    ("interface", {"interface": "no-such-if0"}),
    ("max_packet_size", {"max_packet_size": 8}),
    ("item_type", {"item_type": "bits"}),
    ("payload_item", {"payload_item": 0x02}),
    ("payload_item", {"payload_item": 0x10}),
    ("payload_item", {"payload_item": 1 << 30}),
    ("heap_items", {"len_tag_key": "", "heap_items": 0}),
    ("ttl", {"ttl": 256}),
    ("ttl", {"ttl": -1}),
    ("rate_gbps", {"rate_gbps": -1.0}),
    ("rate_gbps", {"rate_gbps": float("nan")}),
    ("flavour", {"flavour": "64-32"}),
    ("flavour", {"flavour": "spead"}),
    ("heap_cnt_start", {"heap_cnt_start": 1 << 41}),
    ("heap_cnt_step", {"heap_cnt_step": 0}),
    ("byte_order", {"byte_order": "auto"}),
    ("stats_interval", {"stats_interval": -0.5}),
    ("capture_file", {"transport": "pcap"}),
    ("capture_file", {"transport": "pcap", "capture_file": "/nonexistent/dir/x.pcap"}),
    ("endpoints", {"transport": "pcap", "capture_file": "/tmp/unused.pcap",
                   "endpoints": "bad"}),
    # tcp: checked at make(), before any connection is tried
    ("endpoints", {"transport": "tcp", "endpoints": "nowhere"}),
    ("endpoints", {"transport": "tcp", "endpoints": "127.0.0.1:0"}),
    ("endpoints", {"transport": "tcp", "endpoints": "127.0.0.1:7148,nowhere:7149"}),
    ("connect_timeout", {"transport": "tcp", "connect_timeout": 0.0}),
    ("connect_timeout", {"transport": "tcp", "connect_timeout": float("nan")}),
]


class qa_parameters(gr_unittest.TestCase):

    def check(self, factory, cases, defaults):
        for name, kwargs in cases:
            with self.subTest(parameter=name, kwargs=kwargs):
                args = dict(defaults)
                args.update(kwargs)
                with self.assertRaises(ValueError) as ctx:
                    factory(**args)
                message = str(ctx.exception)
                self.assertTrue(message.startswith(name + ":"), message)
                self.assertIn(";", message, "the message says how to fix it")

    def test_every_bad_source_parameter_names_itself(self):
        port = qa.free_udp_port()
        self.check(spead.source, BAD_SOURCE, {"endpoints": f"127.0.0.1:{port}"})

    def test_every_bad_sink_parameter_names_itself(self):
        self.check(spead.sink, BAD_SINK, {"endpoints": "127.0.0.1:9"})

    def test_good_parameters_make_blocks(self):
        src, port = qa.make_source(item_type="sc16", vlen=4, payload_item=0x1000,
                                   max_heap_size=1 << 20, incomplete_heaps="deliver",
                                   timestamp_item=0x1600, sample_rate=1.712e9,
                                   byte_order="as-is", stats_interval=1.0)
        self.assertEqual(src.stats()["heaps"], 0)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "out.pcap")
            sink = spead.sink(transport="pcap", capture_file=path,
                              endpoints=f"127.0.0.1:{port}", item_type="byte",
                              flavour="SPEAD-64-48", rate_gbps=1.5, len_tag_key="",
                              heap_items=1024)
            self.assertEqual(sink.stats()["heaps"], 0)
            self.assertTrue(os.path.exists(path))
            del sink


if __name__ == "__main__":
    gr_unittest.run(qa_parameters)
