#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""examples/recv_chunks_numba.py (spead2's chunk tutorial receiver, imports swapped)
receives a continuous stream from spead_send and prints the right mean power per
chunk: checked against the same stream recorded by spead_send to a capture and read
heap by heap through recv.Stream (another path). Both placements: the numba callback
and the declarative ChunkPlacement."""

import os
import subprocess
import sys
import unittest

import numpy as np
from gnuradio import gr_unittest

import spead_qa_support as qa

try:
    import numba  # noqa: F401
    import scipy  # noqa: F401
except ImportError:
    numba = None

EXAMPLE = os.path.join(qa.TESTS_DIR, "..", "examples", "recv_chunks_numba.py")
HEAP_SIZE = 16384
HEAPS_PER_CHUNK = 8
HEAPS = 64
TIMESTAMP_ITEM = 0x1600


app = qa.app_path


def send_args():
    return ["--heap-size", str(HEAP_SIZE), "--heaps", str(HEAPS), "--verify",
            "--timestamp-item", str(TIMESTAMP_ITEM), "--packet", "8972"]


@unittest.skipIf(not app("spead_send"), "spead_send not found (set GR_SPEAD_APPS_DIR)")
class qa_api_chunk_tutorial(qa.ApiTestCase):

    def expected_power(self):
        """Mean int8 power per chunk, from a capture of the same stream read as heaps."""
        sums = {}
        for ts, payload in qa.spead_send_payloads(send_args(), TIMESTAMP_ITEM).items():
            chunk = ts // (HEAP_SIZE * HEAPS_PER_CHUNK)
            samples = np.frombuffer(payload, np.int8).astype(np.int64)
            sums[chunk] = sums.get(chunk, 0) + int(np.sum(samples * samples))
        self.assertEqual(len(sums), HEAPS // HEAPS_PER_CHUNK)
        return {c: s / (HEAP_SIZE * HEAPS_PER_CHUNK) for c, s in sums.items()}

    def run_example(self, *flags):
        port = qa.free_udp_port()
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
        proc = subprocess.Popen([sys.executable, "-B", EXAMPLE, "--heap-size", str(HEAP_SIZE),
                                 "--heaps-per-chunk", str(HEAPS_PER_CHUNK), *flags, str(port)],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                env=env)
        self.addCleanup(qa.kill, proc)
        for line in proc.stdout:  # the logger's warnings may come first
            if line.strip() == "ready":  # numba compiled, the reader bound
                break
        else:
            self.fail("the example ended before it was ready")
        subprocess.run([app("spead_send"), *send_args(), "--rate", "0.2",
                        f"127.0.0.1:{port}"], check=True, timeout=60,
                       stdout=subprocess.DEVNULL)
        output, _ = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 0)
        power = {}
        for line in output.splitlines():
            if line.startswith("chunk "):
                words = line.replace(":", "").split()
                if int(words[2]) == HEAPS_PER_CHUNK:  # complete chunks only
                    power[int(words[1])] = float(words[5])
        return power, output

    def check(self, *flags):
        expected = self.expected_power()
        power, output = self.run_example(*flags)
        # loopback at 0.2 Gb/s: at most one chunk may lose a heap on a busy machine
        self.assertGreaterEqual(len(power), len(expected) - 1, output)
        for chunk, value in power.items():
            self.assertAlmostEqual(value, expected[chunk], places=4, msg=output)
        self.assertIn("too_old_heaps: 0", output)

    @unittest.skipIf(numba is None, "python3-numba and python3-scipy are not installed")
    def test_numba_placement_prints_the_power_of_each_chunk(self):
        self.check()

    @unittest.skipIf(numba is None, "python3-numba is not installed (the example "
                     "imports it)")
    def test_declarative_placement_prints_the_same(self):
        self.check("--declarative")


if __name__ == "__main__":
    gr_unittest.run(qa_api_chunk_tutorial)
