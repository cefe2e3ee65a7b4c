#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""A spead2 sender feeding spead.source(output_mode="continuous"), without spead2: the
heaps come from tests/interop/spead2_layout.py, whose sender rebuilds spead2's own
captures byte for byte (tests/interop/test_layout.py). They are what a spead2
user sends for a time series (docs/continuous.md, spead2 senders): descriptors in a
heap of their own (numpy-header descriptor for the samples, format descriptors for the
48-bit timestamp and the substream index, as spead2's Python ItemGroup makes them),
data heaps with the timestamp and substream as immediates, a stop heap per endpoint.

The heaps cross loopback UDP with whole heaps left out and heaps and packets reordered
(within the receive window); every output sample, tag and counter is then checked."""

import random
import socket
import time

import numpy as np
from gnuradio import blocks, gr_unittest

import spead_qa_support as qa

s2 = qa.spead2_layout()

TIMESTAMP_ITEM = 0x1600
SUBSTREAM_ITEM = 0x3101
PAYLOAD_ITEM = 0x1000
HEAP_ITEMS = 1024          # int32: 4096-byte heaps, three packets at 1472 bytes
START = 5_000_000_000_000  # does not fit 40 bits: a 64-48 timestamp
SAMPLE_RATE = 1e6
# Wider than the whole exchange (48 positions), so that one port's reader thread running
# ahead of the other's on a busy machine cannot force the other's heaps out early
# (thread skew beyond the window is a resync, docs/continuous.md; not what this tests).
WINDOW = 64                # chunks of WINDOW / 4 positions


def samples(substream, position):
    """Never zero, different for every sample of every heap."""
    first = 1 + (substream * 1000 + position) * HEAP_ITEMS
    return np.arange(first, first + HEAP_ITEMS, dtype="<i4")


def descriptor_heap(f):
    h = s2.Heap(f)
    h.add_descriptor(PAYLOAD_ITEM, "samples", "ADC samples",
                     shape=(HEAP_ITEMS,),
                     numpy_header="{'descr': '<i4', 'fortran_order': False, "
                                  f"'shape': ({HEAP_ITEMS},)}}")
    h.add_descriptor(TIMESTAMP_ITEM, "timestamp", "ADC sample count",
                     format=[("u", 48)])
    h.add_descriptor(SUBSTREAM_ITEM, "polarisation", "0 = h, 1 = v",
                     format=[("u", 48)])
    return h


def data_heap(f, substream, position, repeat_pointers):
    # The order of ItemGroup.add_item: samples, timestamp, substream.
    h = s2.Heap(f)
    h.add_item(PAYLOAD_ITEM, samples(substream, position).tobytes())
    h.add_item(TIMESTAMP_ITEM, (START + position * HEAP_ITEMS).to_bytes(6, "big"))
    h.add_item(SUBSTREAM_ITEM, substream.to_bytes(6, "big"))
    h.repeat_pointers = repeat_pointers
    return h


class qa_interop_spead2_continuous(qa.FlowgraphTestCase):

    def exchange(self, positions, missing, reorder, repeat_pointers, seed):
        """Sends `positions` heaps per substream (two substreams, one port each), less
        `missing` {(substream, position)}; with `reorder`, heaps are shuffled within
        3 positions and packets of neighbouring heaps interleaved. Returns the source
        block and its two outputs' sinks."""
        f = s2.Flavour(48)
        rx, ports = self.make_source()
        outs = [blocks.vector_sink_i(), blocks.vector_sink_i()]
        for s in range(2):
            self.tb.connect((rx, s), outs[s])

        rng = random.Random(seed)
        cnt = 1
        # (port, payload) in sending order
        datagrams = []
        for s in range(2):
            datagrams += [(ports[s], p) for p in descriptor_heap(f).packets(cnt, 1472)]
            cnt += 1
        streams = {0: [], 1: []}
        for position in range(positions):
            for s in range(2):
                heap = data_heap(f, s, position, repeat_pointers)
                packets = heap.packets(cnt, 1472)
                cnt += 1
                if (s, position) not in missing:
                    streams[s].append((position, packets))
        for s in range(2):
            heaps = streams[s]
            if reorder:
                # The first and last heap stay in place: the output starts at the
                # first data heap met and ends at the last one received. A packet
                # of position 0 still comes first, so position 0 is met first.
                middle = heaps[1:-1]
                keyed = sorted(middle, key=lambda h: h[0] + rng.uniform(0, 3))
                heaps = [heaps[0]] + keyed + [heaps[-1]]
                packets = []
                pending = []
                for _, ps in heaps:
                    pending += ps
                    # interleave: hold back one packet of each heap for the next one
                    rng.shuffle(pending)
                    packets += pending[:-2]
                    pending = pending[-2:]
                packets += pending
                # the reordering must be real: some packet overtakes an earlier heap's
                timestamps = [s2.Receiver.timestamp_of(p, TIMESTAMP_ITEM) for p in packets]
                self.assertTrue(any(a > b for a, b in zip(timestamps, timestamps[1:])),
                                "no packet was reordered")
            else:
                packets = [p for _, ps in heaps for p in ps]
            streams[s] = packets
        merged = []
        a, b = streams[0], streams[1]
        for i in range(max(len(a), len(b))):
            if i < len(a):
                merged.append((ports[0], a[i]))
            if i < len(b):
                merged.append((ports[1], b[i]))
        datagrams += merged
        for s in range(2):
            stop = s2.Heap(f)
            stop.add_end()
            datagrams += [(ports[s], p) for p in stop.packets(cnt, 1472)]
            cnt += 1

        self.tb.start()
        sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            for i, (port, payload) in enumerate(datagrams):
                sender.sendto(payload, ("127.0.0.1", port))
                if i % 32 == 31:
                    time.sleep(0.002)  # stay far below any socket buffer
        finally:
            sender.close()
        qa.wait_to_end(self.tb, 30, "the source (at the stop heaps)")
        return rx, outs

    def make_source(self):
        return qa.make_source_on_free_ports(
            2, item_type="int32", timestamp_item=TIMESTAMP_ITEM, sample_rate=SAMPLE_RATE,
            output_mode="continuous", window_heaps=WINDOW, substreams=2,
            substream_item=SUBSTREAM_ITEM)

    def check(self, rx, outs, positions, missing):
        stats = rx.stats()
        self.assertEqual((stats["packets_dropped_socket_overflow"],
                          stats["runs_dropped_socket_overflow"]), (0, 0),
                         "the kernel dropped datagrams: the comparison below is void")
        for s in range(2):
            with self.subTest(output=s):
                got = np.asarray(outs[s].data(), dtype=np.int32)
                self.assertEqual(len(got), positions * HEAP_ITEMS)
                expected = np.concatenate(
                    [np.zeros(HEAP_ITEMS, np.int32) if (s, p) in missing
                     else samples(s, p).astype(np.int32) for p in range(positions)])
                wrong = np.flatnonzero(got != expected)
                self.assertEqual(wrong.size, 0,
                                 f"{wrong.size} samples differ, first at {wrong[:1]}")
                tags = qa.sorted_tags(outs[s])
                secs = START / SAMPLE_RATE
                want = [(0, "rx_time", (int(secs), secs - int(secs)))]
                want += qa.heap_missing_tags({p for sub, p in missing if sub == s},
                                             HEAP_ITEMS, 4 * HEAP_ITEMS, WINDOW)
                self.assertEqual(tags, sorted(want))
        self.assertEqual(stats["heaps"], 2 * positions - len(missing))
        self.assertEqual(stats["heaps_missing"], len(missing))
        self.assertEqual(stats["control_heaps"], 2)
        self.assertEqual(stats["positions_released"], positions)
        for counter in ("heaps_late", "heaps_misaligned", "heaps_duplicate_position",
                        "heaps_bad_substream", "heaps_wrong_size",
                        "incomplete_heaps_evicted", "incomplete_heaps_flushed",
                        "timestamp_resyncs"):
            self.assertEqual(stats[counter], 0, counter)

    def test_spead2_default_layout_in_order_with_gaps(self):
        # spead2's defaults: item pointers only in a heap's first packet.
        missing = {(0, 5), (0, 6), (1, 9), (1, 30)}
        rx, outs = self.exchange(40, missing, reorder=False, repeat_pointers=False,
                                 seed=1)
        self.check(rx, outs, 40, missing)

    def test_spead2_repeat_pointers_reordered_with_gaps(self):
        # heap.repeat_pointers = True: every packet can place itself, in any order.
        missing = {(0, 3), (0, 17), (0, 18), (0, 19), (1, 11), (1, 25)}
        rx, outs = self.exchange(48, missing, reorder=True, repeat_pointers=True,
                                 seed=7)
        self.check(rx, outs, 48, missing)


if __name__ == "__main__":
    gr_unittest.run(qa_interop_spead2_continuous)
