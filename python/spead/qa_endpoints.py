#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Several endpoints, address ranges, and multicast (in a private network namespace)."""

import json
import os
import sys

import numpy as np
from gnuradio import blocks, gr, gr_unittest

import spead_qa_support as qa
from spead_qa_support import spead

HEAPS = 40
ITEMS = 2048


def run_pair(rx_endpoints, tx_endpoints, interface=""):
    """Sends HEAPS heaps from a sink to a source; returns (heap cnts received, payload
    ok, source stats, bound endpoints, sink stats). The source ignores stop heaps: with several
    destinations the first one would otherwise end it before the others' data."""
    # The whole burst (data, descriptors and stop heaps) fits in the heap queue: the
    # sender finishes in about a millisecond, and on a loaded machine the flowgraph may
    # not run for that long (a full queue drops heaps by design, counted).
    # Heaps to two ports arrive on two sockets, read a batch (64 packets, here about 20
    # heaps) from each in turn: max_heaps must cover the heaps one turn starts, or a
    # heap split across turns is pushed out of the window (incomplete_heaps_evicted).
    rx = spead.source(endpoints=rx_endpoints, interface=interface, item_type="int16",
                      stop_on_stop_heap=False, queue_heaps=2 * HEAPS, max_heaps=64)
    bound = rx.bound_endpoints()
    out = blocks.vector_sink_s()
    rx_tb = gr.top_block()
    rx_tb.connect(rx, out)
    data = np.tile(np.arange(ITEMS, dtype=np.int16), HEAPS)
    tx_tb = gr.top_block()
    src = blocks.vector_source_s(data.tolist(), False, 1, qa.packet_tags([ITEMS] * HEAPS))
    src.set_min_output_buffer(2 * ITEMS)
    tx = spead.sink(endpoints=tx_endpoints, interface=interface, item_type="int16",
                    rate_gbps=qa.TEST_RATE_GBPS)
    tx_tb.connect(src, tx)
    rx_tb.start()
    qa.run_to_completion(tx_tb)
    # the vector sink, not just the source, must have the last heap before stopping
    qa.wait_for(lambda: len(out.data()) >= HEAPS * ITEMS, timeout=10)
    qa.stop_and_wait(rx_tb)
    received = np.asarray(out.data(), dtype=np.int16)
    cnts = sorted(v["heap_cnt"] for v in qa.tags_by_offset(out.tags()).values())
    payload_ok = bool(np.array_equal(received, data[:len(received)]))
    return cnts, payload_ok, rx.stats(), bound, tx.stats()


def nonzero(rx_stats, tx_stats):
    """The counters that are not zero, for a failure message."""
    return {"rx": {k: v for k, v in rx_stats.items() if v},
            "tx": {k: v for k, v in tx_stats.items() if v}}


class qa_endpoints(gr_unittest.TestCase):

    def test_one_source_listens_on_several_ports(self):
        p1, p2 = qa.free_udp_port(), qa.free_udp_port()
        cnts, ok, stats, bound, tx_stats = run_pair(f"127.0.0.1:{p1},127.0.0.1:{p2}",
                                                    f"127.0.0.1:{p1},127.0.0.1:{p2}")
        self.assertEqual(sorted(bound), sorted([f"127.0.0.1:{p1}", f"127.0.0.1:{p2}"]))
        self.assertEqual(cnts, list(range(1, HEAPS + 1)), nonzero(stats, tx_stats))
        self.assertTrue(ok)
        self.assertEqual(stats["stop_heaps"], 2)  # one per destination

    def test_address_range_shares_one_socket(self):
        port = qa.free_udp_port()
        cnts, ok, stats, bound, tx_stats = run_pair(f"127.0.0.1+3:{port}",
                                                    f"127.0.0.1+3:{port}")
        self.assertEqual(bound, [f"0.0.0.0:{port}"])
        self.assertEqual(cnts, list(range(1, HEAPS + 1)), nonzero(stats, tx_stats))
        self.assertTrue(ok)
        self.assertEqual(stats["stop_heaps"], 4)

    def test_multicast_groups_in_a_network_namespace(self):
        if not qa.can_use_netns():
            self.skipTest("needs root and 'ip netns' to make a private network")
        with qa.NetNamespace() as ns:
            result = ns.run([sys.executable, "-B", os.path.abspath(__file__), "--child"],
                            capture_output=True, text=True, timeout=60, env=os.environ)
        self.assertEqual(result.returncode, 0, result.stderr[-3000:])
        report = json.loads(result.stdout.strip().splitlines()[-1])
        self.assertEqual(report["cnts"], list(range(1, HEAPS + 1)), report["stats"])
        self.assertTrue(report["payload_ok"])
        self.assertEqual(report["bound"], ["0.0.0.0:7148"])
        self.assertEqual(report["stop_heaps"], 2)


def child():
    """Runs inside the namespace: multicast groups 239.10.0.1 and .2 over lo."""
    cnts, ok, stats, bound, tx_stats = run_pair("239.10.0.1+1:7148", "239.10.0.1+1:7148",
                                                interface="lo")
    print(json.dumps({"cnts": cnts, "payload_ok": ok, "bound": bound,
                      "stop_heaps": stats["stop_heaps"],
                      "stats": nonzero(stats, tx_stats)}))


if __name__ == "__main__":
    if "--child" in sys.argv:
        child()
    else:
        gr_unittest.run(qa_endpoints)
