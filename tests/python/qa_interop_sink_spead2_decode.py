#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""What spead2's receiver makes of spead.sink(input_mode="continuous").

Without spead2 (class qa_interop_sink_spead2_decode, ctest qa_interop_sink_spead2_decode,
label qa): the sink records to a capture, and tests/interop/spead2_layout.py decodes it
the way spead2 does (its receiver reproduces spead2_recv's printout of every reference
capture in tests/vectors, see tests/interop/test_layout.py). Every heap must
decode, complete, with the timestamp and substream as immediates of the flavour's
width, the samples as the one addressed item, and descriptors spead2 can read.

With the real spead2_recv (class spead2_recv_continuous, run by `--spead2-recv`: ctest
interop_test_spead2_recv_continuous, label interop), when one is installed
(SPEAD2_BIN_DIR, else PATH); exits 77 (ctest: skipped) when there is none:
1. Two substreams over UDP on 127.0.0.1 into `spead2_recv --descriptors`: spead2 must
   print every heap, complete, with its timestamp and substream immediates, the
   4096-byte samples and the descriptors; its printout must equal, heap by heap, what
   spead2_layout.py prints for a capture of the same flowgraph.
2. The same with the samples in spead2's --verify pattern (big-endian minstd_rand
   words, continued heap by heap by cnt) and the timestamp and substream below 0x1000
   (spead2_recv verifies every item from 0x1000 up): spead2 checks every payload byte.
3. spead2_recv reading the sink's capture file (a pcap source) prints the same."""

import os
import shutil
import signal
import subprocess
import sys
import time
import unittest

import numpy as np
from gnuradio import blocks, gr

import spead_qa_support as qa
from spead_qa_support import spead

s2 = qa.spead2_layout()

SKIP = 77
HEAP_ITEMS = 1024
TIMESTAMP_ITEM = 0x1600
SUBSTREAM_ITEM = 0x3101
START = 5_000_000_000_000


def sink_inputs(substreams, heaps):
    return [np.arange(1, heaps * HEAP_ITEMS + 1, dtype=np.int32) + 10_000_000 * s
            for s in range(substreams)]


def run_sink(tb, inputs, timestamp_item=TIMESTAMP_ITEM, substream_item=None, **kwargs):
    """Runs vector sources -> spead.sink (continuous, 64-48) to the end; the substream
    item is SUBSTREAM_ITEM when there are several inputs, unless given."""
    if substream_item is None:
        substream_item = SUBSTREAM_ITEM if len(inputs) > 1 else 0
    tx = spead.sink(item_type="int32", max_packet_size=1472, heap_items=HEAP_ITEMS,
                    flavour="64-48", input_mode="continuous",
                    timestamp_item=timestamp_item, start_timestamp=START,
                    substreams=len(inputs), substream_item=substream_item, **kwargs)
    for s, data in enumerate(inputs):
        tb.connect(blocks.vector_source_i(data.tolist(), False), (tx, s))
    qa.run_to_completion(tb, timeout=60)
    return tx


