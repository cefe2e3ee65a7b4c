#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""One list of options: the blocks' options as source_config / sink_config hold them
(the C++ option table, spead.source_config.options()) are the options GRC offers, with
the same ids, defaults and tabs, that both GRC templates pass by name, that the
Python keywords take, and that docs/usage.md's tables list. A test fails when one face
drifts from the list.

    qa_block_options.py                 # the checks (as ctest runs them)
    qa_block_options.py --write-usage   # rewrite docs/usage.md's option tables
"""

import os
import re
import sys

import yaml
from gnuradio import gr_unittest

from spead_qa_support import spead

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.join(HERE, "..", "..")
USAGE = os.path.join(TOP, "docs", "usage.md")
BLOCKS = ("source", "sink")
# GRC's field types that hold text as typed (no quotes): the default is that text.
TEXT_TYPES = {"string", "enum", "file_open", "file_save"}


def config_of(block):
    return getattr(spead, f"{block}_config")


def grc(block):
    with open(os.path.join(TOP, "grc", f"spead_{block}.block.yml")) as f:
        return yaml.safe_load(f)


def grc_default(parameter):
    """A GRC parameter's default as a Python value."""
    text = str(parameter.get("default", ""))
    if parameter["dtype"] in TEXT_TYPES:
        return text
    return eval(text, {})  # GRC evaluates defaults as Python: '16*1024*1024', 'True'


def cpp_template_pairs(make):
    """(option, GRC field) of each `{ "option", <field's value> }` of a C++ template."""
    for name, rest in re.findall(r'\{ "(\w+)", (.*) \}', make):
        listed = re.search(r"for i in (\w+)\(\)", rest)  # an int_vector field
        field = listed or re.search(r"\$\{\s*(?:cpp_string\()?(\w+)", rest)
        yield name, field.group(1) if field else None


def markdown_value(value):
    if value == "":
        return "empty"
    if isinstance(value, list):
        return "empty" if not value else ", ".join(map(str, value))
    if isinstance(value, bool):
        return str(value)
    return f"`{value}`"


def usage_table(block):
    """docs/usage.md's option table of a block, as generated from the option list."""
    rows = ["| option | GRC tab | kind | default | what it does |",
            "| --- | --- | --- | --- | --- |"]
    for o in config_of(block).options():
        doc = o["doc"].replace("|", "\\|")
        rows.append(f"| `{o['name']}` | {o['tab']} | {o['kind']} | "
                    f"{markdown_value(o['default'])} | {doc} |")
    return "\n".join(rows)


def markers(block):
    return (f"<!-- options:{block} (generated from spead.{block}_config.options() by "
            "python/spead/qa_block_options.py --write-usage) -->",
            f"<!-- options:{block} end -->")


def usage_section(text, block):
    begin, end = markers(block)
    if begin not in text or end not in text:
        return None
    return text[text.index(begin) + len(begin):text.index(end)].strip()


def write_usage():
    with open(USAGE) as f:
        text = f.read()
    for block in BLOCKS:
        begin, end = markers(block)
        if usage_section(text, block) is None:
            raise SystemExit(f"docs/usage.md has no {begin} ... {end} section")
        text = (text[:text.index(begin) + len(begin)] + "\n\n" + usage_table(block) +
                "\n\n" + text[text.index(end):])
    with open(USAGE, "w") as f:
        f.write(text)


class qa_block_options(gr_unittest.TestCase):

    def test_grc_ids_are_the_options(self):
        for block in BLOCKS:
            ids = {p["id"] for p in grc(block)["parameters"]}
            options = {o["grc_id"] for o in config_of(block).options()}
            self.assertEqual(ids - options, set(), f"GRC {block}: fields no option has")
            self.assertEqual(options - ids, set(), f"GRC {block}: options with no field")

    def test_grc_defaults_are_the_options_defaults(self):
        for block in BLOCKS:
            fields = {p["id"]: p for p in grc(block)["parameters"]}
            for o in config_of(block).options():
                self.assertEqual(grc_default(fields[o["grc_id"]]), o["default"],
                                 f"GRC {block} {o['grc_id']}: default")

    def test_grc_tabs_are_the_options_tabs(self):
        for block in BLOCKS:
            fields = {p["id"]: p for p in grc(block)["parameters"]}
            for o in config_of(block).options():
                self.assertEqual(fields[o["grc_id"]].get("category", "General"), o["tab"],
                                 f"GRC {block} {o['grc_id']}: tab")

    def test_the_first_tab_is_short_for_udp(self):
        # gr-network's udp_source has 8 fields in all; ours shows at most 8 at first.
        for block in BLOCKS:
            shown = [p["id"] for p in grc(block)["parameters"]
                     if p.get("category", "General") == "General"
                     and "'none' if transport == 'pcap' else 'all'" not in str(p.get("hide"))]
            self.assertLessEqual(len(shown), 8, f"{block}: {shown}")

    def test_both_grc_templates_pass_every_option_by_name(self):
        for block in BLOCKS:
            y = grc(block)
            options = config_of(block).options()
            python = dict(re.findall(r"(\w+)=\S*?\$\{\s*(\w+)", y["templates"]["make"]))
            cpp = dict(cpp_template_pairs(y["cpp_templates"]["make"]))
            for name, template in (("Python", python), ("C++", cpp)):
                self.assertEqual(template, {o["name"]: o["grc_id"] for o in options},
                                 f"{block}'s {name} template: option=field pairs")

    def test_python_keywords_take_every_option_at_its_default(self):
        for block in BLOCKS:
            config = config_of(block)
            for o in config.options():
                config(**{o["name"]: o["default"]})
            with self.assertRaises(ValueError):
                config(no_such_option=1)

    def test_usage_md_lists_the_options(self):
        with open(USAGE) as f:
            text = f.read()
        for block in BLOCKS:
            self.assertEqual(
                usage_section(text, block), usage_table(block),
                f"docs/usage.md's {block} options are not the option list: run "
                "python/spead/qa_block_options.py --write-usage")


if __name__ == "__main__":
    if "--write-usage" in sys.argv:
        write_usage()
    else:
        gr_unittest.run(qa_block_options)
