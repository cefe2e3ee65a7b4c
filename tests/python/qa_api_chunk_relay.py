#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The continuous mode's lossy relay test through the Python chunk API: spead_send ->
tests/tools/spead_relay.py (seeded whole-heap and packet drops, duplicates, reordering)
-> recv.ChunkRingStream with the declarative ChunkPlacement. From the relay's report
the test knows which positions must be absent; every other one must be present and
bit-exact (checked against the same stream recorded to a capture and read as heaps),
and every chunk must come out once, in order."""

import subprocess
import unittest

import numpy as np
from gnuradio import gr_unittest
from gnuradio.spead.qa_continuous import Relay  # the relay process of the block QA

import spead_qa_support as qa
from spead_qa_support import spead as spead2

TIMESTAMP_ITEM = 0x1600
HEAP_SIZE = 4096          # three packets at 1472 bytes
HEAPS = 240
HEAPS_PER_CHUNK = 8


app = qa.app_path


def send_args():
    # heap cnts: 1 descriptors, k + 2 data heap k, HEAPS + 2 the stop heap
    return ["--heap-size", str(HEAP_SIZE), "--heaps", str(HEAPS), "--verify",
            "--descriptors", "--timestamp-item", str(TIMESTAMP_ITEM), "--packet", "1472"]


@unittest.skipIf(not app("spead_send"), "spead_send not found (set GR_SPEAD_APPS_DIR)")
class qa_api_chunk_relay(qa.ApiTestCase):

    def expected_payloads(self):
        out = {ts // HEAP_SIZE: np.frombuffer(payload, np.uint8)
               for ts, payload in qa.spead_send_payloads(send_args(), TIMESTAMP_ITEM).items()}
        self.assertEqual(sorted(out), list(range(HEAPS)))
        return out

    def test_lossy_relay_positions_present_exactly_when_delivered(self):
        expected = self.expected_payloads()
        protect = {1, 2, HEAPS + 1, HEAPS + 2}  # descriptors, first, last, stop
        port = qa.free_udp_port()
        relay = Relay([port], seed=11, protect=protect)
        self.addCleanup(relay.kill)

        place = spead2.recv.ChunkPlacement(timestamp_item=TIMESTAMP_ITEM,
                                           timestamp_step=HEAP_SIZE, heap_size=HEAP_SIZE,
                                           heaps_per_chunk=HEAPS_PER_CHUNK)
        data_ring, free_ring = spead2.recv.ChunkRingbuffer(8), spead2.recv.ChunkRingbuffer(8)
        stream = spead2.recv.ChunkRingStream(
            # the relay reorders packets: place them in any order (spead2's default
            # refuses a packet that does not continue its heap)
            self.pool, spead2.recv.StreamConfig(max_heaps=16, allow_out_of_order=True),
            spead2.recv.ChunkStreamConfig(place=place, max_chunks=4), data_ring, free_ring)
        self.addCleanup(stream.stop)
        for _ in range(8):
            stream.add_free_chunk(place.make_chunk())
        stream.add_udp_reader(port, bind_hostname="127.0.0.1")
        sender = subprocess.Popen([app("spead_send"), *send_args(), "--rate", "0.05",
                                   f"127.0.0.1:{relay.port}"], stdout=subprocess.DEVNULL)
        self.addCleanup(qa.kill, sender)

        chunk_ids, present, data = [], {}, {}
        for chunk in data_ring:  # ends at the (protected) stop heap
            chunk_ids.append(chunk.chunk_id)
            for i in range(HEAPS_PER_CHUNK):
                position = chunk.chunk_id * HEAPS_PER_CHUNK + i
                present[position] = bool(chunk.present[i, 0])
                data[position] = chunk.data[i, 0].copy()
            stream.add_free_chunk(chunk)
        self.assertEqual(sender.wait(60), 0)
        report = relay.report()

        lost = set()
        for entry in report["heaps_dropped"] + report["heaps_lost_packets"]:
            lost.add(entry["timestamp"] // HEAP_SIZE)
        self.assertEqual(report["datagrams_dropped_by_kernel"], 0,
                         "the relay could not keep up: its report is incomplete")
        self.assertTrue(lost, "the relay dropped nothing: the test proves nothing")
        self.assertGreater(report["datagrams_duplicated"], 0)
        self.assertEqual(chunk_ids, list(range(HEAPS // HEAPS_PER_CHUNK)))
        for position in range(HEAPS):
            self.assertEqual(present[position], position not in lost, position)
            if present[position]:
                np.testing.assert_array_equal(data[position], expected[position],
                                              err_msg=f"position {position}")
        stats = stream.stats
        self.assertEqual(stats["too_old_heaps"], 0)
        self.assertEqual(stats["stop_heaps"], 1)


if __name__ == "__main__":
    gr_unittest.run(qa_api_chunk_relay)