class qa_interop_sink_spead2_decode(qa.FlowgraphAndTempDirTestCase):

    def decode(self, path):
        """Heaps per destination port, as spead2 would deliver them (one stream per
        port, each ending at its stop heap)."""
        streams = {}
        for port, data in s2.read_pcap(path):
            streams.setdefault(port, s2.Receiver()).add(data)
        for port, rx in streams.items():
            self.assertEqual(rx.rejected, 0, f"port {port}: packets spead2 rejects")
            self.assertTrue(rx.stopped, f"port {port}: no stop heap")
            self.assertEqual(rx.live, {}, f"port {port}: incomplete heaps")
        return streams

    def check_data_heaps(self, streams, inputs, heaps):
        substreams = len(inputs)
        ports = sorted(streams)
        seen = 0
        for i, port in enumerate(ports):
            data = [h for h in streams[port].heaps if h.item(TIMESTAMP_ITEM)]
            self.assertEqual(len(data), heaps)
            for k, h in enumerate(data):
                # round k sends input 0 first: cnts 1, 2, ... round by round
                self.assertEqual(h.cnt, 1 + k * substreams + i)
                ts = h.item(TIMESTAMP_ITEM)
                self.assertTrue(ts.immediate)
                self.assertEqual(len(ts.value), 6)  # 64-48: 6-byte immediates
                self.assertEqual(ts.immediate_value, START + k * HEAP_ITEMS)
                if substreams > 1:
                    self.assertEqual(h.item(SUBSTREAM_ITEM).immediate_value, i)
                addressed = [it for it in h.items if not it.immediate]
                self.assertEqual([it.id for it in addressed], [0x1000])
                self.assertEqual(
                    addressed[0].value,
                    inputs[i][k * HEAP_ITEMS:(k + 1) * HEAP_ITEMS].tobytes())
                seen += 1
        self.assertEqual(seen, heaps * substreams)

    def test_two_substreams_decode_as_spead2_decodes_them(self):
        path = os.path.join(self.dir.name, "sink.pcap")
        inputs = sink_inputs(2, 12)
        tx = run_sink(self.tb, inputs, transport="pcap", capture_file=path,
                      endpoints="127.0.0.1:7148,127.0.0.1:7149")
        streams = self.decode(path)
        self.assertEqual(sorted(streams), [7148, 7149])
        self.check_data_heaps(streams, inputs, 12)
        self.assertEqual(tx.stats()["data_heaps"], 24)

        # descriptors: a heap of their own per port, before the data, readable by spead2
        for port, rx in streams.items():
            first = rx.heaps[0]
            self.assertIsNone(first.item(TIMESTAMP_ITEM))
            descriptors = {d["id"]: d for d in first.descriptors()}
            self.assertEqual(sorted(descriptors),
                             sorted([0x1000, TIMESTAMP_ITEM, SUBSTREAM_ITEM]))
            self.assertIn(b"'shape': (1024,)", descriptors[0x1000]["numpy_header"])
            self.assertIn(b"i4", descriptors[0x1000]["numpy_header"])

    def test_spead2_printout_of_a_single_substream(self):
        # What spead2_recv --descriptors would print, line for line, for the data heaps.
        path = os.path.join(self.dir.name, "sink.pcap")
        inputs = sink_inputs(1, 3)
        run_sink(self.tb, inputs, transport="pcap", capture_file=path,
                 endpoints="127.0.0.1:7148")
        (rx,) = self.decode(path).values()
        text = s2.render_like_spead2_recv([h for h in rx.heaps
                                           if h.item(TIMESTAMP_ITEM)])
        want = "".join(f"Received heap {k + 1}\n"
                       "0x1000 = [4096 bytes]\n"
                       f"0x1600 = [6 bytes] = {START + k * HEAP_ITEMS:#x}\n"
                       for k in range(3)) + "Received 3 heaps\n"
        self.assertEqual(text, want)


# ---- the real spead2_recv ------------------------------------------------------------

def find_spead2_recv():
    bin_dir = os.environ.get("SPEAD2_BIN_DIR")
    if bin_dir:
        path = os.path.join(bin_dir, "spead2_recv")
        return path if os.access(path, os.X_OK) else None
    return shutil.which("spead2_recv")


SPEAD2_RECV = find_spead2_recv()


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


class spead2_recv_continuous(qa.FlowgraphAndTempDirTestCase):

    def spead2_recv(self, sources, extra=()):
        proc = subprocess.Popen([SPEAD2_RECV, "--descriptors", *extra, *sources],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        self.addCleanup(qa.kill, proc)
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
        run_sink(gr.top_block(), inputs, timestamp_item, substream_item, rate_gbps=0.2,
                 transport="pcap", capture_file=path,
                 endpoints="127.0.0.1:7148,127.0.0.1:7149")
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
            ports = [qa.free_udp_port(), qa.free_udp_port()]
            if ports[0] == ports[1]:
                continue
            proc = self.spead2_recv([f"127.0.0.1:{p}" for p in ports], extra)
            time.sleep(0.5)  # let it bind
            if proc.poll() is None:
                break
        else:
            self.fail("spead2_recv could not bind two free ports")
        run_sink(gr.top_block(), inputs, timestamp_item, substream_item, rate_gbps=0.2,
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
        inputs = sink_inputs(2, heaps)
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
        inputs = sink_inputs(2, 8)
        path, want = self.expected_from_capture(inputs, 0x1600, 0x3101)
        # spead2 replays every packet of the file into one stream, which ends at the
        # first stop heap: the sink sends its stop heaps after all the data
        out, _ = self.finish(self.spead2_recv([path]))
        got = heap_blocks(out)
        self.assertEqual(sorted(got), sorted(want))
        for cnt, lines in got.items():
            self.assertEqual(lines, want[cnt], f"heap {cnt}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--spead2-recv"]:
        if SPEAD2_RECV is None:
            print("skipped: spead2_recv not found (set SPEAD2_BIN_DIR or put it on PATH)")
            sys.exit(SKIP)
        print(f"using {SPEAD2_RECV}")
        unittest.main(argv=[sys.argv[0], "-v", "spead2_recv_continuous"] + sys.argv[2:])
    else:
        unittest.main(argv=[sys.argv[0], "qa_interop_sink_spead2_decode"] + sys.argv[1:])
