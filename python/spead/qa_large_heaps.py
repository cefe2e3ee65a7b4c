#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""4 MiB heaps go through without stalling; heaps above max_heap_size are dropped and
counted without holding up the ones after them."""

import contextlib
import fcntl
import os
import sys
import tempfile

import numpy as np
from gnuradio import blocks, gr_unittest

import spead_qa_support as qa
from spead_qa_support import spead

MIB = 1024 * 1024

# The source's socket buffer holds everything a test sends (32 MiB at most): the kernel
# charges a jumbo datagram about twice its payload against twice the buffer asked for,
# so a receive thread that a loaded machine leaves unscheduled for a while loses
# nothing, and these tests may assert lossless UDP.
SOCKET_BUFFER = 64 * MIB
# Where the sender cannot be given that buffer (net.core.rmem_max below it and not
# ours to raise), it is paced instead, which a loaded enough machine can still defeat.
PACED_RATE_GBPS = 0.25

RMEM_MAX = "/proc/sys/net/core/rmem_max"


def read_rmem_max():
    with open(RMEM_MAX) as f:
        return int(f.read())


@contextlib.contextmanager
def rmem_max_at_least(nbytes):
    """Lifts net.core.rmem_max to nbytes (root only) while a socket is made, and puts
    it back; yields (lifted or already enough, a sentence saying what happened).

    The limit is global and checked only when a socket sets its buffer, so it is
    lifted just for that moment, one test process at a time (a lock file), and put
    back only if nobody changed it meanwhile."""
    with open(os.path.join(tempfile.gettempdir(), "gr-spead-rmem_max.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        original = read_rmem_max()
        if original >= nbytes:
            yield True, f"net.core.rmem_max is {original}: the socket buffer fits"
            return
        try:
            with open(RMEM_MAX, "w") as f:
                f.write(str(nbytes))
        except OSError as e:
            yield False, (f"net.core.rmem_max is {original} and cannot be raised "
                          f"({e.strerror}): the sender is paced at {PACED_RATE_GBPS} "
                          "Gb/s instead")
            return
        try:
            yield True, (f"net.core.rmem_max raised from {original} to {nbytes} while "
                         "the source's socket was made, then restored")
        finally:
            if read_rmem_max() == nbytes:
                with open(RMEM_MAX, "w") as f:
                    f.write(str(original))


class qa_large_heaps(qa.FlowgraphAndTempDirTestCase):


    def send_bytes(self, lengths, max_heap_size):
        """Sends int8 packets of `lengths`; returns (bytes received, source, sink)."""
        rng = np.random.default_rng(5)
        data = rng.integers(0, 256, sum(lengths), dtype=np.uint8)
        src = blocks.vector_source_b(data.tolist(), False, 1, qa.packet_tags(lengths))
        src.set_min_output_buffer(2 * max(lengths))
        with rmem_max_at_least(SOCKET_BUFFER) as (fits, what_happened):
            rx, port = qa.make_source(item_type="int8", max_heap_size=max_heap_size,
                                      buffer_size=SOCKET_BUFFER)
        print(f"{self.id()}: {what_happened}", file=sys.stderr)
        tx = spead.sink(endpoints=f"127.0.0.1:{port}", item_type="int8",
                        max_packet_size=8972,
                        rate_gbps=qa.TEST_RATE_GBPS if fits else PACED_RATE_GBPS)
        path = os.path.join(self.dir.name, "out.bin")
        out = blocks.file_sink(1, path)
        out.set_unbuffered(False)
        self.tb.connect(src, tx)
        self.tb.connect(rx, out)
        qa.run_to_completion(self.tb, timeout=60)
        out.close()
        return data, np.fromfile(path, dtype=np.uint8), rx, tx

    def test_4_mib_heaps_do_not_stall(self):
        lengths = [4 * MIB] * 8
        sent, got, rx, tx = self.send_bytes(lengths, 4 * MIB)
        self.assertEqual(len(got), len(sent))
        self.assertTrue(np.array_equal(got, sent))
        self.assertEqual(rx.stats()["heaps_output"], 8)
        self.assertEqual(rx.stats()["packets"], tx.stats()["packets"])

    def test_heap_above_max_heap_size_is_dropped_and_the_next_ones_arrive(self):
        lengths = [MIB, 2 * MIB, MIB]
        sent, got, rx, tx = self.send_bytes(lengths, MIB)
        self.assertTrue(np.array_equal(got, np.concatenate([sent[:MIB], sent[3 * MIB:]])))
        stats = rx.stats()
        self.assertEqual(stats["heaps_too_large"], 1)
        self.assertGreater(stats["packets_heap_too_large"], 2 * MIB // 8972)
        # every packet sent is either in a heap or counted as part of the dropped one
        self.assertEqual(stats["packets"], tx.stats()["packets"])
        self.assertEqual(stats["heaps_output"], 2)


if __name__ == "__main__":
    gr_unittest.run(qa_large_heaps)
