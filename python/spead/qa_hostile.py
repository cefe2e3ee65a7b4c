#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""spead.source under hostile input: every bad datagram is counted in its class, the
good heaps still come through, and the block keeps working."""

import random
import struct

import numpy as np
from gnuradio import blocks, gr_unittest

import spead_qa_support as qa

WORDS = 16  # int32 items per crafted heap


def good_heap(cnt, address_bits=40):
    """A one-packet heap whose item 0x1000 holds WORDS int32 values cnt*100 + i."""
    payload = (np.arange(WORDS, dtype=np.int32) + cnt * 100).tobytes()
    return qa.spead_packet(cnt, payload, items=[(0x1000, 0, False)],
                           address_bits=address_bits)


def missing_heap_offset(cnt):
    """HEAP_CNT and PAYLOAD_LENGTH but no HEAP_OFFSET."""
    return (struct.pack(">BBBBHH", 0x53, 4, 3, 5, 0, 2)
            + struct.pack(">Q", qa.item_pointer(0x01, cnt))
            + struct.pack(">Q", qa.item_pointer(0x04, 0)))


def expected_words(cnts):
    return np.concatenate([np.arange(WORDS, dtype=np.int32) + c * 100 for c in cnts])


class qa_hostile(qa.FlowgraphTestCase):

    def setUp(self):
        super().setUp()
        self.rng = random.Random(99)

    def start_source(self, **kwargs):
        kwargs.setdefault("byte_order", "as-is")
        kwargs.setdefault("queue_heaps", 1024)  # bursts of tiny heaps: lose none
        rx, port = qa.make_source(item_type="int32", stop_on_stop_heap=False, **kwargs)
        out = blocks.vector_sink_i()
        self.tb.connect(rx, out)
        self.tb.start()
        return rx, port, out

    def junk(self, n):
        """Random datagrams that do not start with SPEAD's magic."""
        out = []
        for _ in range(n):
            d = bytearray(self.rng.randbytes(self.rng.randrange(8, 1400)))
            d[0] = self.rng.choice([b for b in range(256) if b != 0x53])
            out.append(bytes(d))
        return out

    def test_mixed_garbage_is_counted_by_class_and_good_heaps_survive(self):
        rx, port, out = self.start_source(max_packet_size=1500)
        classes = {
            "packets_bad_header": self.junk(40) + [
                b"\x53\x03\x03\x05\x00\x00\x00\x04" + bytes(40),  # version 3
                b"\x53\x04\x02\x05\x00\x00\x00\x04" + bytes(40),  # widths 2 + 5
            ],
            # port-scan noise: empty and tiny datagrams, then cut-off packets
            "packets_truncated": [b"", b"\x00", b"S", b"\x53\x04\x03"] + [
                good_heap(1000 + i)[:self.rng.randrange(9, 40 + 4 * WORDS)]
                for i in range(30)],
            "packets_size_mismatch": [good_heap(2000 + i) + b"\x00" * (1 + i)
                                      for i in range(10)],
            "packets_bad_specials": [
                missing_heap_offset(3000),
                qa.spead_packet(3001, bytes(8), items=[(0x01, 3001, False)]),  # 2 cnts
            ],
            "datagrams_oversize": [good_heap(4000) + bytes(2000)],
        }
        cnts = list(range(1, 61))
        datagrams = [good_heap(c) for c in cnts]
        for bad in classes.values():
            datagrams += bad
        self.rng.shuffle(datagrams)
        good = {good_heap(c): c for c in cnts}
        order = [good[d] for d in datagrams if d in good]  # as sent
        qa.send_datagrams(port, datagrams)
        total_good = len(cnts)
        self.assertTrue(qa.wait_for(lambda: len(out.data()) >= total_good * WORDS))

        # still working afterwards
        qa.send_datagrams(port, [good_heap(c) for c in (61, 62)])
        self.assertTrue(qa.wait_for(lambda: len(out.data()) >= (total_good + 2) * WORDS))
        qa.stop_and_wait(self.tb)

        np.testing.assert_array_equal(np.asarray(out.data(), dtype=np.int32),
                                      expected_words(order + [61, 62]))
        stats = rx.stats()
        for name, bad in classes.items():
            self.assertEqual(stats[name], len(bad), name)
        self.assertEqual(stats["heaps"], total_good + 2)
        sent = len(datagrams) + 2
        accounted = (stats["packets"] + stats["packets_truncated"]
                     + stats["packets_size_mismatch"] + stats["packets_bad_header"]
                     + stats["packets_bad_specials"] + stats["packets_bad_offset"]
                     + stats["packets_after_stop"] + stats["datagrams_oversize"]
                     + stats["packets_dropped_socket_overflow"]
                     # each datagram went alone: a dropped run is one datagram
                     + stats["runs_dropped_socket_overflow"])
        self.assertEqual(accounted, sent)

    def test_wrong_flavour_inside_a_heap_is_rejected(self):
        rx, port, out = self.start_source()
        payload = (np.arange(2 * WORDS, dtype=np.int32) + 500).tobytes()
        half = len(payload) // 2
        first = qa.spead_packet(5, payload[:half], heap_size=len(payload),
                                items=[(0x1000, 0, False)])
        second_48 = qa.spead_packet(5, payload[half:], heap_size=len(payload),
                                    offset=half, address_bits=48)
        second_40 = qa.spead_packet(5, payload[half:], heap_size=len(payload),
                                    offset=half)
        qa.send_datagrams(port, [first, second_48, second_40, good_heap(6, 48)])
        self.assertTrue(qa.wait_for(lambda: len(out.data()) >= 3 * WORDS))
        qa.stop_and_wait(self.tb)
        np.testing.assert_array_equal(
            np.asarray(out.data(), dtype=np.int32),
            np.concatenate([np.arange(2 * WORDS, dtype=np.int32) + 500,
                            expected_words([6])]))
        self.assertEqual(rx.stats()["packets_flavour_mismatch"], 1)
        self.assertEqual(rx.stats()["heaps"], 2)

    def test_duplicates_and_late_packets_are_counted(self):
        rx, port, out = self.start_source(max_heaps=1)
        payload = bytes(8 * WORDS)
        partial = qa.spead_packet(7, payload[:64], heap_size=len(payload),
                                  items=[(0x1000, 0, False)])
        rest = qa.spead_packet(7, payload[64:], heap_size=len(payload), offset=64)
        qa.send_datagrams(port, [good_heap(1), good_heap(1), partial, good_heap(8), rest])
        self.assertTrue(qa.wait_for(lambda: len(out.data()) >= 2 * WORDS))
        qa.send_datagrams(port, [good_heap(9)])
        self.assertTrue(qa.wait_for(lambda: len(out.data()) >= 3 * WORDS))
        qa.stop_and_wait(self.tb)
        stats = rx.stats()
        self.assertEqual(stats["packets_duplicate"], 1)
        self.assertEqual(stats["incomplete_heaps_evicted"], 1)
        self.assertEqual(stats["packets_late"], 1)
        self.assertEqual(stats["heaps_output"], 3)

    def test_incomplete_heaps_are_delivered_zero_filled_and_tagged(self):
        rx, port, out = self.start_source(max_heaps=1, incomplete_heaps="deliver")
        words = np.arange(2 * WORDS, dtype=np.int32) + 1
        payload = words.tobytes()
        partial = qa.spead_packet(11, payload[:len(payload) // 2], heap_size=len(payload),
                                  items=[(0x1000, 0, False)])
        qa.send_datagrams(port, [partial, good_heap(12)])
        self.assertTrue(qa.wait_for(lambda: len(out.data()) >= 3 * WORDS))
        qa.stop_and_wait(self.tb)
        expected = np.concatenate([words[:WORDS], np.zeros(WORDS, dtype=np.int32),
                                   expected_words([12])])
        np.testing.assert_array_equal(np.asarray(out.data(), dtype=np.int32), expected)
        tags = qa.tags_by_offset(out.tags())
        self.assertEqual(tags[0], {"heap_cnt": 11, "heap_incomplete": len(payload) // 2})
        self.assertEqual(tags[2 * WORDS], {"heap_cnt": 12})
        self.assertEqual(rx.stats()["incomplete_heaps_delivered"], 1)


if __name__ == "__main__":
    gr_unittest.run(qa_hostile)
