#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""spead2_layout.py speaks spead2's dialect: its sender rebuilds every reference
capture in tests/vectors (made by spead2 4.4.1) byte for byte, and its receiver prints
every capture exactly as spead2_recv did (the .spead2_recv.txt files). The continuous
interop tests (tests/python/qa_interop_*.py) rely on both halves."""

import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import spead2_layout as s2  # noqa: E402

VECTORS = os.environ.get("GR_SPEAD_VECTORS_DIR", os.path.join(HERE, "..", "vectors"))

# name: (heap address bits, packet size, items per heap, uint32 words per item,
#        data heaps, destination ports); see tests/vectors/README.md
RECIPES = {
    "spead64-40_small_desc_stop": (40, 1472, 1, 256, 3, [7150]),
    "spead64-48_small_desc_stop": (48, 1472, 1, 256, 3, [7148]),
    "spead64-40_multipacket_1472": (40, 1472, 2, 2048, 3, [7152]),
    "spead64-48_multipacket_8972": (48, 8972, 4, 4096, 2, [7154]),
    "spead64-40_immediate": (40, 1472, 2, 1, 3, [7156]),
    "spead64-48_immediate": (48, 1472, 2, 1, 3, [7158]),
    "spead64-40_two_substreams": (40, 1472, 1, 1024, 4, [7162, 7163]),
}


def rebuild(bits, mps, items, words, heaps, ports):
    """The sender's sequence, from the README: cnt 1, 2, ... over all destinations,
    descriptors in the first heap to each destination, minstd_rand words as values,
    then one stop heap per destination."""
    f = s2.Flavour(bits)
    rand = s2.MinstdRand()
    out = []
    cnt = 1
    described = set()
    for i in range(heaps):
        dest = i % len(ports)
        h = s2.Heap(f)
        if dest not in described:
            for k in range(items):
                h.add_descriptor(0x1000 + k, f"Test item {k}",
                                 "A test item with arbitrary value",
                                 numpy_header=s2.numpy_header(">u4", (words,)))
            described.add(dest)
        for k in range(items):
            h.add_item(0x1000 + k, b"".join(rand().to_bytes(4, "big")
                                            for _ in range(words)))
        out += [(ports[dest], p) for p in h.packets(cnt, mps)]
        cnt += 1
    for dest in range(len(ports)):
        h = s2.Heap(f)
        h.add_end()
        out += [(ports[dest], p) for p in h.packets(cnt, mps)]
        cnt += 1
    return out


def first_difference(got, want):
    for i, (a, b) in enumerate(zip(got, want)):
        if a != b:
            return f"byte {i}: captured {a:#04x}, generated {b:#04x}"
    return "" if len(got) == len(want) else f"captured {len(got)}, generated {len(want)} bytes"


def repeating_heap(timestamp, blocks_of_256):
    """(flavour, heap) of a 64-48 heap: a timestamp immediate (0x1600) and blocks_of_256
    x 256 bytes (0x1000), its item pointers repeated in every packet."""
    f = s2.Flavour(48)
    h = s2.Heap(f)
    h.add_item(0x1600, timestamp.to_bytes(6, "big"))
    h.add_item(0x1000, bytes(range(256)) * blocks_of_256)
    h.repeat_pointers = True
    return f, h


class test_layout(unittest.TestCase):

    def test_generator_rebuilds_every_spead2_capture_byte_for_byte(self):
        for name, recipe in RECIPES.items():
            with self.subTest(capture=name):
                captured = s2.read_pcap(os.path.join(VECTORS, name + ".pcap"))
                generated = rebuild(*recipe)
                self.assertEqual(len(captured), len(generated))
                for i, ((cport, cdata), (gport, gdata)) in enumerate(
                        zip(captured, generated)):
                    self.assertEqual(cport, gport, f"packet {i}")
                    self.assertEqual(first_difference(cdata, gdata), "", f"packet {i}")

    def test_receiver_prints_every_capture_as_spead2_recv_did(self):
        for name in RECIPES:
            with self.subTest(capture=name):
                rx = s2.Receiver()
                for _, data in s2.read_pcap(os.path.join(VECTORS, name + ".pcap")):
                    rx.add(data)
                with open(os.path.join(VECTORS, name + ".spead2_recv.txt")) as f:
                    want = s2.spead2_recv_heap_text(f.read())
                self.assertEqual(s2.render_like_spead2_recv(rx.heaps), want)
                self.assertEqual(rx.rejected, 0)

    def test_repeat_pointers_puts_every_pointer_in_every_packet(self):
        # spead2 restarts the pointer list (addresses from 0) in each packet.
        f, h = repeating_heap(123456789, 10)
        packets = h.packets(7, 1472)
        self.assertEqual(len(packets), 2)
        for p in packets:
            parsed = s2.parse_packet(p)
            self.assertEqual(parsed[5], [f.immediate(0x1600, 123456789),
                                         f.address(0x1000, 0)])
        self.assertEqual(len(packets[0]), 1472)
        self.assertEqual(len(packets[1]), 8 + 6 * 8 + 2560 - (1472 - 56))

    def test_receiver_takes_packets_in_any_order_and_each_pointer_once(self):
        f, h = repeating_heap(42, 20)
        rx = s2.Receiver()
        for p in reversed(h.packets(3, 1472)):
            rx.add(p)
        self.assertEqual(len(rx.heaps), 1)
        heap = rx.heaps[0]
        self.assertEqual([(it.id, it.immediate) for it in heap.items],
                         [(0x1000, False), (0x1600, True)])
        self.assertEqual(heap.item(0x1600).immediate_value, 42)
        self.assertEqual(heap.item(0x1000).value, bytes(range(256)) * 20)

    def test_format_descriptor_of_a_48_bit_timestamp(self):
        # As spead2's Python sender describes add_item(shape=(), format=[("u", 48)]).
        f = s2.Flavour(48)
        raw = s2.encode_descriptor(f, 0x1600, "timestamp", "ADC sample count",
                                   format=[("u", 48)])
        d = s2.decode_descriptor(raw)
        self.assertEqual(d["id"], 0x1600)
        self.assertEqual(d["format"], [("u", 48)])
        self.assertEqual(d["shape"], [])
        # 9 - 6 = 3 bytes per format field: code, then the width in 2 bytes.
        self.assertTrue(raw.endswith(b"timestampADC sample countu\x00\x30"))

    def test_minstd_discard_matches_stepping(self):
        g = s2.MinstdRand()
        words = [g() for _ in range(1000)]
        self.assertEqual(s2.minstd_words(700, 300), words[700:])


if __name__ == "__main__":
    unittest.main()
