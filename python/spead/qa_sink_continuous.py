#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""spead.sink input_mode="continuous" -> real UDP on 127.0.0.1 -> a SPEAD parser here.

Asserts what goes on the wire: heap cnts, timestamps (start + k x step, and from an
rx_time tag), substream indices, payload bytes, the timestamp and substream in every
packet of a heap, the descriptors, and the wrap of a timestamp too wide for 64-40.
"""

import os
import socket
import struct
import sys
import tempfile
import threading

import numpy as np
import pmt
from gnuradio import blocks, gr_unittest

import spead_qa_support as qa
from spead_qa_support import spead

HEAP_ITEMS = 1024  # floats: 4096 bytes, three 1472-byte packets per heap
STOP = 2
ADDRESS_BITS = 40


def parse_packet(data):
    """(heap_cnt, heap_size, offset, immediates {id: value}, addressed [(id, address)],
    payload bytes) of one SPEAD-64-40 packet."""
    magic, version, item_bytes, address_bytes, _, n_items = struct.unpack(
        ">BBBBHH", data[:8])
    assert (magic, version, item_bytes, address_bytes) == (0x53, 4, 3, 5), data[:8]
    mask = (1 << ADDRESS_BITS) - 1
    specials = {}
    immediates = {}
    addressed = []
    for i in range(n_items):
        (p,) = struct.unpack(">Q", data[8 + 8 * i:16 + 8 * i])
        item_id = (p >> ADDRESS_BITS) & ((1 << 23) - 1)
        value = p & mask
        if item_id in (1, 2, 3, 4):
            specials[item_id] = value
        elif p >> 63:
            # A repeated pointer must repeat the same value.
            assert immediates.get(item_id, value) == value
            immediates[item_id] = value
        else:
            addressed.append((item_id, value))
    payload = data[8 + 8 * n_items:]
    assert len(payload) == specials[4]
    return specials[1], specials[2], specials[3], immediates, addressed, payload


class Heap:
    def __init__(self, cnt, size):
        self.cnt = cnt
        self.payload = bytearray(size)
        self.received = 0
        self.immediates = {}
        self.addressed = []
        self.packet_immediates = []  # each packet's immediates, in arrival order

    def add(self, packet):
        _, _, offset, immediates, addressed, payload = packet
        self.payload[offset:offset + len(payload)] = payload
        self.received += len(payload)
        self.immediates.update(immediates)
        self.addressed += addressed
        self.packet_immediates.append(immediates)

    def items(self, item_id):
        """The bytes of each addressed item with this id (items lie in address order)."""
        starts = sorted(set(a for _, a in self.addressed))
        out = []
        for i, a in sorted(set(self.addressed), key=lambda p: p[1]):
            if i == item_id:
                later = [s for s in starts if s > a]
                out.append(bytes(self.payload[a:later[0] if later else len(self.payload)]))
        return out

    def item(self, item_id):
        found = self.items(item_id)
        return found[0] if found else None


class Receiver:
    """Collects the heaps sent to one UDP port until a stop heap arrives."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(15.0)
        self.port = self.sock.getsockname()[1]
        self.heaps = {}
        self.order = []  # cnts in order of first packet
        self.stopped = False
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        try:
            while not self.stopped:
                packet = parse_packet(self.sock.recv(65536))
                cnt, size = packet[0], packet[1]
                if cnt not in self.heaps:
                    self.heaps[cnt] = Heap(cnt, size)
                    self.order.append(cnt)
                self.heaps[cnt].add(packet)
                if packet[3].get(0x06) == STOP:
                    self.stopped = True
        except socket.timeout:
            pass
        finally:
            self.sock.close()

    def join(self):
        self.thread.join(20.0)
        assert self.stopped, "no stop heap arrived"

    def data_heaps(self):
        """Heaps with the payload item, in the order they arrived."""
        return [self.heaps[c] for c in self.order
                if any(i == 0x1000 for i, _ in self.heaps[c].addressed)]

    def descriptor_names(self):
        """Names of the descriptors received (item 0x05 holds a SPEAD packet)."""
        names = set()
        for h in self.heaps.values():
            for encoded in h.items(0x05):
                _, _, _, imm, addressed, payload = parse_packet(encoded)
                d = Heap(0, len(payload))
                d.add((0, 0, 0, imm, addressed, payload))
                names.add((d.immediates[0x14], d.item(0x10).decode()))
        return names


def make_sink(ports, **kwargs):
    endpoints = ",".join(f"127.0.0.1:{p}" for p in ports)
    return spead.sink(endpoints=endpoints, item_type="float", input_mode="continuous",
                      heap_items=HEAP_ITEMS, rate_gbps=qa.TEST_RATE_GBPS,
                      len_tag_key="packet_len", **kwargs)


