#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Starting and stopping spead.source many times keeps the process's memory bounded:
each start's receive batch (4 MiB for a coalescing socket) is pages of its own, not
malloc's, which kept a copy in each of its arenas (the process grew by megabytes)."""

import gc
import os

from gnuradio import blocks, gr, gr_unittest

import spead_qa_support as qa

WARM_UP = 30
CYCLES = 200
#: What the process may grow by over CYCLES starts and stops: under 10 KiB a cycle.
BOUND_KIB = 2048


def rss_kib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


class qa_restart_memory(qa.FlowgraphTestCase):

    def growth_over_cycles(self, **kwargs):
        """KiB the process grew by over CYCLES starts and stops of a source (after
        WARM_UP of them), with no traffic."""
        rx, _ = qa.make_source(item_type="int16", **kwargs)
        self.tb.connect(rx, blocks.null_sink(gr.sizeof_short))

        def cycles(n):
            for _ in range(n):
                self.tb.start()
                self.tb.stop()
                self.tb.wait()
            gc.collect()
            return rss_kib()

        before = cycles(WARM_UP)
        return cycles(CYCLES) - before

    def check(self, **kwargs):
        # AddressSanitizer keeps freed memory in its quarantine, so RSS grows whatever
        # the code does.
        if "libasan" in os.environ.get("LD_PRELOAD", ""):
            self.skipTest("RSS is not judged under AddressSanitizer (quarantine)")
        growth = self.growth_over_cycles(**kwargs)
        self.assertLess(growth, BOUND_KIB,
                        f"grew {growth} KiB over {CYCLES} starts and stops "
                        f"({growth / CYCLES:.0f} KiB each)")

    def test_heaps_mode_start_stop_cycles_keep_memory_bounded(self):
        self.check()

    def test_continuous_start_stop_cycles_keep_memory_bounded(self):
        self.check(output_mode="continuous", timestamp_item=0x1600)


if __name__ == "__main__":
    gr_unittest.run(qa_restart_memory)
