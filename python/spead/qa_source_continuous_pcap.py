#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""spead.source output_mode=continuous replaying a capture with known gaps, an
incomplete heap, a misaligned heap and a sender restart: every position is output at
its place, the gaps are zeros tagged heap_missing, and the counters reconcile."""

import os
import struct

import numpy as np
import pmt
from gnuradio import blocks, gr_unittest

import spead_qa_support as qa
from spead_qa_support import spead

TIMESTAMP = 0x1600
ITEMS = 32                  # int16 items per heap: 64-byte heaps in two packets
RATE = 1000.0               # timestamp counts per second, for rx_time


def udp_frame(payload, port=7148):
    """An Ethernet + IPv4 + UDP frame to 127.0.0.1:port carrying payload."""
    udp = struct.pack(">HHHH", 40000, port, 8 + len(payload), 0) + payload
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0x4000, 64, 17, 0,
                     bytes([127, 0, 0, 1]), bytes([127, 0, 0, 1]))
    return b"\x00" * 12 + b"\x08\x00" + ip + udp


def write_pcap(path, payloads):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i, p in enumerate(payloads):
            frame = udp_frame(p)
            f.write(struct.pack("<IIII", i, 0, len(frame), len(frame)))
            f.write(frame)


def samples(k):
    """The 32 samples of the heap at position k."""
    return (np.arange(ITEMS, dtype=np.int16) + 100 * k).astype(np.int16)


def heap_packets(cnt, timestamp, k, keep=(0, 1)):
    data = samples(k).tobytes()
    out = []
    for i in keep:
        half = data[32 * i:32 * (i + 1)]
        out.append(qa.spead_packet(cnt, half, heap_size=64, offset=32 * i,
                                   items=[(TIMESTAMP, timestamp, True)]))
    return out


class qa_source_continuous_pcap(qa.FlowgraphAndTempDirTestCase):

    def replay(self, payloads, **kwargs):
        path = os.path.join(self.dir.name, "capture.pcap")
        write_pcap(path, payloads)
        src = spead.source(transport="pcap", capture_file=path, endpoints="",
                           item_type="int16", output_mode="continuous",
                           timestamp_item=TIMESTAMP, sample_rate=RATE,
                           window_heaps=4, **kwargs)
        sink = blocks.vector_sink_s()
        self.tb.connect(src, sink)
        qa.run_to_completion(self.tb)
        return src, np.asarray(sink.data(), dtype=np.int16), sink.tags()

    def test_gaps_are_zeros_at_their_place_and_tagged(self):
        payloads = []
        lost = {3, 7, 8}
        for k in range(20):
            if k in lost:
                continue
            keep = (0,) if k == 12 else (0, 1)     # heap 12 loses its second half
            payloads += heap_packets(k + 1, 5000 + k * ITEMS, k, keep)
        payloads += heap_packets(99, 5000 + 3 * ITEMS + 1, 3)   # off the grid
        src, out, tags = self.replay(payloads)
        self.assertEqual(len(out), 20 * ITEMS)
        for k in range(20):
            got = out[k * ITEMS:(k + 1) * ITEMS]
            if k in lost or k == 12:
                np.testing.assert_array_equal(got, np.zeros(ITEMS, np.int16), str(k))
            else:
                np.testing.assert_array_equal(got, samples(k), str(k))
        missing = sorted((t.offset, pmt.to_python(t.value)) for t in tags
                         if pmt.symbol_to_string(t.key) == "heap_missing")
        # A window of 4 gives chunks of one position: the run of heaps 7 and 8 spans
        # two chunks and is tagged in each (docs/continuous.md); the values add up.
        self.assertEqual(missing, [(3 * ITEMS, ITEMS), (7 * ITEMS, ITEMS),
                                   (8 * ITEMS, ITEMS), (12 * ITEMS, ITEMS)])
        rx = [(t.offset, pmt.to_python(t.value)) for t in tags
              if pmt.symbol_to_string(t.key) == "rx_time"]
        self.assertEqual(rx, [(0, (5, 0.0))])
        s = src.stats()
        self.assertEqual(s["heaps"], 16)
        self.assertEqual(s["incomplete_heaps_flushed"] + s["incomplete_heaps_evicted"], 1)
        self.assertEqual(s["heaps_missing"], 4)
        self.assertEqual(s["heaps_misaligned"], 1)
        self.assertEqual(s["items_zero_filled"], 4 * ITEMS)
        self.assertEqual(s["positions_released"], 20)
        self.assertEqual(s["heaps"] + s["heaps_missing"], s["positions_released"])
        # every packet in one counter
        self.assertEqual(s["packets"] + s["packets_refused_heap"], len(payloads))

    def test_a_sender_restart_resynchronises_and_tags_rx_time_again(self):
        payloads = []
        for k in range(6):
            payloads += heap_packets(k + 1, 10**6 + k * ITEMS, k)
        for k in range(6, 10):   # restarted: the counter and the cnts begin again
            payloads += heap_packets(k - 5, (k - 6) * ITEMS, k)
        src, out, tags = self.replay(payloads)
        self.assertEqual(len(out), 10 * ITEMS)
        for k in range(10):
            np.testing.assert_array_equal(out[k * ITEMS:(k + 1) * ITEMS], samples(k))
        rx = [(t.offset, pmt.to_python(t.value)) for t in tags
              if pmt.symbol_to_string(t.key) == "rx_time"]
        self.assertEqual(rx, [(0, (1000, 0.0)), (6 * ITEMS, (0, 0.0))])
        self.assertEqual(src.stats()["timestamp_resyncs"], 1)

    def test_two_substreams_come_out_on_two_outputs(self):
        payloads = []
        for k in range(8):
            for s in (0, 1):
                if (k, s) == (5, 1):
                    continue
                data = (samples(k) + 50 * s).astype(np.int16).tobytes()
                payloads.append(qa.spead_packet(
                    2 * k + s + 1, data, items=[(TIMESTAMP, k * ITEMS, True),
                                                (0x1601, s, True)]))
        path = os.path.join(self.dir.name, "two.pcap")
        write_pcap(path, payloads)
        src = spead.source(transport="pcap", capture_file=path, endpoints="",
                           item_type="int16", output_mode="continuous",
                           timestamp_item=TIMESTAMP, substreams=2,
                           substream_item=0x1601)
        sinks = [blocks.vector_sink_s(), blocks.vector_sink_s()]
        for i, s in enumerate(sinks):
            self.tb.connect((src, i), s)
        qa.run_to_completion(self.tb)
        a = np.asarray(sinks[0].data(), np.int16)
        b = np.asarray(sinks[1].data(), np.int16)
        self.assertEqual(len(a), 8 * ITEMS)
        self.assertEqual(len(b), 8 * ITEMS)
        for k in range(8):
            np.testing.assert_array_equal(a[k * ITEMS:(k + 1) * ITEMS], samples(k))
            want = np.zeros(ITEMS, np.int16) if k == 5 else samples(k) + 50
            np.testing.assert_array_equal(b[k * ITEMS:(k + 1) * ITEMS], want)
        self.assertEqual([(t.offset, pmt.to_python(t.value)) for t in sinks[1].tags()
                          if pmt.symbol_to_string(t.key) == "heap_missing"],
                         [(5 * ITEMS, ITEMS)])
        self.assertEqual([t for t in sinks[0].tags()
                          if pmt.symbol_to_string(t.key) == "heap_missing"], [])


if __name__ == "__main__":
    gr_unittest.run(qa_source_continuous_pcap)