class qa_sink_continuous(qa.FlowgraphTestCase):

    seed = 10

    def samples(self, heaps):
        return self.rng.standard_normal(heaps * HEAP_ITEMS).astype(np.float32)

    def run_graph(self, sink, inputs, tags=()):
        for i, data in enumerate(inputs):
            src = blocks.vector_source_f(data.tolist(), False, 1, list(tags))
            self.tb.connect(src, (sink, i))
        qa.run_to_completion(self.tb)

    def assert_heaps(self, heaps, inputs, timestamps, substreams=None):
        """Payload, timestamp in every packet, complete heaps."""
        self.assertEqual(len(heaps), len(timestamps))
        for k, h in enumerate(heaps):
            self.assertEqual(h.received, len(h.payload))
            self.assertGreater(len(h.packet_immediates), 1)  # several packets
            for imm in h.packet_immediates:
                self.assertEqual(imm[0x1600], timestamps[k], (k, h.cnt))
                if substreams is not None:
                    self.assertEqual(imm[0x1601], substreams[k])
            self.assertEqual(h.item(0x1000), inputs[k].tobytes())

    def test_one_substream_timestamps_count_samples_from_the_start(self):
        rx = Receiver()
        data = self.samples(6)
        tx = make_sink([rx.port], start_timestamp=1000, heap_cnt_start=5,
                       heap_cnt_step=2)
        self.run_graph(tx, [data])
        rx.join()

        heaps = rx.data_heaps()
        self.assertEqual([h.cnt for h in heaps], [5 + 2 * j for j in range(6)])
        self.assert_heaps(heaps, np.split(data, 6),
                          [1000 + k * HEAP_ITEMS for k in range(6)])
        names = rx.descriptor_names()
        self.assertIn((0x1000, "payload"), names)
        self.assertIn((0x1600, "timestamp"), names)
        stats = tx.stats()
        self.assertEqual(stats["data_heaps"], 6)
        self.assertEqual(stats["timestamps_wrapped"], 0)

    def test_two_substreams_alternate_and_go_to_their_endpoints(self):
        rx = [Receiver(), Receiver()]
        inputs = [self.samples(4), self.samples(4)]
        tx = make_sink([r.port for r in rx], substreams=2, substream_item=0x1601,
                       timestamp_step=4096, descriptor_interval=3)
        self.run_graph(tx, inputs)
        for r in rx:
            r.join()

        for i, r in enumerate(rx):
            heaps = r.data_heaps()
            # All inputs advance together, input 0 first: cnts 1, 2 | 3, 4 | ...
            self.assertEqual([h.cnt for h in heaps], [1 + i + 2 * k for k in range(4)])
            self.assert_heaps(heaps, np.split(inputs[i], 4),
                              [k * 4096 for k in range(4)], substreams=[i] * 4)
            self.assertIn((0x1601, "substream"), r.descriptor_names())
            # At the start and after every 3 data heaps: 8 heaps -> 3 descriptor heaps.
            described = [h for h in r.heaps.values()
                         if any(i == 0x05 for i, _ in h.addressed)]
            self.assertEqual(len(described), 3)

    def test_rx_time_tag_rebases_timestamps_from_its_heap(self):
        rx = Receiver()
        data = self.samples(4)
        rx_time = pmt.make_tuple(pmt.from_uint64(105), pmt.from_double(0.25))
        tx = make_sink([rx.port], sample_rate=1e6, sync_time=100.0, start_timestamp=7)
        self.run_graph(tx, [data], [qa.tag(2 * HEAP_ITEMS, "rx_time", rx_time)])
        rx.join()

        self.assert_heaps(rx.data_heaps(), np.split(data, 4),
                          [7, 7 + HEAP_ITEMS, 5_250_000, 5_250_000 + HEAP_ITEMS])
        self.assertEqual(tx.stats()["rx_time_ignored"], 0)

    def test_timestamps_beyond_40_bits_wrap_are_counted_and_foreseen(self):
        rx = Receiver()
        data = self.samples(4)
        top = 1 << 40
        with tempfile.TemporaryFile() as log:
            # GNU Radio's console logger writes to stdout (or stderr): capture both
            # while the block is made, which is when it warns.
            sys.stdout.flush()
            saved = [os.dup(1), os.dup(2)]
            os.dup2(log.fileno(), 1)
            os.dup2(log.fileno(), 2)
            try:
                tx = make_sink([rx.port], start_timestamp=top - 2 * HEAP_ITEMS,
                               sample_rate=1.7e9)
            finally:
                for fd, copy in zip((1, 2), saved):
                    os.dup2(copy, fd)
                    os.close(copy)
            log.seek(0)
            warning = log.read().decode(errors="replace")
        self.assertIn("timestamps wrap every 10.8 minutes", warning)
        self.run_graph(tx, [data])
        rx.join()

        self.assert_heaps(rx.data_heaps(), np.split(data, 4),
                          [top - 2 * HEAP_ITEMS, top - HEAP_ITEMS, 0, HEAP_ITEMS])
        self.assertEqual(tx.stats()["timestamps_wrapped"], 2)

    def test_spead_source_reads_each_repeated_timestamp_once(self):
        # Repeated immediates are one item to a receiver: one tag per heap.
        data = self.samples(5)
        rx, port = qa.make_source(item_type="float", payload_item=0x1000)
        tx = make_sink([port], start_timestamp=3, substream_item=0x1601)
        out = blocks.vector_sink_f()
        self.tb.connect(rx, out)
        self.run_graph(tx, [data])

        self.assertEqual(np.asarray(out.data(), dtype=np.float32).tobytes(),
                         data.tobytes())
        for key, expected in [("timestamp", [3 + k * HEAP_ITEMS for k in range(5)]),
                              ("substream", [0] * 5)]:
            tags = [t for t in out.tags() if pmt.symbol_to_string(t.key) == key]
            self.assertEqual([t.offset for t in tags],
                             [k * HEAP_ITEMS for k in range(5)], key)
            self.assertEqual([pmt.to_uint64(t.value) for t in tags], expected, key)

    def test_bad_continuous_parameters_are_value_errors_naming_them(self):
        for kwargs, name in [({"heap_items": 0}, "heap_items"),
                             ({"substreams": 2}, "substream_item"),
                             ({"timestamp_item": 0x1000}, "timestamp_item"),
                             ({"input_mode": "timed"}, "input_mode")]:
            args = dict(item_type="float", input_mode="continuous",
                        heap_items=HEAP_ITEMS)
            args.update(kwargs)
            with self.assertRaises(ValueError) as e:
                spead.sink(**args)
            self.assertTrue(str(e.exception).startswith(name + ":"), str(e.exception))


if __name__ == "__main__":
    gr_unittest.run(qa_sink_continuous)
