#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The blocks' Python face: a wrong argument is a ValueError naming the parameter (never
pybind11's "incompatible constructor arguments" TypeError), and help(spead.source) /
help(spead.sink) show the C++ documentation of every parameter."""

import os
import pydoc
import re
import subprocess
import sys

from gnuradio import gr_unittest

from spead_qa_support import spead

HERE = os.path.dirname(os.path.abspath(__file__))
HEADERS = os.path.join(HERE, "..", "..", "include", "gnuradio", "spead")


def make_parameters(block):
    """(type, name) of each make() parameter in the block's header."""
    with open(os.path.join(HEADERS, f"{block}.h")) as f:
        text = f.read()
    make = text[text.index("static sptr make("):]
    make = make[:make.index(");")]
    return re.findall(r"([\w:]+)&? (\w+) =", make)


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

    def test_signed_parameters_match_the_headers(self):
        from gnuradio.spead._block_arguments import SIGNED_INT_PARAMETERS
        signed = {name for block in ("source", "sink")
                  for kind, name in make_parameters(block) if kind == "int"}
        self.assertEqual(signed, SIGNED_INT_PARAMETERS)

    def test_help_shows_every_parameter(self):
        for block in (spead.source, spead.sink):
            text = pydoc.render_doc(block)
            self.assertIn("Args:", text)
            args = text.split("Args:")[1]  # the documentation, after the signature
            parameters = make_parameters(block.__name__)
            self.assertGreater(len(parameters), 20)
            for _, name in parameters:
                self.assertRegex(args, rf"\n[ |]+{name}: \S", f"{block.__name__}.{name}")
        self.assertIn("Receives SPEAD heaps", spead.source.__doc__)
        self.assertIn("stats", pydoc.render_doc(spead.source.stats))

    def test_docstring_templates_are_current(self):
        script = os.path.join(HERE, "bindings", "docstrings_from_headers.py")
        done = subprocess.run([sys.executable, script, "--check", "source", "sink"],
                              capture_output=True, text=True, timeout=60)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)


if __name__ == "__main__":
    gr_unittest.run(qa_block_python_api)
