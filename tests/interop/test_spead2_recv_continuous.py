#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""spead.sink(input_mode="continuous") -> the real spead2_recv, when one is installed
(SPEAD2_BIN_DIR, else PATH); exits 77 (ctest: skipped) when there is none.

1. Two substreams over UDP on 127.0.0.1 into `spead2_recv --descriptors`: spead2 must
   print every heap, complete, with its timestamp and substream immediates, the
   4096-byte samples and the descriptors; its printout must equal, heap by heap, what
   tests/interop/spead2_layout.py prints for a capture of the same flowgraph.
2. The same with the samples in spead2's --verify pattern (big-endian minstd_rand
   words, continued heap by heap by cnt) and the timestamp and substream below 0x1000
   (spead2_recv verifies every item from 0x1000 up): spead2 checks every payload byte.
3. spead2_recv reading the sink's capture file (a pcap source) prints the same.

The CI-runnable twin is python/spead/qa_interop_sink_spead2_decode.py."""

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import spead2_layout as s2  # noqa: E402

SKIP = 77
HEAP_ITEMS = 1024
START = 5_000_000_000_000


def find_spead2_recv():
    bin_dir = os.environ.get("SPEAD2_BIN_DIR")
    if bin_dir:
        path = os.path.join(bin_dir, "spead2_recv")
        return path if os.access(path, os.X_OK) else None
    return shutil.which("spead2_recv")


SPEAD2_RECV = find_spead2_recv()
try:
    from gnuradio import blocks, gr, spead
except ImportError:
    spead = None


def free_udp_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def heap_blocks(text):
    """{cnt: lines} of a spead2_recv printout (or of render_like_spead2_recv)."""
    out = {}
    current = None
    for line in s2.spead2_recv_heap_text(text).splitlines():
        if line.startswith("Received heap "):
            current = int(line.split()[2])
            out[current] = []
        elif line.startswith("Received ") and line.endswith(" heaps"):
            break
        elif current is not None:
            out[current].append(line)
    return out


def verify_pattern(substreams, heaps, items_per_heap):
    """Inputs whose heap cnt c carries spead2_recv --verify's words: minstd_rand from
    word elements x items x (c - 1), big-endian on the wire."""
    inputs = []
    for s in range(substreams):
        words = []
        for k in range(heaps):
            cnt = 1 + k * substreams + s
            words += s2.minstd_words(HEAP_ITEMS * items_per_heap * (cnt - 1), HEAP_ITEMS)
        inputs.append(np.array(words, dtype=">u4").view("<i4").copy())
    return inputs


class test_spead2_recv_continuous(unittest.TestCase):

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.procs = []

    def tearDown(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait(10)
        self.dir.cleanup()

    def run_sink(self, inputs, timestamp_item, substream_item, **kwargs):
        tb = gr.top_block()
        tx = spead.sink(item_type="int32", max_packet_size=1472, heap_items=HEAP_ITEMS,
                        flavour="64-48", input_mode="continuous", rate_gbps=0.2,
                        timestamp_item=timestamp_item, start_timestamp=START,
                        substreams=len(inputs), substream_item=substream_item,
                        **kwargs)
        for s, data in enumerate(inputs):
            tb.connect(blocks.vector_source_i(data.tolist(), False), (tx, s))
        tb.start()
        waiter = threading.Thread(target=tb.wait, daemon=True)
        waiter.start()
        waiter.join(60)
        if waiter.is_alive():
            tb.stop()
            waiter.join(10)
            raise AssertionError("the sink's flowgraph did not end within 60 s")
        return tx

    def spead2_recv(self, sources, extra=()):
        proc = subprocess.Popen([SPEAD2_RECV, "--descriptors", *extra, *sources],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        self.procs.append(proc)
        return proc

    def finish(self, proc, timeout=30):
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=10)
            self.fail(f"spead2_recv did not see every stop heap in {timeout} s:\n{out}")
        self.assertEqual(proc.returncode, 0, err)
        return out, err

    def expected_from_capture(self, inputs, timestamp_item, substream_item):
        """What spead2_layout makes of the same flowgraph recorded to a capture."""
        path = os.path.join(self.dir.name, "sink.pcap")
        self.run_sink(inputs, timestamp_item, substream_item, transport="pcap",
                      capture_file=path, endpoints="127.0.0.1:7148,127.0.0.1:7149")
        heaps = {}
        for port in (7148, 7149):
            rx = s2.Receiver()
            for p, data in s2.read_pcap(path):
                if p == port:
                    rx.add(data)
            self.assertTrue(rx.stopped)
            heaps.update(heap_blocks(s2.render_like_spead2_recv(rx.heaps)))
        return path, heaps

    def live(self, inputs, timestamp_item, substream_item, extra=()):
        for attempt in range(10):
            ports = [free_udp_port(), free_udp_port()]
            if ports[0] == ports[1]:
                continue
            proc = self.spead2_recv([f"127.0.0.1:{p}" for p in ports], extra)
            time.sleep(0.5)  # let it bind
            if proc.poll() is None:
                break
        else:
            self.fail("spead2_recv could not bind two free ports")
        self.run_sink(inputs, timestamp_item, substream_item,
                      endpoints=",".join(f"127.0.0.1:{p}" for p in ports))
        out, err = self.finish(proc)
        return heap_blocks(out), out, err

    def check_data(self, got, heaps, timestamp_item, substream_item):
        data = {cnt: lines for cnt, lines in got.items()
                if any(line.startswith(f"{timestamp_item:#x} =") for line in lines)}
        self.assertEqual(sorted(data), list(range(1, 2 * heaps + 1)))
        for cnt, lines in data.items():
            k, s = divmod(cnt - 1, 2)
            self.assertIn("0x1000 = [4096 bytes]", lines)
            self.assertIn(f"{timestamp_item:#x} = [6 bytes] = {START + k * HEAP_ITEMS:#x}",
                          lines)
            self.assertIn(f"{substream_item:#x} = [6 bytes] = " + (f"{s:#x}" if s else "0"),
                          lines)

    def test_sink_to_spead2_recv_timestamps_substreams_descriptors(self):
        heaps = 20
        inputs = [np.arange(1, heaps * HEAP_ITEMS + 1, dtype=np.int32) + 10_000_000 * s
                  for s in range(2)]
        got, out, _ = self.live(inputs, 0x1600, 0x3101)
        self.check_data(got, heaps, 0x1600, 0x3101)
        self.assertNotIn("Discarding incomplete heap", out)
        _, want = self.expected_from_capture(inputs, 0x1600, 0x3101)
        self.assertEqual(got, want)

    def test_spead2_recv_verifies_every_payload_byte(self):
        heaps = 20
        # three items per heap: timestamp, substream, samples
        inputs = verify_pattern(2, heaps, 3)
        got, out, err = self.live(inputs, 0x0F00, 0x0F01, ["--verify"])
        self.check_data(got, heaps, 0x0F00, 0x0F01)
        self.assertNotIn("Verification mismatch", err)

    def test_spead2_recv_reads_the_sinks_capture(self):
        heaps = 8
        inputs = [np.arange(1, heaps * HEAP_ITEMS + 1, dtype=np.int32) + 10_000_000 * s
                  for s in range(2)]
        path, want = self.expected_from_capture(inputs, 0x1600, 0x3101)
        # spead2 replays every packet of the file into one stream, which ends at the
        # first stop heap: the sink sends its stop heaps after all the data
        out, _ = self.finish(self.spead2_recv([path]))
        got = heap_blocks(out)
        self.assertEqual(sorted(got), sorted(want))
        for cnt, lines in got.items():
            self.assertEqual(lines, want[cnt], f"heap {cnt}")

if __name__ == "__main__":
    if SPEAD2_RECV is None:
        print("skipped: spead2_recv not found (set SPEAD2_BIN_DIR or put it on PATH)")
        sys.exit(SKIP)
    if spead is None:
        print("skipped: gnuradio.spead cannot be imported (set PYTHONPATH)")
        sys.exit(SKIP)
    print(f"using {SPEAD2_RECV}")
    unittest.main()
