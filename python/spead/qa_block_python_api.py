#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The blocks' Python face: a wrong argument is a ValueError naming the parameter (never
pybind11's "incompatible constructor arguments" TypeError), help(spead.source) /
help(spead.sink) document every option, and the keyword form, a spead.source_config
and positional arguments build the same block."""

import os
import pydoc
import re
import subprocess
import sys

from gnuradio import gr_unittest

from spead_qa_support import spead, vector

CAPTURE = vector("spead64-40_small_desc_stop.pcap")

HERE = os.path.dirname(os.path.abspath(__file__))


class qa_block_python_api(gr_unittest.TestCase):

    def assert_value_error(self, block, name, **kwargs):
        with self.assertRaises(ValueError) as cm:
            block(**kwargs)
        self.assertTrue(str(cm.exception).startswith(f"{name}:"), str(cm.exception))
        return str(cm.exception)

    def test_negative_sizes_name_the_parameter(self):
        message = self.assert_value_error(spead.source, "vlen", vlen=-1)
        self.assertIn("-1 is negative", message)
        self.assert_value_error(spead.sink, "vlen", vlen=-1)
        self.assert_value_error(spead.source, "max_heaps", max_heaps=-4)
        self.assert_value_error(spead.sink, "heap_items", heap_items=-1)

    def test_wrong_types_name_the_parameter(self):
        self.assertIn("not text", self.assert_value_error(spead.source, "item_type",
                                                          item_type=5))
        self.assert_value_error(spead.source, "max_heaps", max_heaps=1.5)
        self.assert_value_error(spead.sink, "rate_gbps", rate_gbps="fast")
        self.assert_value_error(spead.source, "payload_item", payload_item=1 << 64)
        self.assert_value_error(spead.source, "comp_vector", comp_vector=1 << 40)
        self.assert_value_error(spead.source, "nope", nope=1)

    def test_errors_of_the_blocks_themselves_stay_value_errors(self):
        self.assert_value_error(spead.sink, "ttl", ttl=-1)  # an int: the block refuses it

    def test_signed_options_take_negatives_and_the_others_refuse_them(self):
        for block, config in ((spead.source, spead.source_config),
                              (spead.sink, spead.sink_config)):
            for option in config.options():
                name, kind = option["name"], option["kind"]
                if kind == "int":  # taken as a number; its config judges it
                    try:
                        config(**{name: -1})  # comp_vector -1: busy polling
                    except ValueError as e:
                        self.assertNotIn("is negative", str(e))
                elif kind == "uint":
                    message = self.assert_value_error(block, name, **{name: -1})
                    self.assertIn("-1 is negative", message)
        signed = {o["name"] for o in spead.source_config.options() + spead.sink_config.options()
                  if o["kind"] == "int"}
        self.assertEqual(signed, {"comp_vector", "max_poll", "ttl"})

    def test_help_shows_every_parameter(self):
        for block, config in ((spead.source, spead.source_config),
                              (spead.sink, spead.sink_config)):
            text = pydoc.render_doc(block)
            self.assertIn("Args:", text)
            args = text.split("Args:")[1]  # the documentation, after the signature
            options = config.options()
            self.assertGreater(len(options), 30)
            for option in options:
                name = option["name"]
                self.assertRegex(args, rf"\n[ |]+{name}: \(\w", f"{block.__name__}.{name}")
        self.assertIn("Receives SPEAD heaps", spead.source.__doc__)
        self.assertIn("stats", pydoc.render_doc(spead.source.stats))

    def test_keywords_a_config_and_positions_make_the_same_source(self):
        by_keyword = spead.source(transport="pcap", capture_file=CAPTURE, endpoints="",
                                  item_type="int32")
        config = spead.source_config(transport="pcap", capture_file=CAPTURE,
                                     endpoints="", item_type="int32")
        by_config = spead.source(config)
        by_position = spead.source("pcap", "", "", 0, 9200, "int32",
                                   capture_file=CAPTURE)
        for block in (by_keyword, by_config, by_position):
            self.assertEqual(block.active_transport(), "pcap")
            self.assertEqual(block.output_signature().sizeof_stream_item(0), 4)

    def test_flags_take_0_and_1_as_before(self):
        # Scripts written for make()'s bool parameters passed 0 and 1 (pybind11 took
        # them); cluster.py's sender does.
        self.assertFalse(spead.sink_config(send_stop_heap=0).send_stop_heap)
        self.assertTrue(spead.sink_config(send_stop_heap=1).send_stop_heap)
        self.assert_value_error(spead.sink, "send_stop_heap", send_stop_heap="no")

    def test_a_config_is_built_by_name_and_read_by_part(self):
        config = spead.source_config(vlen=4, max_heaps=8, output_mode="continuous",
                                     timestamp_item=0x1600, window_heaps=16)
        self.assertEqual(config.items.vlen, 4)
        config.items.vlen = 3  # a part changed in place
        self.assertEqual(config.items.vlen, 3)
        config.set("max_connections", 4)
        self.assertEqual(config.tcp.max_connections, 4)
        self.assertEqual(config.output_mode, "continuous")
        self.assertEqual(config.continuous.window_heaps, 16)
        self.assertEqual(config.continuous.timestamp_item, 0x1600)
        self.assertEqual(spead.sink_config(endpoints="127.0.0.1:1,127.0.0.1:2", transport="tcp",
                                           reconnect=True).tcp[1].reconnect, True)
        config.set("vlen", 2)
        self.assertEqual(config.items.vlen, 2)
        with self.assertRaises(ValueError) as cm:
            config.set("vlen", 0)
        self.assertTrue(str(cm.exception).startswith("vlen: 0 is out of range"))
        with self.assertRaises(ValueError) as cm:
            spead.sink_config(nope=1)
        self.assertTrue(str(cm.exception).startswith("nope: not an option of spead.sink"))

    def test_an_option_refused_by_another_transport_is_named_when_that_is_chosen(self):
        # A multicast range is udp's, not tcp's (which listens on one address): fine
        # for udp, named when tcp is chosen, whichever comes first.
        config = spead.source_config(endpoints="239.1.2.3+3:7148")
        self.assertIn("endpoints", config.refusal("tcp"))
        self.assertEqual(config.refusal("udp"), "")
        for options in (dict(endpoints="239.1.2.3+3:7148", transport="tcp"),
                        dict(transport="tcp", endpoints="239.1.2.3+3:7148")):
            with self.assertRaises(ValueError) as cm:
                spead.source_config(**options)
            self.assertTrue(str(cm.exception).startswith("endpoints:"), str(cm.exception))

    def test_docstring_templates_are_current(self):
        script = os.path.join(HERE, "bindings", "docstrings_from_headers.py")
        done = subprocess.run([sys.executable, script, "--check", "source", "sink"],
                              capture_output=True, text=True, timeout=60)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)


if __name__ == "__main__":
    gr_unittest.run(qa_block_python_api)
