#!/usr/bin/env python3
# Copyright 2026 gr-spead authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every transport the code knows is in the README's one-line tables (blocks and tools)
and in docs/usage.md (its option tables and "Choosing the transport"), so a new one
cannot land undocumented. The list comes from the code: the blocks' refusal of an
unknown transport names every one."""

import os
import re
import unittest

from gnuradio import spead

TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")

# The tools' word for each transport's flag; auto is the blocks' choice alone.
TOOL_FLAGS = {"udp": "", "ibverbs": "--ibv", "pcap": ".pcap", "tcp": "--tcp",
              "rdma": "--rdma"}


def read(*path):
    with open(os.path.join(TOP, *path)) as f:
        return f.read()


def transports_the_code_knows(config):
    try:
        config(transport="no-such-transport")
    except ValueError as e:
        names = re.findall(r"(?:use |, | or )([a-z]+) \(", str(e))
    else:
        raise AssertionError("an unknown transport was taken")
    assert len(names) >= 5, names
    return names


def section(text, heading):
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start:end if end >= 0 else len(text)]


def table_rows(text, after):
    """{first cell: [other cells]} of the first markdown table after `after`."""
    rows = {}
    started = False
    for line in text[text.index(after):].splitlines():
        if line.startswith("|"):
            started = True
            cells = [c.strip() for c in line.strip("|").split("|")]
            rows[cells[0]] = cells[1:]
        elif started:
            break
    return rows


class transports_in_the_docs(unittest.TestCase):

    def setUp(self):
        self.readme = section(read("README.md"), "## Every transport in one line")
        self.usage = read("docs", "usage.md")
        self.known = {block: transports_the_code_knows(getattr(spead, f"{block}_config"))
                      for block in ("source", "sink")}

    def rows_for(self, rows, transport):
        return [cells for first, cells in rows.items() if first.split()[0] == transport]

    def test_every_transport_has_a_row_of_block_one_liners_in_the_readme(self):
        rows = table_rows(self.readme, "| transport | spead.source | spead.sink |")
        for block, known in self.known.items():
            for transport in known:
                with self.subTest(block=block, transport=transport):
                    found = self.rows_for(rows, transport)
                    self.assertTrue(found, f"no README row for {transport}")
                    cell = found[0][0 if block == "source" else 1]
                    self.assertIn(f"spead.{block}(", cell)
                    if transport != "udp":
                        self.assertIn(f'transport="{transport}"', cell)

    def test_every_transport_the_tools_have_has_a_row_of_tool_one_liners(self):
        rows = table_rows(self.readme, "| transport | receive | send |")
        for transport in self.known["source"]:
            if transport == "auto":
                continue  # the blocks' choice; the tools are told which
            with self.subTest(transport=transport):
                found = self.rows_for(rows, transport)
                self.assertTrue(found, f"no README tools row for {transport}")
                receive, send = found[0]
                self.assertIn("spead_recv", receive)
                self.assertIn("spead_send", send)
                self.assertIn(TOOL_FLAGS[transport], receive)
                self.assertIn(TOOL_FLAGS[transport], send)

    def test_the_readme_points_to_links_md(self):
        self.assertIn("(docs/links.md)", self.readme)

    def test_usage_md_lists_every_transport_in_its_option_tables_and_its_choice(self):
        choosing = section(self.usage, "## Choosing the transport")
        for block, known in self.known.items():
            table = section(self.usage, f"## spead.{block} parameters")
            row = next(line for line in table.splitlines()
                       if line.startswith("| `transport` |"))
            for transport in known:
                with self.subTest(block=block, transport=transport):
                    self.assertRegex(row, rf"\b{transport} \(")
                    self.assertIn(f"`{transport}`", choosing)


if __name__ == "__main__":
    unittest.main()
